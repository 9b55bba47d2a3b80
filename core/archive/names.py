"""The file name an archive is saved under (SPEC §10; issue 34). A module of its own, importing
nothing heavy, so that ``file.walk`` (imported at boot) can name the download before the archive
exists: the streamed download (docs/archives.md §4, "Where the bytes go") must send the name
with its first byte, long before ``project.export`` answers with its summary.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

__all__ = ["archive_filename", "download_filename"]


def download_filename(name: str) -> str:
    """A safe download file name for a project called ``name``: characters no file system
    accepts, and control characters, become ``_``; at most 100 characters, then ``.zip``."""
    safe = "".join(
        "_" if ch in '/\\:*?"<>|' or unicodedata.category(ch) == "Cc" else ch for ch in name
    )
    safe = safe.strip(" .")[:100] or "project"
    return f"{safe}.zip"


def archive_filename(project_name: str, folder: Sequence[str] = ()) -> str:
    """The name the archive of project ``project_name`` — or of its ``folder`` (path segments;
    empty: the whole project) — is saved under: ``"<project>.zip"`` or
    ``"<project> - <folder's last segment>.zip"``, made safe by :func:`download_filename`.
    The one place both ``project.export``'s summary and ``file.walk`` take it from."""
    return download_filename(f"{project_name} - {folder[-1]}" if folder else project_name)
