"""The demo agent: a small deterministic agent shipped so a person can watch a mission run
without any model service (issue 30, "One command to try it"; docs/runner.md, "Try it").

``python3 demo_agent.py PACKET_FILE`` — run by the runner in the mission's worktree (its cwd),
inside the sandbox, pinned by the ``runners.toml`` that ``--local-env`` writes
(:mod:`server_host.local_env`), which commits a copy of this file in the demo project (the
sandbox hides the operator's home, where this repository may be checked out). It reads the
packet, prints what it does a line at a time with
a short pause between lines (so the live log has something to show; about 3 s in all), then
makes a real change: it writes ``MISSION.md`` (the mission id and the packet's first heading
and size) and appends one line to ``README.md``. The demo project's gate (``check.py``,
``python3 check.py``) passes when ``MISSION.md`` names a mission, so the mission reaches
``merge_wait`` with a receipt candidate. Same packet, same change: it reads no clock, no
network and nothing outside the worktree.

Standard library only and nothing of this repository, so it runs in any sandbox. It is a
demonstration, not an agent: a real one is pinned the same way (docs/runner.md, examples).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

PAUSE_S = 0.6
"""Seconds between the lines it prints (a person watches the log stream)."""


def main(argv: list[str]) -> int:
    """Run once on the packet file ``argv[0]``; exit 0 after the change, 2 without a packet."""
    if not argv:
        print("usage: demo_agent.py PACKET_FILE", file=sys.stderr)
        return 2
    packet = Path(argv[0]).read_text(encoding="utf-8")
    found = re.search(r"msn_[0-9a-f]{12}", packet)
    mission = found.group(0) if found else "unknown"
    heading = next(
        (ln.lstrip("# ").strip() for ln in packet.splitlines() if ln.startswith("#")), ""
    )
    steps = [
        f"demo agent: mission {mission}",
        f"demo agent: read the packet ({len(packet)} characters, {len(packet.splitlines())} lines)",
        "demo agent: writing MISSION.md",
        "demo agent: adding a line to README.md",
    ]
    for line in steps:
        print(line, flush=True)
        time.sleep(PAUSE_S)
    Path("MISSION.md").write_text(
        f"# {mission}\n\nPacket: {heading or '(no heading)'}\n"
        f"Size: {len(packet)} characters\n\n"
        "Written by the demo agent (server_host/demo_agent.py).\n",
        encoding="utf-8",
    )
    with open("README.md", "a", encoding="utf-8") as out:
        out.write(f"\nThe demo agent ran mission {mission} here.\n")
    print("demo agent: done; the gate (python3 check.py) runs next", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
