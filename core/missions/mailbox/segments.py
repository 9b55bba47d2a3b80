"""Where the mailbox's lines are stored: segment files under ``.voicebox/mailbox/``, and
the bounds of a plain read over them (seed 004 §2; issue 18).

**Storage: segments.** The storage port only replaces whole files atomically, so appending to
one growing file would rewrite all of it on every post (O(n)). The log is therefore cut into
segments ``.voicebox/mailbox/<8-digit index>.jsonl``; reading them in index order gives the one
JSONL log. A post rewrites only the tail segment (old bytes + new lines, one atomic write);
when the tail would pass :data:`SEGMENT_BYTES` the new lines start the next segment instead.
Sealed segments are never written again. A post therefore costs O(:data:`SEGMENT_BYTES`) —
constant in the mailbox's length — and a crash leaves either the old tail or the new one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.missions.mailbox.line import MailboxLine
from core.paths import META_DIR, ProjectPath
from core.ports import ProjectFiles

MAILBOX_DIR = (META_DIR, "mailbox")
SEGMENT_BYTES = 64 * 1024
"""A post starts a new segment rather than grow the tail past this many bytes."""
MAX_SCAN_SEGMENTS = 32
"""A plain read looks at no more than this many segments per page."""
MAX_PAGE_BYTES = 4 << 20
"""A plain read stops adding letters once a page holds this many bytes of lines."""

_SEGMENT_NAME = re.compile(r"^(\d{8})\.jsonl$")


def segment_path(index: int) -> ProjectPath:
    """The path of segment ``index`` (``.voicebox/mailbox/00000003.jsonl``)."""
    return ProjectPath((*MAILBOX_DIR, f"{index:08d}.jsonl"))


@dataclass(frozen=True, slots=True)
class MailboxPage:
    """A page of a plain read: the lines found, where to continue (``None`` at the end), and
    how many unparseable lines the page stepped over."""

    lines: list[MailboxLine]
    next_cursor: str | None
    skipped: int


def _split_lines(data: bytes) -> list[bytes]:
    return [raw for raw in data.split(b"\n") if raw.strip()]


async def _segment_names(files: ProjectFiles) -> list[int]:
    """Segment indexes by name only (one storage call, no size per file), sorted."""
    folder = ProjectPath(MAILBOX_DIR)
    entry = await files.stat(folder)
    if entry is None or entry.kind != "dir":
        return []
    found = (_SEGMENT_NAME.match(name) for name in await files.names(MAILBOX_DIR))
    return sorted(int(match.group(1)) for match in found if match)
