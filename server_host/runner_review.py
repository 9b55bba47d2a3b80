"""Review and merge of a mission's branch on its environment (issue 30, review; seed 004 §6).

A runner commits the agent's change on the mission's branch ``vbx/<mission_id>`` in the
project's own repository (:mod:`server_host.worktrees`). Two bearer routes read and land it:

- ``missions/diff`` — the branch's change against its base (the merge base of the project's
  checked-out ``HEAD`` and the branch): each file changed with its ``+``/``−`` counts and a
  unified diff, bounded (:data:`MAX_PATCH_LINES` lines a file, :data:`MAX_PATCHED_FILES`
  files with a diff, :data:`MAX_FILES` files listed); a cut or binary diff says so.
- ``missions/merge`` — a person's gesture (the browser host's ``remote.merge``): merges the
  branch into the project's checked-out branch (fast-forward, or a merge commit with the fixed
  message :func:`merge_message`). Only a ``merge_wait`` or ``landed`` mission
  (``invalid_transition``); refused in SAFE mode (``read-only-mode``); a conflict refuses
  ``args-invalid`` listing the conflicting files, after ``git merge --abort`` and a check that
  ``HEAD`` and the tree are as before. Audited ``mission.merge``.

git runs as the server's own act, never configurable by what the agent or a fenced command
wrote: the project's ``.git`` must be a directory (a ``.git`` *file* could point anywhere) and
is named explicitly (``--git-dir``), hooks go to ``/dev/null``, no fsmonitor, no external diff
or textconv driver, and the whole of it runs in :func:`server_host.worktrees.git_fence` (the
project read-write, the environment's root hidden). No answer holds an absolute path.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from pydantic import Field

from core.missions.remote_runs import refuse_host_owned_changes
from core.model import Contract
from core.refusals import Code, Refused
from server_host.worktrees import GitFence, branch_of, git

__all__ = [
    "MAX_FILES",
    "MAX_PATCHED_FILES",
    "MAX_PATCH_LINES",
    "DiffBody",
    "MergeBody",
    "branch_diff",
    "merge_branch",
    "merge_message",
]

MAX_PATCH_LINES = 2_000
"""A file's unified diff is cut after this many lines (and says so)."""
MAX_PATCHED_FILES = 100
"""Files past this many are listed with their counts, without a diff."""
MAX_FILES = 1_000
"""Files past this many are not listed (the answer says how many there were)."""


class DiffBody(Contract):
    """``POST /api/environments/:key/missions/diff`` (bearer): a mission's branch change."""

    project: str = Field(max_length=64)
    mission_id: str = Field(alias="missionId", pattern=r"^msn_[0-9a-f]{12}$")


class MergeBody(Contract):
    """``POST /api/environments/:key/missions/merge`` (bearer; a person's gesture at the
    host): merge a mission's branch into the project's checked-out branch."""

    project: str = Field(max_length=64)
    mission_id: str = Field(alias="missionId", pattern=r"^msn_[0-9a-f]{12}$")


def merge_message(mission_id: str) -> str:
    """The fixed message of a merge commit: names the mission and its branch."""
    return f"Merge mission {mission_id} (branch {branch_of(mission_id)})"


def _git(folder: Path, fence: GitFence | None, *args: str) -> subprocess.CompletedProcess[str]:
    """git on the project at ``folder``, trusting nothing it holds (module docstring)."""
    gitdir = folder / ".git"
    if gitdir.is_symlink() or not gitdir.is_dir():
        raise Refused(
            Code.ARGS_INVALID,
            "This project's .git is not a folder of its own; its branch cannot be reviewed here.",
            field="project",
        )
    return git(
        folder,
        "-c",
        f"core.hooksPath={os.devnull}",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.pager=cat",
        f"--git-dir={gitdir}",
        f"--work-tree={folder}",
        *args,
        check=False,
        fence=fence,
    )


def _out(done: subprocess.CompletedProcess[str], what: str) -> str:
    if done.returncode != 0:
        raise Refused(Code.STORAGE_FAILED, f"git could not {what}.")
    return done.stdout


