"""``python -m worker.sitebuild [--out dist] [--cache .cache/wheels]``: build the site."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from worker.sitebuild.site import build_site
from worker.sitebuild.wheels import BuildError


def main(argv: list[str] | None = None) -> int:
    """Build ``dist/``; print a JSON summary; exit 1 with the cause on failure."""
    parser = argparse.ArgumentParser(prog="python -m worker.sitebuild")
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=None)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    started = time.monotonic()
    try:
        summary = build_site(
            root, args.out or root / "dist", args.cache or root / ".cache" / "wheels"
        )
    except BuildError as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    summary["seconds"] = round(time.monotonic() - started, 2)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
