"""The one path rule: what a project-relative path may be (SPEC §3, §7; seed 003 file admission).

Every file operation, archive import and tool write names its target with a
:class:`ProjectPath`, built only by :func:`parse_path`. The rule, in order:

1. the text is a ``str`` of at most :data:`MAX_PATH_BYTES` UTF-8 bytes, not empty;
2. it is not absolute: no leading ``/``, no leading ``\\``, no drive letter (``C:``) →
   ``path-outside-root``;
3. it is split on ``/``; a ``\\`` anywhere is refused (``path-invalid``) so a Windows
   separator can never smuggle a second meaning;
4. no segment is ``..`` (``path-outside-root``), ``.`` or empty (``path-invalid``);
5. no segment holds NUL, a C0/C1 control character or DEL, and no segment is longer than
   :data:`MAX_SEGMENT_BYTES` UTF-8 bytes (``path-invalid``);
6. the first segment is not the project's metadata folder :data:`META_DIR` and no segment
   starts with the atomic-write prefix :data:`TEMP_PREFIX` (``path-reserved``) — unless the
   caller is the operation that owns the metadata (``allow_meta=True``).

Unicode is otherwise allowed and kept exactly as given (no normalisation, no case folding):
the name a person typed is the name stored and shown. A path never reaches the host-state
folder, because project storage is rooted at the project and ``..`` never passes.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from core.refusals import Code, Refused

__all__ = [
    "MAX_PATH_BYTES",
    "MAX_SEGMENT_BYTES",
    "META_DIR",
    "TEMP_PREFIX",
    "ProjectPath",
    "check_name",
    "parse_path",
]

META_DIR = ".voicebox"
TEMP_PREFIX = ".vbx-tmp-"
MAX_SEGMENT_BYTES = 255
MAX_PATH_BYTES = 4096
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True, order=True)
class ProjectPath:
    """A validated path inside one project root: a non-empty tuple of segments.

    Build it with :func:`parse_path`; ``str(path)`` gives the ``/``-joined form.
    """

    parts: tuple[str, ...]

    def __str__(self) -> str:
        return "/".join(self.parts)

    @property
    def name(self) -> str:
        """The last segment."""
        return self.parts[-1]

    @property
    def parent(self) -> tuple[str, ...]:
        """The segments of the containing folder (empty for the project root)."""
        return self.parts[:-1]

    @property
    def is_meta(self) -> bool:
        """True when the path lies in the project's metadata folder."""
        return self.parts[0] == META_DIR

    def child(self, name: str) -> ProjectPath:
        """The path of ``name`` inside this folder (``name`` is checked as one segment)."""
        return parse_path(f"{self}/{name}", allow_meta=self.is_meta)


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc"


def _check_segment(seg: str, *, what: str) -> None:
    if seg == "":
        raise Refused(Code.PATH_INVALID, f"The {what} has an empty segment.")
    if seg == "..":
        raise Refused(Code.PATH_OUTSIDE_ROOT, f"The {what} climbs out of the project with '..'.")
    if seg == ".":
        raise Refused(Code.PATH_INVALID, f"The {what} has a '.' segment.")
    if any(_is_control(ch) for ch in seg):
        raise Refused(Code.PATH_INVALID, f"The {what} holds a NUL or control character.")
    if "\\" in seg:
        raise Refused(Code.PATH_INVALID, f"The {what} holds a backslash.")
    if len(seg.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES:
        raise Refused(
            Code.PATH_INVALID, f"A segment of the {what} is longer than {MAX_SEGMENT_BYTES} bytes."
        )
    try:
        seg.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(Code.PATH_INVALID, f"The {what} is not valid Unicode text.") from None


def _looks_like_drive(text: str) -> bool:
    return len(text) >= 2 and text[1] == ":" and text[0].isascii() and text[0].isalpha()


def parse_path(text: object, *, allow_meta: bool = False) -> ProjectPath:
    """Validate ``text`` as a project-relative path and return it as a :class:`ProjectPath`.

    Raises :class:`~core.refusals.Refused` with ``path-invalid``, ``path-outside-root`` or
    ``path-reserved`` (rules listed in the module docstring). ``allow_meta`` lets the one
    operation that owns ``.voicebox/`` (manifest, mailbox, skeleton) name paths inside it.
    """
    if not isinstance(text, str):
        raise Refused(Code.PATH_INVALID, "The path must be text.")
    if text == "":
        raise Refused(Code.PATH_INVALID, "The path is empty.")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise Refused(Code.PATH_INVALID, f"The path is longer than {MAX_PATH_BYTES} bytes.")
    if text.startswith(("/", "\\")) or _looks_like_drive(text):
        raise Refused(Code.PATH_OUTSIDE_ROOT, "The path is absolute; paths are project-relative.")
    parts = tuple(text.split("/"))
    if len(parts) > MAX_DEPTH:
        raise Refused(Code.PATH_INVALID, f"The path is deeper than {MAX_DEPTH} folders.")
    for seg in parts:
        _check_segment(seg, what="path")
    # '..' is checked for every segment before the reserved-name rule, so an escape is always
    # named as an escape.
    if not allow_meta:
        if parts[0] == META_DIR:
            raise Refused(
                Code.PATH_RESERVED, f"'{META_DIR}/' holds the project's metadata.", field="path"
            )
        if any(seg.startswith(TEMP_PREFIX) for seg in parts):
            raise Refused(Code.PATH_RESERVED, f"Names starting '{TEMP_PREFIX}' are reserved.")
    return ProjectPath(parts)


def check_name(text: object, *, max_chars: int = 200) -> str:
    """Validate a display name (project name, environment name) and return it unchanged.

    A name is 1..``max_chars`` characters, not only whitespace, with no control character.
    Anything else — markup, RTL overrides, emoji — is kept and always shown literally.
    Raises :class:`~core.refusals.Refused` ``name-invalid``.
    """
    if not isinstance(text, str) or not text.strip():
        raise Refused(Code.NAME_INVALID, "The name is empty.", field="name")
    if len(text) > max_chars:
        raise Refused(Code.NAME_INVALID, f"The name is longer than {max_chars} characters.")
    if any(_is_control(ch) for ch in text):
        raise Refused(Code.NAME_INVALID, "The name holds a control character.", field="name")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(Code.NAME_INVALID, "The name is not valid Unicode text.") from None
    return text
