"""A save over a file that changed since it was opened is refused (issue 33 item 2).

Two tabs (or two people) edit one file: the second tab's editor opened version A, the first
tab saved B, and the second tab saves C. Writing C would lose B in silence. So a save names
the version its editor opened — the sha256 of the bytes it read (``if_sha256``), or the empty
string when it began a file that did not exist — and the write is refused ``file-changed``
(409) when the file holds anything else now: other bytes, no file at all, or a file where
none was. Nothing is written; the page offers the person the choice (reload the file's
current bytes, overwrite them on purpose — a write without ``if_sha256`` — or save as
another name). A save that names no version is a plain write, as before.

The check and the write are one step: the host runs writes one at a time
(:mod:`core.host.pipeline`), so no other write can land between them.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from core.model import Contract
from core.paths import ProjectPath
from core.ports import ProjectFiles
from core.refusals import Code, Refused
from core.vocabulary import Sha256Hex

__all__ = ["ABSENT", "FileChanged", "require_opened_version"]

ABSENT = ""
"""The version of a file that did not exist when the editor began it."""


class FileChanged(Contract):
    """What the host tells every tab, unasked, after ``file.write`` (issue 33 item 2): the
    project, the path and its version now. A tab whose clean editor shows that path reloads
    it; one with unsaved text keeps it, and its next save meets ``file-changed``. Nothing but
    names and a hash: no bytes, no secret."""

    type: Literal["file.changed"] = "file.changed"
    project: str
    path: str
    sha256: Sha256Hex


async def require_opened_version(files: ProjectFiles, path: ProjectPath, opened: str) -> None:
    """Refuse ``file-changed`` (409, ``field="if_sha256"``) unless ``path`` in ``files`` holds
    exactly the version ``opened``: a lowercase sha256 hex of its bytes, or :data:`ABSENT`
    for no file. The sentence names the path and says what the person may do; it never holds
    the file's bytes."""
    stat = await files.stat(path)
    if stat is None:
        if opened == ABSENT:
            return
        raise Refused(
            Code.FILE_CHANGED,
            f"'{path}' was deleted or moved since you opened it; save it as a new file, "
            "or overwrite to write it back.",
            field="if_sha256",
        )
    if stat.kind == "dir":
        return  # the write itself refuses is-a-directory
    if opened == ABSENT:
        raise Refused(
            Code.FILE_CHANGED,
            f"'{path}' was created elsewhere since you began it; reload it, overwrite it, "
            "or save yours as another name.",
            field="if_sha256",
        )
    current = hashlib.sha256(await files.read(path)).hexdigest()
    if current != opened:
        raise Refused(
            Code.FILE_CHANGED,
            f"'{path}' changed since you opened it (saved from another tab or elsewhere); "
            "reload it, overwrite it, or save yours as another name.",
            field="if_sha256",
        )
