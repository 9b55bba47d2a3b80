"""Running a project's Python in the second, sandboxed runtime: what goes in, what comes back,
and which of its changes the host may apply (issue 32).

The person's code never runs in the host's Pyodide (it holds every credential, and Pyodide is no
security boundary). It runs in a runtime of its own (:class:`core.ports.PythonRuntime`; in the
browser a worker with its own Pyodide inside the opaque-origin frame, ``docs/python.md``),
which holds nothing and reaches nothing: files are **brokered**, the plugin way
(docs/plugins.md):

1. **In** — :func:`choose_inputs`: the host copies the project's files into the runtime's
   in-memory filesystem, the project folder as the working directory. Bounded: at most
   :data:`MAX_INPUT_FILES` files and :data:`MAX_INPUT_BYTES` bytes in all, none over
   :data:`MAX_INPUT_FILE_BYTES`; what is left out is counted and said (:attr:`Inputs.note`),
   never silently dropped. ``.voicebox/`` is never copied (the walk does not show it) and a
   name the path rule refuses is not copied either.
2. **Out** — the runtime reports what its filesystem holds after the run (:class:`RunReport`:
   every path present, the bytes of each file it created or changed). :func:`change_list`
   turns that into created / modified / deleted against what was copied in; a file that was
   not copied in (left out by the limit) is never "deleted".
3. **Decided** — :func:`decide_change`: every change is a write request the host decides with
   the project path rule (:func:`core.paths.parse_path`: ``.voicebox/`` is ``path-reserved``,
   an escape ``path-outside-root``); at most :data:`MAX_CHANGES` changes and
   :data:`MAX_CHANGED_BYTES` bytes are applied (``file-too-large`` past that, each one
   listed). The host then applies each admitted change through ``file.write`` /
   ``file.delete`` (every gate, an audit record each, a ``local-write`` receipt each;
   :mod:`core.host.python_ops`) and the person sees the whole list.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from core.model import Contract
from core.paths import ProjectPath, parse_path
from core.refusals import Code, Refused
from core.tools.receipts import HostReceipt

__all__ = [
    "MAX_CHANGED_BYTES",
    "MAX_CHANGES",
    "MAX_INPUT_BYTES",
    "MAX_INPUT_FILES",
    "MAX_INPUT_FILE_BYTES",
    "MAX_OUTPUT_BYTES",
    "RUN_LIMIT_S",
    "AppliedChange",
    "Change",
    "Inputs",
    "RunJob",
    "RunReport",
    "change_list",
    "choose_inputs",
    "decide_change",
]

MAX_INPUT_FILES = 2000
"""At most this many of the project's files are copied into the runtime per run."""
MAX_INPUT_BYTES = 32 << 20
"""At most this many bytes (32 MiB) are copied in per run, all files together."""
MAX_INPUT_FILE_BYTES = 8 << 20
"""A file larger than this (8 MiB) is not copied in (and so never reported changed)."""
MAX_CHANGES = 500
"""At most this many changes of one run are applied; the rest are refused ``file-too-large``."""
MAX_CHANGED_BYTES = 32 << 20
"""At most this many bytes (32 MiB) of one run's created or modified files are written."""
MAX_OUTPUT_BYTES = 1 << 20
"""The runtime streams at most this much stdout + stderr (1 MiB) per run; the rest is counted
and dropped, so an output flood cannot fill the page or the host."""
RUN_LIMIT_S = 600
"""A run still going after this many seconds is ended by restarting the runtime."""


@dataclass(frozen=True, slots=True)
class Inputs:
    """What :func:`choose_inputs` copies in: ``paths`` (project-relative, sorted), their total
    ``size`` in bytes, how many files (``left_out``) and bytes (``left_out_bytes``) were not
    copied, and the sentence saying so (``None`` when everything was copied)."""

    paths: tuple[str, ...]
    size: int
    left_out: int = 0
    left_out_bytes: int = 0
    note: str | None = None


def choose_inputs(files: Sequence[tuple[str, int]], run: str | None = None) -> Inputs:
    """Choose which of the project's ``files`` (``(path, size)``, as ``file.walk`` lists them)
    are copied into the runtime, within the limits of the module docstring: first the file
    being run (``run``, a file run's path), then the files in its folder and below it, then
    the rest, each group in path order — so in a project over the limits the code that runs,
    and what sits beside it, is always there (issue 32: a run of ``t.py`` in a project of
    2,800 files left ``t.py`` itself out). ``paths`` are answered sorted.

    A path the path rule refuses (:func:`core.paths.parse_path`) is skipped without a word:
    the host cannot read it either. Everything else left out is counted in the note.
    """
    folder = run.rpartition("/")[0] + "/" if run and "/" in run else ""

    def rank(item: tuple[str, int]) -> tuple[int, str]:
        path = item[0]
        return (0 if path == run else 1 if path.startswith(folder) else 2, path)

    chosen: list[str] = []
    total = left = left_bytes = 0
    for path, size in sorted(files, key=rank):
        try:
            parse_path(path)
        except Refused:
            continue
        fits = (
            size <= MAX_INPUT_FILE_BYTES
            and len(chosen) < MAX_INPUT_FILES
            and total + size <= MAX_INPUT_BYTES
        )
        if fits:
            chosen.append(path)
            total += size
        else:
            left += 1
            left_bytes += size
    note = None
    if left:
        note = (
            f"{left} file(s) ({left_bytes} bytes) were not copied into the runtime: a run gets "
            f"at most {MAX_INPUT_FILES} files and {MAX_INPUT_BYTES >> 20} MiB, none over "
            f"{MAX_INPUT_FILE_BYTES >> 20} MiB. Your code cannot open them."
        )
    return Inputs(tuple(sorted(chosen)), total, left, left_bytes, note)


