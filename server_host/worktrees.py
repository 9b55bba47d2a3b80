"""One isolated git worktree per mission (seed 004 §5b, §5d; issue 30).

A mission's runner works only in a worktree of its own: branch ``vbx/<mission_id>``, created
from the project's ``HEAD`` under the root's runtime area ``DIR/worktrees/<mission_id>/`` —
outside every project folder, never inside one. The project must be a git repository with a
commit; else :func:`require_git_project` refuses with how to make one.

Where each worktree is lives **only** in the host-local side record HOST_DIR
``runner-worktrees.json`` (``{mission_id: {project, path, created_ms, touched_ms}}``, 0600,
written atomically; seed 004 §1f): never in a letter, an answer or the audit's public fields.

Cleanup (:meth:`Worktrees.remove`, :meth:`Worktrees.sweep`) removes a worktree (``git worktree
remove --force`` + prune) and **keeps its branch**; it removes only what the record says this
runner created, under ``DIR/worktrees/``, nothing else. One lock guards creation and cleanup, so
two missions never share a worktree and a sweep never races a creation.

git runs here as the runner's own act (not the agent's), with the scrubbed git environment of
fenced commands (no system or global git configuration, no prompt) and **in a sandbox of its
own** (:func:`git_fence`): a project's ``.git`` is writable by fenced ``exec`` and by nothing
else, so whatever may have been planted there (a hook, a filter driver, an fsmonitor) runs
inside a fence that sees only that project and the worktrees, never HOST_DIR.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.json_bound import parse_json
from core.refusals import Code, Refused
from server_host.commands import scrubbed_env
from server_host.disk import ensure_private_dir
from server_host.sandbox import Fence, NoSandbox, ProcessSandbox, Unavailable, detect

__all__ = [
    "DEFAULT_IDLE_S",
    "RECORD",
    "Worktree",
    "Worktrees",
    "branch_of",
    "git",
    "require_git_project",
    "worktree_area",
]

RECORD = "runner-worktrees.json"
DEFAULT_IDLE_S = 72 * 3600
"""A worktree idle past this is swept (72 h)."""
GIT_TIMEOUT_S = 60


def branch_of(mission_id: str) -> str:
    """The mission's branch: ``vbx/<mission_id>``."""
    return f"vbx/{mission_id}"


GitFence = tuple[ProcessSandbox, Fence]
"""A sandbox and the fence the runner's own git runs in (``None``: unsandboxed)."""


def git_fence(sandbox: ProcessSandbox, root: Path, writable: tuple[Path, ...]) -> GitFence | None:
    """The fence of the runner's own git: ``writable`` (the project's folder or its ``.git``,
    a worktree or the worktrees' area) read-write, the environment's ``root`` and the users'
    homes hidden, a private ``/tmp``, no network — so a hook, filter or fsmonitor that someone
    planted in a project's ``.git`` (fenced ``exec`` writes project folders) runs no further
    than that. ``None`` for :class:`~server_host.sandbox.NoSandbox`; refuses
    ``sandbox-unavailable`` for :class:`~server_host.sandbox.Unavailable`."""
    if isinstance(sandbox, NoSandbox):
        return None
    if isinstance(sandbox, Unavailable):
        raise sandbox.refusal()
    try:
        own: tuple[Path, ...] = (Path.home(),)
    except (RuntimeError, KeyError):
        own = ()
    return sandbox, Fence(writable=writable, hidden=(root, *own), scratch=(Path("/tmp"),))


