"""The process sandbox of the environment server (issue 29 item 7, the first wall).

A process the server starts for a caller (a fenced command today; an agent or a gate of a
future runner tomorrow) runs inside a :class:`Fence`: it sees the machine's system
**read-only**, the folders it works in **read-write**, fresh private ``tmpfs`` scratch folders
(``/tmp``, its ``HOME``), and **nothing at all** of the paths the fence hides — the
environment's whole root (HOST_DIR, the other projects, the server's runtime files), the
users' homes, ``/run``, ``/var/tmp``. No network unless the fence asks for it, no other
process (a pid namespace of its own: when its first process dies, or the server does,
everything it started dies too, whatever session it started), no capability, no new user
namespace.

The one implementation is Debian's bubblewrap (``bwrap``, Linux user namespaces;
docs/PLATFORM.md "Sandboxing processes on the environment server"). Where it is missing or
cannot run (macOS, a kernel without unprivileged user namespaces), :func:`detect` answers
:class:`Unavailable` and every spawn is refused ``sandbox-unavailable`` (503) naming why —
unless the operator explicitly opted out (``voicebox-env serve --exec-unsandboxed``):
:class:`NoSandbox`, whose processes run with the server's user and its full reach.

The API is small on purpose, for every caller that spawns:

- :class:`Fence` — what the process sees (writable folders, hidden paths, scratch, network);
- :func:`detect` — the sandbox this machine offers, chosen once when the server starts;
- :func:`spawn` — argv + fence + cwd + env → a running :class:`asyncio.subprocess.Process`
  (stdin closed, stdout and stderr one pipe, its own session); the caller owns the limits
  (time, output: :func:`server_host.commands.run_argv`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from core.refusals import Code, Refused

__all__ = [
    "PRIVATE_SYSTEM_PATHS",
    "Bubblewrap",
    "Fence",
    "NoSandbox",
    "ProcessSandbox",
    "Unavailable",
    "detect",
    "spawn",
]

PRIVATE_SYSTEM_PATHS = ("/home", "/root", "/run", "/var/tmp")
"""Folders of the machine no fenced process sees (each an empty read-only tmpfs): the users'
homes (other environments' roots usually live there, and the operator's keys), ``/run``
(sockets of the machine's services, which a read-only mount does not stop) and the shared
temporary folders. ``/tmp`` is given fresh and private instead (:attr:`Fence.scratch`)."""
HIDDEN_TMPFS_BYTES = 64 << 10
"""Size of a hidden path's tmpfs (read-only to the process; only mount points live there)."""
SCRATCH_TMPFS_BYTES = 256 << 20
"""Default size of each scratch tmpfs (it is memory): a process that fills it gets ENOSPC."""
PROBE_S = 10
_HIDE, _SCRATCH, _BIND = 0, 1, 2  # the kinds of mount, in the order they go at one depth


@dataclass(frozen=True, slots=True)
class Fence:
    """What a sandboxed process sees (absolute paths; symlinks resolved when mounted).

    - ``writable``: folders bound read-write at their own path (a project folder, a runner's
      git worktree);
    - ``hidden``: folders or files replaced by nothing — an empty read-only tmpfs over a
      folder; ``/dev/null`` bound over a file (opening it there is refused: ``EACCES``) —
      wherever they are (``/tmp``, a home, ``/srv``); a ``writable`` or ``scratch`` path
      inside a hidden one is mounted back on top;
    - ``scratch``: fresh, private, writable tmpfs folders of ``scratch_bytes`` each, empty at
      every start and gone at the end (``/tmp``, the process's ``HOME``);
    - ``network``: ``False`` gives the process a network namespace of its own with only a
      loopback (nothing of the machine's, nothing of the server's ports); ``True`` shares the
      machine's (a runner's agent talking to its model provider).

    Everything else of the machine is visible read-only, as the server's user could read it.
    """

    writable: tuple[Path, ...]
    hidden: tuple[Path, ...] = ()
    scratch: tuple[Path, ...] = (Path("/tmp"),)
    network: bool = False
    scratch_bytes: int = SCRATCH_TMPFS_BYTES
    system_private: tuple[str, ...] = field(default=PRIVATE_SYSTEM_PATHS)


class ProcessSandbox(Protocol):
    """A way to run a process inside a :class:`Fence`; ``name`` goes into the audit
    (``bubblewrap``, ``none``)."""

    @property
    def name(self) -> str:
        """What the audit calls this sandbox."""
        ...

    def command(self, argv: Sequence[str], fence: Fence, cwd: Path) -> list[str]:
        """The argv that runs ``argv`` in ``cwd`` inside ``fence``; refuses
        ``sandbox-unavailable`` when this sandbox cannot run it."""
        ...


def _real(path: Path) -> Path | None:
    """``path`` with its symlinks resolved, or ``None`` when it does not exist."""
    try:
        return Path(os.path.realpath(path, strict=True))
    except OSError:
        return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@dataclass(frozen=True, slots=True)
class Bubblewrap:
    """bubblewrap at ``path`` (see the module docstring for what it gives)."""

    path: str
    name: str = "bubblewrap"

    def command(self, argv: Sequence[str], fence: Fence, cwd: Path) -> list[str]:
        """``bwrap`` with the fence's mounts, parents before children so that what a fence
        gives back (``writable``, ``scratch``) lies on top of what it hides."""
        hidden: list[Path] = []
        for raw in (*fence.hidden, *map(Path, fence.system_private)):
            real = _real(raw)
            if real is not None and real != Path("/"):
                hidden.append(real)
        # a hidden path inside another hidden one is already gone
        hidden = [h for h in hidden if not any(_inside(h, o) and h != o for o in hidden)]
        mounts = [(len(p.parts), _HIDE, p) for p in set(hidden)]
        scratch = {Path(os.path.realpath(p)) for p in fence.scratch}
        mounts += [(len(p.parts), _SCRATCH, p) for p in scratch]
        for folder in fence.writable:
            real = _real(folder)
            if real is None or not real.is_dir():
                raise Refused(Code.INTERNAL_ERROR, "A sandbox's writable folder is missing.")
            mounts.append((len(real.parts), _BIND, real))
        args = [self.path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for _, kind, path in sorted(mounts):  # parents first; at one depth: hide, scratch, bind
            where = str(path)
            if kind == _HIDE and not path.is_dir():
                args += ["--ro-bind", os.devnull, where]
            elif kind == _HIDE:
                args += ["--perms", "0555", "--size", str(HIDDEN_TMPFS_BYTES), "--tmpfs", where]
            elif kind == _SCRATCH:
                args += ["--size", str(fence.scratch_bytes), "--tmpfs", where]
            else:
                args += ["--bind", where, where]
        args += ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
        args += ["--die-with-parent", "--chdir", os.path.realpath(cwd)]
        if fence.network:
            args.append("--share-net")
        return [*args, "--", *argv]


@dataclass(frozen=True, slots=True)
class NoSandbox:
    """The operator's explicit opt-out (``serve --exec-unsandboxed``): the process runs with
    the server's user and its full reach — every file, the network, other processes."""

    name: str = "none"

    def command(self, argv: Sequence[str], fence: Fence, cwd: Path) -> list[str]:
        """``argv`` unchanged."""
        return list(argv)


@dataclass(frozen=True, slots=True)
class Unavailable:
    """No usable sandbox on this machine, and no opt-out: every spawn is refused."""

    reason: str
    name: str = "unavailable"

    def command(self, argv: Sequence[str], fence: Fence, cwd: Path) -> list[str]:
        """Refuses (:meth:`refusal`)."""
        raise self.refusal()

    def refusal(self) -> Refused:
        """``sandbox-unavailable`` (503) with the reason and the two ways out."""
        return Refused(
            Code.SANDBOX_UNAVAILABLE,
            f"Commands run only inside a process sandbox, and this server has none "
            f"({self.reason}). Its operator installs bubblewrap, or starts the server with "
            "--exec-unsandboxed to run them with the server's full reach.",
        )


def detect(*, opt_out: bool = False, path: str | None = None) -> ProcessSandbox:
    """The sandbox this machine offers, chosen once when the server starts: :class:`NoSandbox`
    when the operator opted out; else :class:`Bubblewrap` when ``bwrap`` is on ``path`` (the
    server's ``PATH``) and a probe — a real fence around ``true`` — exits 0; else
    :class:`Unavailable` saying why (not installed; the probe's first line of error)."""
    if opt_out:
        return NoSandbox()
    found = shutil.which("bwrap", path=path)
    if found is None:
        return Unavailable("bubblewrap (bwrap) is not installed")
    sandbox = Bubblewrap(found)
    fence = Fence(writable=(), scratch=(Path("/tmp"),))
    try:
        done = subprocess.run(
            sandbox.command(["true"], fence, Path("/")),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_S,
            check=False,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin"},
            cwd="/",
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Unavailable(f"bwrap could not run: {type(exc).__name__}")
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[0][:200] if lines else f"exit status {done.returncode}"
        return Unavailable(f"bwrap cannot run here: {why}")
    return sandbox


def _program(argv0: str, cwd: Path, env: dict[str, str]) -> None:
    """Raise ``FileNotFoundError`` / ``PermissionError`` as a plain start would, for a program
    that is not found or not executable (inside bwrap the failure would be only an exit
    status)."""
    if "/" in argv0:
        candidate = Path(cwd, argv0)
        if not candidate.is_file():
            raise FileNotFoundError(argv0)
        if not os.access(candidate, os.X_OK):
            raise PermissionError(argv0)
        return
    if shutil.which(argv0, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(argv0)


async def spawn(
    argv: Sequence[str],
    *,
    sandbox: ProcessSandbox,
    fence: Fence,
    cwd: Path,
    env: dict[str, str],
) -> asyncio.subprocess.Process:
    """Start ``argv`` in ``cwd`` inside ``fence`` with exactly ``env`` (nothing inherited),
    stdin ``/dev/null``, stdout and stderr one pipe (``process.stdout``), in a session of its
    own (kill its group with ``os.killpg(process.pid, …)``; in bubblewrap the whole pid
    namespace dies with it). Refuses ``sandbox-unavailable`` (:class:`Unavailable`); raises
    ``FileNotFoundError`` / ``PermissionError`` for a program not found or not executable."""
    command = sandbox.command(argv, fence, cwd)
    if not isinstance(sandbox, NoSandbox):
        _program(argv[0], cwd, env)
    return await asyncio.create_subprocess_exec(
        *command,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