@dataclass(frozen=True, slots=True)
class RunJob:
    """One run: ``mode`` ``"file"`` runs project file ``path`` as ``__main__``; ``"eval"``
    runs ``code`` in the console's namespace (kept across inputs until a restart). ``files``
    are the copied inputs, ``(path, bytes)``. ``load``: wheel files of the runtime's offline
    set to install first, dependencies first (issue 32;
    :func:`core.tools.python_requirements.plan_loads`); the runtime installs each once, saying
    so in the run's output, and keeps it until it restarts."""

    mode: Literal["file", "eval"]
    files: Sequence[tuple[str, bytes]]
    path: str | None = None
    code: str | None = None
    load: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunReport:
    """What the runtime says after a run.

    ``exit_status``: the process-style status (0, 1 after an uncaught exception, a
    ``SystemExit`` code), ``None`` when the run did not end by itself (``stopped`` by the
    person, or ``timed_out`` at :data:`RUN_LIMIT_S`: the runtime was restarted). ``duration_ms``
    as the runtime measured it. ``present``: every file path under the project folder after the
    run — ``None`` when the runtime could not say (stopped, timed out, failed): then the run
    changed nothing; ``changed``: ``(path, bytes)`` of each file that differs from what was
    copied in or is new. ``output_dropped``: bytes of output past :data:`MAX_OUTPUT_BYTES`.
    """

    exit_status: int | None
    duration_ms: int
    present: Sequence[str] | None = None
    changed: Sequence[tuple[str, bytes]] = ()
    stopped: bool = False
    timed_out: bool = False
    output_dropped: int = 0


@dataclass(frozen=True, slots=True)
class Change:
    """One change a run made: ``action`` at ``path``; ``data`` the new bytes (``None`` for a
    deletion)."""

    path: str
    action: Literal["created", "modified", "deleted"]
    data: bytes | None = field(default=None, repr=False)


def change_list(given: Mapping[str, bytes], report: RunReport) -> list[Change]:
    """The runtime's changes against ``given`` (the files copied in, path → bytes), in path
    order: a changed path not given is ``created``; a given one whose bytes differ is
    ``modified`` (one whose bytes are the same is no change); a given path no longer
    ``present`` is ``deleted``. A path not given and not present — left out by the input
    limits — is never a change. A report with no ``present`` list (the runtime was stopped or
    failed before it could list its files) changes nothing: absence is never guessed."""
    if report.present is None:
        return []
    digests = {p: hashlib.sha256(b).digest() for p, b in given.items()}
    out: dict[str, Change] = {}
    for path, data in report.changed:
        before = digests.get(path)
        if before is None:
            out[path] = Change(path, "created", data)
        elif before != hashlib.sha256(data).digest():
            out[path] = Change(path, "modified", data)
    present = set(report.present) | {p for p, _ in report.changed}
    for path in given:
        if path not in present:
            out[path] = Change(path, "deleted")
    return [out[p] for p in sorted(out)]


def decide_change(change: Change, *, index: int, written_bytes: int) -> ProjectPath:
    """The project path ``change`` may be applied at, or the refusal: the path rule's codes
    (``path-reserved`` for ``.voicebox/``, ``path-outside-root``, ``path-invalid``), and
    ``file-too-large`` for the change numbered ``index`` (0-based) past :data:`MAX_CHANGES`
    or a write that would take the run past :data:`MAX_CHANGED_BYTES` (``written_bytes``:
    already written by this run)."""
    path = parse_path(change.path)
    if index >= MAX_CHANGES:
        raise Refused(
            Code.FILE_TOO_LARGE,
            f"A run applies at most {MAX_CHANGES} changes; this one was not applied.",
        )
    if change.data is not None and written_bytes + len(change.data) > MAX_CHANGED_BYTES:
        raise Refused(
            Code.FILE_TOO_LARGE,
            f"A run writes at most {MAX_CHANGED_BYTES >> 20} MiB; this file was not written.",
        )
    return path


class AppliedChange(Contract):
    """One change of a run as the person sees it: applied — a write with the host's
    ``local-write`` receipt (``receipt``: path, size, sha256, store version; ``op``
    ``python.run``), a deletion with the trash entry that holds the file — or refused (code
    and sentence)."""

    path: str = Field(max_length=5000)
    action: Literal["created", "modified", "deleted"]
    applied: bool
    size: int | None = None
    sha256: str | None = None
    store_version: int | None = None
    trash_id: str | None = None
    receipt: HostReceipt | None = None
    code: str | None = None
    message: str | None = None
