"""Names composed to NFC on the way in, and the one case that is refused (issue 33 item 4).

macOS writes many file names in Unicode NFD (``"cafe\\u0301.txt"``); the path rule stores only
NFC (:mod:`core.paths`, rule d). A new name that arrives NFD is composed
(:func:`core.paths.parse_new_path`) and the answer carries the spelling it was sent in, so the
page can say so. Composing may make it *collide*: the composed name is already taken in its
folder — by an entry of exactly that spelling, or by one spelt otherwise that composes alike
(an NFD name another program left in a picked folder). Writing there would land on a file
the person never named exactly, or make a second name that looks the same; so that write is
refused ``path-nfc-collision``, naming both, and nothing is written. Only the last segment is
checked: folders on the way that already exist in NFC are the same folders, and a write into
them is a write into them.

A name sent in NFC is never checked here (the common case costs nothing); ``keep_both`` writes
beside the taken name under a free one, which is not a collision.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from core.paths import ProjectPath
from core.ports import ProjectFiles
from core.refusals import Code, Refused

__all__ = ["refuse_twins", "twin_refusal"]


async def refuse_twins(
    files: ProjectFiles, path: ProjectPath, sent: str | None, *, field: str = "path"
) -> None:
    """Refuse ``path-nfc-collision`` when ``path`` was composed from ``sent`` (``None``: sent
    in NFC, nothing to check) and its name is already taken in its folder, in that spelling
    or another that composes alike. Storage refusals of the listing pass through, except a
    missing folder (nothing there can collide)."""
    if sent is None:
        return
    try:
        siblings = await files.names(path.parent)
    except Refused as exc:
        if exc.code in (Code.FILE_NOT_FOUND, Code.NOT_A_DIRECTORY):
            return
        raise
    refusal = twin_refusal(path, siblings, field=field)
    if refusal is not None:
        raise refusal


def twin_refusal(
    path: ProjectPath, siblings: Iterable[str], *, field: str = "path"
) -> Refused | None:
    """The ``path-nfc-collision`` refusal when a name among ``siblings`` (the names in
    ``path``'s folder) composes to ``path``'s name, else ``None`` (the check of
    :func:`refuse_twins`, for a caller that has the names already: a batch of writes, issue
    34)."""
    taken = [n for n in siblings if unicodedata.normalize("NFC", n) == path.name]
    if not taken:
        return None
    return Refused(
        Code.PATH_NFC_COLLISION,
        f"'{path.name}' (the name as sent, composed to Unicode NFC) is already taken in "
        f"its folder by '{taken[0]}': two names that look the same cannot both be kept. "
        "Choose another name, or keep both.",
        field=field,
    )
