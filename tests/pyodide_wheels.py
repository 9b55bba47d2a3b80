"""Gather the wheels the in-Pyodide test run installs: ``python -m tests.pyodide_wheels``.

- the runtime wheels the site ships (``worker/wheels.lock.json``, sha256-checked) and our own
  wheel, built from this checkout;
- the test tools (pytest, hypothesis and their pure dependencies, and micropip), pinned with
  hashes in ``tests/pyodide-requirements.txt``.

Writes them to ``.cache/pyodide-tests/`` with ``wheels.json`` listing micropip first.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from worker.sitebuild.site import build_own_wheel
from worker.sitebuild.wheels import fetch_all, load_lock

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / ".cache" / "pyodide-tests"


def main() -> int:
    """Download, check and list the wheels (see module docstring)."""
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    lock = load_lock(ROOT)
    runtime = fetch_all(lock, ROOT / ".cache" / "wheels")
    for path in runtime.values():
        shutil.copy2(path, OUT / path.name)
    own = build_own_wheel(ROOT, OUT)
    pinned = ROOT / "tests" / "pyodide-requirements.txt"
    pip = "download -q --disable-pip-version-check --no-deps --only-binary=:all:"
    pip += " --python-version 3.14 --implementation py --abi none --platform any --require-hashes"
    subprocess.run(
        [sys.executable, "-m", "pip", *pip.split(), "-r", str(pinned), "-d", str(OUT)], check=True
    )
    wheels = sorted(p.name for p in OUT.glob("*.whl"))
    micropip = [w for w in wheels if w.startswith("micropip-")]
    others = [w for w in wheels if w not in micropip]
    (OUT / "wheels.json").write_text(
        json.dumps({"micropip": micropip[0], "install": others, "own": own.name}, indent=1)
    )
    print(f"{len(wheels)} wheels in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