def git(
    cwd: Path, *args: str, check: bool = True, fence: GitFence | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``git args`` in ``cwd`` with the scrubbed git environment (bounded by
    :data:`GIT_TIMEOUT_S`), inside ``fence`` when given (:func:`git_fence`); raises
    ``subprocess.CalledProcessError`` when ``check`` and it fails."""
    env = scrubbed_env(cwd, git=True) | {
        "GIT_AUTHOR_NAME": "voicebox runner",
        "GIT_AUTHOR_EMAIL": "runner@voicebox.invalid",
        "GIT_COMMITTER_NAME": "voicebox runner",
        "GIT_COMMITTER_EMAIL": "runner@voicebox.invalid",
    }
    argv = ["git", *args]
    if fence is not None:
        argv = fence[0].command(argv, fence[1], cwd)
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT_S,
        check=check,
        stdin=subprocess.DEVNULL,
    )


def require_git_project(folder: Path, fence: GitFence | None = None) -> None:
    """Refuse ``args-invalid`` unless ``folder`` is the top of a git repository with at least
    one commit, with a sentence that says how (``git init`` and a first commit; the fenced
    ``git/init`` command offers the first half). git runs in ``fence``."""
    how = (
        "A mission runs in a git worktree of its project, and this project is not a git "
        "repository with a commit: run git init in it (the environment's git/init command "
        "does) and make a first commit."
    )
    if not (folder / ".git").exists():
        raise Refused(Code.ARGS_INVALID, how, field="project")
    done = git(
        folder, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False, fence=fence
    )
    if done.returncode != 0:
        raise Refused(Code.ARGS_INVALID, how, field="project")


@dataclass(frozen=True, slots=True)
class Worktree:
    """A mission's worktree: its mission, project, folder and branch (host-local only), and
    its git admin folder inside the project's ``.git`` (``git_dir``), read when it was made —
    before any agent could touch the worktree's ``.git`` file."""

    mission_id: str
    project: str
    path: Path
    branch: str
    git_dir: Path | None = None
    sandbox: ProcessSandbox | None = None
    root: Path | None = None

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """git on this worktree as the runner's own act, trusting nothing the agent wrote: the
        admin folder recorded at creation (never the worktree's ``.git`` file, which the agent
        could point at a repository of its own making), no hooks, no fsmonitor."""
        if self.git_dir is None or self.sandbox is None or self.root is None:
            raise Refused(Code.INTERNAL_ERROR, "A worktree without its recorded git folder.")
        common = self.git_dir.parent.parent  # <project>/.git
        fence = git_fence(self.sandbox, self.root, (self.path, common))
        return git(
            self.path,
            "-c",
            f"core.hooksPath={os.devnull}",
            "-c",
            "core.fsmonitor=false",
            f"--git-dir={self.git_dir}",
            f"--work-tree={self.path}",
            *args,
            check=check,
            fence=fence,
        )


def worktree_area(root: Path) -> Path:
    """Where the runner makes the worktrees of ``root``'s missions: ``root/worktrees``."""
    return root / "worktrees"


class Worktrees:
    """The worktrees of one environment root ``root`` (module docstring)."""

    def __init__(self, root: Path, sandbox: ProcessSandbox | None = None) -> None:
        """``sandbox`` is what the runner's own git runs in (:func:`git_fence`; the machine's,
        :func:`~server_host.sandbox.detect`, when not given)."""
        self.root = root
        self.sandbox = sandbox if sandbox is not None else detect()
        self.area = worktree_area(root)
        self.record_path = root / "host" / RECORD
        self.lock = asyncio.Lock()

    # ---- the side record ----------------------------------------------------------------

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = parse_json(self.record_path.read_bytes(), what="The worktree record")
        except FileNotFoundError:
            return {}
        except Refused:
            return {}
        return data if isinstance(data, dict) else {}

    def _store(self, record: dict[str, dict[str, Any]]) -> None:
        tmp = self.record_path.with_name(f".{RECORD}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(record, out, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.record_path)

    def get(self, mission_id: str) -> Worktree | None:
        """The recorded worktree of ``mission_id``, or ``None``."""
        entry = self._load().get(mission_id)
        if entry is None:
            return None
        git_dir = Path(entry["git_dir"]) if entry.get("git_dir") else None
        return Worktree(
            mission_id,
            entry["project"],
            Path(entry["path"]),
            branch_of(mission_id),
            git_dir,
            self.sandbox,
            self.root,
        )

    async def touch(self, mission_id: str) -> None:
        """Mark the worktree as used now (the idle sweep counts from the last touch). Under the
        lock that guards creation and cleanup: the record is read, changed and written whole,
        so a touch beside a creation would otherwise write back a record without the new
        worktree (and both once wrote the same temporary file: the tryout's
        ``FileNotFoundError`` ending a run's task)."""
        async with self.lock:
            await asyncio.to_thread(self._touch, mission_id)

    def _touch(self, mission_id: str) -> None:
        record = self._load()
        if mission_id in record:
            record[mission_id]["touched_ms"] = int(time.time() * 1000)
            self._store(record)

    # ---- creation and cleanup ------------------------------------------------------------

    async def create(self, mission_id: str, project: str, folder: Path) -> Worktree:
        """A fresh worktree for ``mission_id`` of the project at ``folder`` (module docstring).
        Refuses ``args-invalid`` for a project that is not a git repository with a commit,
        ``already-exists`` when the mission already has one (one mission, one worktree)."""
        async with self.lock:
            return await asyncio.to_thread(self._create, mission_id, project, folder)

    def _fence(self, *writable: Path) -> GitFence | None:
        return git_fence(self.sandbox, self.root, writable)

    def _create(self, mission_id: str, project: str, folder: Path) -> Worktree:
        require_git_project(folder, self._fence(folder))
        record = self._load()
        path = self.area / mission_id
        if mission_id in record or path.exists():
            raise Refused(Code.ALREADY_EXISTS, "That mission already has a worktree.")
        ensure_private_dir(self.area)
        try:
            fence = self._fence(folder, self.area)
            branch = branch_of(mission_id)
            git(folder, "worktree", "add", "--quiet", "-b", branch, str(path), fence=fence)
            listed = git(path, "rev-parse", "--absolute-git-dir", fence=fence).stdout.strip()
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
            if path.exists():
                git(folder, "worktree", "remove", "--force", str(path), check=False, fence=fence)
            raise Refused(
                Code.STORAGE_FAILED,
                "git could not make the mission's worktree (is its branch taken already?).",
            ) from None
        git_dir = Path(listed)
        if folder.resolve() / ".git" not in git_dir.parents:
            raise Refused(
                Code.INTERNAL_ERROR, "The new worktree's git folder is not the project's."
            )
        now = int(time.time() * 1000)
        record[mission_id] = {
            "project": project,
            "path": str(path),
            "git_dir": str(git_dir),
            "created_ms": now,
            "touched_ms": now,
        }
        self._store(record)
        return Worktree(
            mission_id, project, path, branch_of(mission_id), git_dir, self.sandbox, self.root
        )

    async def remove(self, mission_id: str, folder: Path | None) -> bool:
        """Remove ``mission_id``'s worktree (its branch kept); ``folder`` is its project's
        folder (``None`` when the project is gone). True when one was removed."""
        async with self.lock:
            return await asyncio.to_thread(self._remove, mission_id, folder)

    def _remove(self, mission_id: str, folder: Path | None) -> bool:
        record = self._load()
        entry = record.get(mission_id)
        if entry is None:
            return False
        path = Path(entry["path"])
        ours = path.parent == self.area and path.name == mission_id
        project = folder is not None and folder.is_dir()
        fence = self._fence(folder, self.area) if folder is not None and project else None
        if ours and path.exists():
            if folder is not None and project:
                git(folder, "worktree", "remove", "--force", str(path), check=False, fence=fence)
            if path.exists():  # git refused or the project is gone: the folder we made
                shutil.rmtree(path, ignore_errors=True)
        if folder is not None and project:
            git(folder, "worktree", "prune", check=False, fence=fence)
        del record[mission_id]
        self._store(record)
        return ours

    async def sweep(
        self, folders: dict[str, Path], *, idle_s: int = DEFAULT_IDLE_S, now_ms: int | None = None
    ) -> list[str]:
        """Remove every recorded worktree idle past ``idle_s`` seconds; ``folders`` maps project
        ids to their folders. The mission ids removed."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        stale = [
            mid
            for mid, entry in self._load().items()
            if now - int(entry.get("touched_ms", 0)) > idle_s * 1000
        ]
        removed = []
        for mid in stale:
            entry = self._load().get(mid, {})
            if await self.remove(mid, folders.get(entry.get("project", ""))):
                removed.append(mid)
        return removed

    def status(self) -> list[dict[str, Any]]:
        """Each recorded worktree: mission, project, branch, bytes on disk, idle seconds."""
        rows = []
        now = int(time.time() * 1000)
        for mid, entry in sorted(self._load().items()):
            path = Path(entry["path"])
            size = 0
            if path.is_dir():
                for base, _dirs, files in os.walk(path):
                    for name in files:
                        with contextlib.suppress(OSError):
                            size += os.lstat(os.path.join(base, name)).st_size
            rows.append(
                {
                    "mission_id": mid,
                    "project": entry["project"],
                    "branch": branch_of(mid),
                    "path": str(path),
                    "bytes": size,
                    "idle_s": (now - int(entry.get("touched_ms", now))) // 1000,
                }
            )
        return rows