def _base(folder: Path, fence: GitFence | None, branch: str) -> str:
    known = _git(folder, fence, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
    if known.returncode != 0:
        raise Refused(
            Code.ARGS_INVALID,
            "That mission has no branch in this project (yet).",
            field="missionId",
        )
    return _out(_git(folder, fence, "merge-base", "HEAD", branch), "find the branch's base").strip()


_DIFF = ("diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color")


def branch_diff(folder: Path, fence: GitFence | None, mission_id: str) -> dict[str, Any]:
    """The branch ``vbx/<mission_id>``'s change against its base (module docstring):
    ``{branch, base, head, into, files: [{path, added, removed, binary, patch, cut}], more}``
    — ``base``/``head`` commit ids, ``into`` the checked-out branch (``None``: detached),
    ``added``/``removed`` line counts (``None`` for a binary file), ``patch`` the unified
    diff text (``None`` when not shown), ``cut`` the sentence saying why it is cut or absent
    (``None`` when whole), ``more`` files not listed. Refuses ``args-invalid`` (no branch, a
    ``.git`` that is not a folder), ``storage-failed``."""
    branch = branch_of(mission_id)
    base = _base(folder, fence, branch)
    head = _out(_git(folder, fence, "rev-parse", branch), "read the branch").strip()
    checked_out = _git(folder, fence, "symbolic-ref", "--quiet", "--short", "HEAD")
    into = checked_out.stdout.strip() if checked_out.returncode == 0 else None
    raw = _out(_git(folder, fence, *_DIFF, "--numstat", "-z", base, head), "list the change")
    records = [r for r in raw.split("\0") if r]
    files: list[dict[str, Any]] = []
    for n, record in enumerate(records[:MAX_FILES]):
        added, removed, path = record.split("\t", 2)
        binary = added == "-"
        entry: dict[str, Any] = {
            "path": path,
            "added": None if binary else int(added),
            "removed": None if binary else int(removed),
            "binary": binary,
            "patch": None,
            "cut": None,
        }
        if binary:
            entry["cut"] = "A binary file: no diff shown."
        elif n >= MAX_PATCHED_FILES:
            entry["cut"] = f"Only the first {MAX_PATCHED_FILES} files show a diff."
        else:
            try:
                done = _git(folder, fence, *_DIFF, base, head, "--", f":(literal){path}")
                lines = _out(done, "show the diff").splitlines(keepends=True)
            except UnicodeDecodeError:
                lines = None
                entry["cut"] = "Not UTF-8 text: no diff shown."
            if lines is not None:
                entry["patch"] = "".join(lines[:MAX_PATCH_LINES])
                if len(lines) > MAX_PATCH_LINES:
                    entry["cut"] = (
                        f"The diff is cut after {MAX_PATCH_LINES:,} of its {len(lines):,} lines."
                    )
        files.append(entry)
    return {
        "branch": branch,
        "base": base,
        "head": head,
        "into": into,
        "files": files,
        "more": max(0, len(records) - MAX_FILES),
    }


def _state(folder: Path, fence: GitFence | None) -> tuple[str, str]:
    head = _out(_git(folder, fence, "rev-parse", "HEAD"), "read HEAD").strip()
    tree = _out(
        _git(folder, fence, "status", "--porcelain=v1", "-z", "--untracked-files=no"),
        "read the tree",
    )
    return head, tree


def merge_branch(folder: Path, fence: GitFence | None, mission_id: str) -> dict[str, Any]:
    """Merge ``vbx/<mission_id>`` into the project's checked-out branch (module docstring):
    ``{branch, into, how, head}`` — ``how`` one of ``fast-forward``, ``merge-commit``,
    ``up-to-date``; ``head`` the new commit id. Refuses ``path-reserved`` when the branch
    changes the project's ``.voicebox/`` (:func:`core.missions.remote_runs.
    refuse_host_owned_changes`: a receipt lands only by import), ``args-invalid`` (no branch, no
    checked-out branch, a conflict — its files listed — with nothing changed),
    ``storage-failed`` (git failed; the merge aborted)."""
    branch = branch_of(mission_id)
    base = _base(folder, fence, branch)
    listed = _git(folder, fence, *_DIFF, "--name-only", "-z", base, branch)
    changed = _out(listed, "list the change")
    refuse_host_owned_changes([p for p in changed.split("\0") if p], branch)
    into = _git(folder, fence, "symbolic-ref", "--quiet", "--short", "HEAD")
    if into.returncode != 0:
        raise Refused(
            Code.ARGS_INVALID,
            "The project has no branch checked out (a detached HEAD): check one out first.",
            field="project",
        )
    before = _state(folder, fence)
    ff = _git(folder, fence, "merge-base", "--is-ancestor", "HEAD", branch).returncode == 0
    up = _git(folder, fence, "merge-base", "--is-ancestor", branch, "HEAD").returncode == 0
    how_to = ("--ff", "--no-edit", "--no-gpg-sign", "--no-verify-signatures", "--no-autostash")
    done = _git(folder, fence, "merge", *how_to, "-m", merge_message(mission_id), branch)
    if done.returncode != 0:
        unmerged = _git(folder, fence, "diff", "--name-only", "-z", "--diff-filter=U").stdout
        conflicts = [p for p in unmerged.split("\0") if p]
        _git(folder, fence, "merge", "--abort")
        after = _state(folder, fence)
        if after != before:
            raise Refused(
                Code.STORAGE_FAILED,
                "The merge failed and the project is not as it was; look at it before anything "
                "else.",
            )
        if conflicts:
            shown: list[str] = []
            for path in conflicts:  # the details' value is cut at 1,000 characters: keep JSON
                if len(json.dumps([*shown, path])) > 900:
                    break
                shown.append(path)
            raise Refused(
                Code.ARGS_INVALID,
                f"{branch} conflicts with {into.stdout.strip()} in: "
                + ", ".join(conflicts[:50])
                + (" …" if len(conflicts) > 50 else "")
                + ". Nothing was changed.",
                field="missionId",
                details={"conflicts": json.dumps(shown), "conflictCount": len(conflicts)},
                show_details=True,
            )
        raise Refused(
            Code.ARGS_INVALID,
            "git would not merge the branch (uncommitted or untracked files in the way?); "
            "nothing was changed.",
            field="missionId",
        )
    head = _out(_git(folder, fence, "rev-parse", "HEAD"), "read HEAD").strip()
    how = "up-to-date" if up else "fast-forward" if ff else "merge-commit"
    return {"branch": branch, "into": into.stdout.strip(), "how": how, "head": head}
