"""What the e2e journeys against a real ``voicebox-env serve`` + ``runner`` share (issue 30/31):
make a project a git repository with a first commit, and wait until every pinned runner has
announced itself live."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from e2e.test_remote import Rig
from server_host.worktrees import git


def first_commit(folder: Path, branch: str | None = None) -> None:
    """``git init`` ``folder`` (on ``branch`` when given) and commit everything in it."""
    git(folder, "init", "--quiet", *(("-b", branch) if branch else ()))
    git(folder, "add", "-A")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@x.invalid", "commit", "-qm", "1")


def wait_runners_live(rig: Rig, lines: list[str], bound_s: float = 30) -> None:
    """Poll the server's identity until every pinned runner is live; fails after ``bound_s``
    seconds with what the runner printed (``lines``)."""
    deadline = time.monotonic() + bound_s
    while not all(
        r["live"] for r in httpx.get(f"{rig.origin}/api/identity", timeout=5).json()["runners"]
    ):
        assert time.monotonic() < deadline, "".join(lines)
        time.sleep(0.05)
