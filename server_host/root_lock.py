"""One process acts on an environment root at a time (issue 29 item 10).

Two ``voicebox-env serve`` on one root both ran: each took over the admin socket in turn, so
``voicebox-env revoke`` reached only the last one, and the other kept its channels open with a
revoked bearer. Now ``serve`` holds an exclusive lock on HOST_DIR ``serve.lock`` for its whole
life (``fcntl.flock``: the kernel drops it when the process ends, however it ends — no stale
lock after a crash or ``kill -9``), with its pid and what it does written in the file. A
second ``serve`` refuses to start, naming the first one's pid.

``pair-code`` and ``revoke`` talk to the running server through its admin socket; when none
answers they act on disk **holding the same lock** for the moment they write (a server cannot
start in the middle, and two on-disk acts do not interleave). A ``serve`` that finds the lock
held by such a short act waits for it (at most :data:`WAIT_S`); held by another ``serve``, it
refuses at once. ``policy`` needs no lock: it replaces ``commands.json`` / ``policy.json``
whole, and the server reads them afresh on every call.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LOCK_FILE", "WAIT_S", "RootBusy", "RootLock", "holder_of", "lock_root"]

LOCK_FILE = "serve.lock"
WAIT_S = 5.0
"""How long one waits for a short on-disk act (``pair-code``, ``revoke``) to release the lock."""


class RootBusy(Exception):
    """The root is locked by another process: its pid and what it does (``serve``, ``revoke``,
    ``pair-code``), as written in the lock file (``pid`` 0 when unreadable)."""

    def __init__(self, pid: int, role: str) -> None:
        super().__init__(f"pid {pid} ({role})")
        self.pid = pid
        self.role = role


@dataclass
class RootLock:
    """A held lock; :meth:`release` (or the process's end) frees it."""

    fd: int
    path: Path

    def release(self) -> None:
        """Free the lock (the file stays: removing it would race with the next locker)."""
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            os.close(self.fd)
            self.fd = -1


def holder_of(path: Path) -> tuple[int, str]:
    """``(pid, role)`` written in the lock file at ``path``; ``(0, "unknown")`` when it says
    nothing readable."""
    try:
        pid, role = path.read_text(encoding="ascii").split()[:2]
        return int(pid), role
    except (OSError, ValueError):
        return 0, "unknown"


def lock_root(host_dir: Path, role: str, *, wait_s: float = 0.0) -> RootLock:
    """Take the exclusive lock of the root whose HOST_DIR is ``host_dir`` for ``role``
    (``serve``, ``revoke``, ``pair-code``), writing ``"<pid> <role>"`` in it. While another
    process holds it: wait up to ``wait_s`` seconds, only while that holder is not a
    ``serve`` (a server never lets go), then raise :class:`RootBusy` naming the holder.
    The descriptor is close-on-exec: no child of the server inherits the lock."""
    path = host_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            pid, holder = holder_of(path)
            if holder == "serve" or time.monotonic() >= deadline:
                os.close(fd)
                raise RootBusy(pid, holder) from None
            time.sleep(0.05)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {role}\n".encode("ascii"), 0)
    return RootLock(fd, path)
