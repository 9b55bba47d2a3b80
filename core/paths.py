"""The one name rule: what a file path and a display name may be (SPEC §3, §7, §11).

Every file operation, archive import and tool write names its target with a
:class:`ProjectPath`, built only by :func:`parse_path`; every project and environment display
name passes :func:`check_name`. Both share one character rule, and a path segment adds the
file-system part. A name is either refused by name (a code and a sentence saying which rule)
or stored exactly as given and shown as exactly those characters — never silently rewritten
(no case folding, no trimming). The one change is rule d's: a *new* name (a file written, a
folder made, a move's target) that arrives in Unicode NFD is composed to NFC on the way in
(:func:`parse_new_path`; issue 33 item 4), and the answer says so.

**Characters (paths and display names alike):**

a. valid Unicode text: no lone surrogate (a browser would store U+FFFD instead — a
   different name);
b. no NUL, C0/C1 control character or DEL (Chromium's OPFS truncates a name at NUL, so
   ``"a\\x00b"`` would silently be the file ``"a"``);
c. no bidirectional formatting control (U+202A–U+202E, U+2066–U+2069): ``"evil\\u202etxt.exe"``
   would *display* as ``"evilexe.txt"`` (Trojan Source, CVE-2021-42574);
d. in Unicode NFC: ``"caf\\u00e9"`` (NFC) and ``"cafe\\u0301"`` (NFD) look identical but OPFS
   keeps them as two files, and macOS folders treat them as one — so only the NFC spelling is
   stored, and a name never has a twin that looks the same. macOS writes many names in NFD
   (a file dragged from Finder): :func:`parse_new_path` composes a new name to NFC, and where
   that NFC name is already taken — by a file or folder of that spelling or of another one
   that composes alike — the write is refused ``path-nfc-collision`` instead of landing on it
   (:mod:`core.projects.composed`). A path naming an *existing* entry (read, delete, a move's
   source) is not recomposed: an NFD name a folder already holds is refused by name.

**A path** (``path-invalid``, ``path-outside-root``, ``path-reserved``), in order:

1. the text is a ``str`` of at most :data:`MAX_PATH_BYTES` UTF-8 bytes, not empty, at most
   :data:`MAX_DEPTH` segments;
2. it is not absolute: no leading ``/``, no leading ``\\``, no drive letter (``C:``) →
   ``path-outside-root``;
3. it is split on ``/``; a ``\\`` anywhere is refused (``path-invalid``) so a Windows
   separator can never smuggle a second meaning;
4. no segment is ``..`` (``path-outside-root``), ``.`` or empty (``path-invalid``);
5. every segment passes the character rule (a–d) and is at most :data:`MAX_SEGMENT_BYTES`
   UTF-8 bytes (``path-invalid``) — OPFS itself takes names of 1,000 bytes and more, but a
   picked folder, a zip extracted elsewhere and every common file system stop at 255;
6. no segment ends with ``.`` or a space (``path-invalid``): Windows drops them, so ``"a."``,
   ``"a "`` and ``"a"`` — three files in OPFS — would be one file there (``"..."`` too);
7. no segment is a Windows device name — ``CON``, ``PRN``, ``AUX``, ``NUL``, ``COM0``–``COM9``,
   ``LPT0``–``LPT9`` (and their superscript-digit forms), ``CONIN$``, ``CONOUT$``, in any case,
   with or without an extension (``nul.txt``) → ``path-reserved``: on Windows they open a
   device, not a file, so a project exported and unpacked there would lose them;
8. the first segment is not the project's metadata folder :data:`META_DIR` and no segment
   starts with the atomic-write prefix :data:`TEMP_PREFIX`, **in any letter case**
   (``path-reserved``) — unless the caller is the operation that owns the metadata
   (``allow_meta=True``). Both compare :func:`fold`-ed (NFC, then Unicode case folding):
   on a case-insensitive disk (macOS APFS, Windows NTFS — where picked folders live)
   ``.VOICEBOX/skeleton.json`` *is* the metadata's skeleton, and a write there would bypass
   the operations that own it. ``.voicebox`` is reserved only as the first segment
   (``docs/.voicebox/`` is an ordinary folder); the prefix in every segment.
9. a *new* name — a file written that is not there yet, a folder made, a move's target, an
   uploaded file — holds none of ``< > : " | ? *`` (``path-invalid``, the sentence names the
   character; :data:`WINDOWS_FORBIDDEN`): Windows refuses them in a file name, so a project
   exported and unpacked there would lose the file (issue 34 — rule 7 already kept ``CON``
   out for that reason). A name already there is not new: reading, listing, searching,
   saving over, deleting, moving away and exporting a file already so named work as before
   (:func:`parse_path` does not apply rule 9), and archive import keeps an archive's names as
   they are (an older export of this host may hold them).

What OPFS in Chromium 156 itself refuses (checked): only ``""``, ``"."``, ``".."`` and names
holding ``/`` or ``\\`` (``TypeError``) — all refused here first. Everything else OPFS takes,
including the names rules b, c, d, 6 and 7 refuse; those rules exist for the hazards listed,
not because storage would fail. Markup in an existing name, emoji and every script are
allowed and shown literally (a new name's ``<``, ``>`` and ``:*?"|`` are refused by rule 9).
Letter case is kept and not folded: ``"a"`` and ``"A"`` are two files in OPFS, where only
this host writes. A case-insensitive target is checked where one is written: in a picked folder
a new name that differs only in letter case from a sibling is refused ``path-case-collision``
(:mod:`core.projects.case_guard`); archive import checks the whole archive
(``core/archive/plan.py``).

**Names a folder already holds.** A picked folder (or an OPFS folder filled by other means)
may hold names this rule refuses — another program's ``.vbx-tmp-draft.md``, ``.VOICEBOX/``,
``CON``, an NFD name. Listings show them as they are (never hidden, never renamed, never
deleted: only this host's own temporaries are swept, :mod:`core.projects.temporaries`), and every
file operation on them is refused by name with the sentence saying why. Export skips and counts
them.

**A display name** (``name-invalid``): 1..``max_chars`` characters, not only whitespace, and
the character rule (a–d). Device names, dots and slashes are fine in a display name: it is
shown, never used as a file name (a project's folder is its generated id). A project name a
person gives also has no leading or trailing space and no ``/`` or ``\\``
(:func:`check_project_name`, issue 34): a separator would read as a path.

A path never reaches the host-state folder, because project storage is rooted at the project
and ``..`` never passes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from core.refusals import Code, Refused
from core.relayed_text import BIDI_CONTROLS  # rule c: the one list, shared with relayed text

__all__ = [
    "BIDI_CONTROLS",
    "MAX_NAME_CHARS",
    "MAX_PATH_BYTES",
    "MAX_SEGMENT_BYTES",
    "META_DIR",
    "PROJECT_NAME_REFUSED",
    "TEMP_PREFIX",
    "WINDOWS_FORBIDDEN",
    "PathParser",
    "ProjectPath",
    "check_name",
    "check_project_name",
    "fold",
    "parse_new_path",
    "parse_path",
    "refuse_windows_characters",
    "windows_character",
]

META_DIR = ".voicebox"
TEMP_PREFIX = ".vbx-tmp-"
MAX_SEGMENT_BYTES = 255
MAX_PATH_BYTES = 4096
MAX_NAME_CHARS = 200
"""The longest display name (a project's, an environment's), in characters."""
MAX_DEPTH = 64
WINDOWS_FORBIDDEN = frozenset('<>:"|?*')
"""Characters Windows refuses in a file name (besides ``/``, ``\\`` and controls, refused for
every name): a *new* name may not hold them (rule 9, issue 34)."""
WINDOWS_FORBIDDEN_SAID = '< > : " | ? *'
_SEPARATOR_SAID = (
    "which would read as a folder separator; a project name holds no slash and no backslash."
)
PROJECT_NAME_REFUSED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\s|\s$"), "The name begins or ends with a space; remove the space."),
    (re.compile("/"), f"The name holds '/', {_SEPARATOR_SAID}"),
    (re.compile(r"\\"), f"The name holds '\\', {_SEPARATOR_SAID}"),
    (
        re.compile(r"[\u202a-\u202e\u2066-\u2069]"),  # BIDI_CONTROLS; said as check_name says it
        "The name holds a bidirectional control character (it would change how the name reads).",
    ),
)
"""The rules a project name a person gives keeps beyond :func:`check_name`, in the order
:func:`check_project_name` checks them: ``(pattern, sentence)`` — a name the pattern finds
(``search``) is refused ``name-invalid`` with the sentence. No outer space, and no ``/`` or
``\\``: a name with a separator reads as a path (in the title, the breadcrumb, the export's
file name); and the bidirectional controls :func:`check_name` refuses, listed here too so the
page says it as the name is typed (the field shows no such character; stop 42's tryout). A
name of only dots stays allowed: a display name is not a path
(``e2e/test_foundation.py::test_project_names_are_display_text_not_paths``). Each
pattern's text compiles the same as a JavaScript ``u`` regular expression.
The one statement of the rule: the host refuses by it and the page checks a name as it is
typed from it (``FORM_RULES`` ``refuse`` in :mod:`core.host.page_contract`, issue 34)."""
_DEVICE_STEMS = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{kind}{digit}" for kind in ("COM", "LPT") for digit in "0123456789\u00b9\u00b2\u00b3"}
)


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


def _text_problem(text: str) -> str | None:
    """The character rule (a–d of the module docstring): what is wrong with ``text``, or None."""
    if text.isascii():  # the common name, at once (issue 18, the read path): ASCII is valid
        # Unicode in NFC with no bidirectional control; its only control characters (Cc:
        # 0x00–0x1F, 0x7F) are exactly its characters str.isprintable() refuses
        return None if text.isprintable() else "holds a NUL or control character"
    return _any_text_problem(text)


def _any_text_problem(text: str) -> str | None:
    """:func:`_text_problem` for any text, character by character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode text"
    if any(_is_control(ch) for ch in text):
        return "holds a NUL or control character"
    if any(ch in BIDI_CONTROLS for ch in text):
        return "holds a bidirectional control character (it would change how the name reads)"
    if not unicodedata.is_normalized("NFC", text):
        return "is not in Unicode NFC form (send its composed spelling)"
    return None


def fold(text: str) -> str:
    """``text`` as a case-insensitive disk compares it: NFC, Unicode case folding, NFC again
    (``.VOICEBOX`` → ``.voicebox``, ``Straße`` → ``strasse``). Used for rule 8, for case
    collisions in a picked folder and in archive import — never to rename anything."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


_META_FOLDED = fold(META_DIR)
_TEMP_FOLDED = fold(TEMP_PREFIX)


def _is_device_name(seg: str) -> bool:
    return seg.split(".", 1)[0].rstrip(" ").upper() in _DEVICE_STEMS


def _check_segment(seg: str, *, what: str) -> None:
    """Refuse ``seg`` when it breaks a segment rule (module docstring). Many paths at once:
    :class:`PathParser` checks each distinct segment once (the import, the search)."""
    if seg == "":
        raise Refused(Code.PATH_INVALID, f"The {what} has an empty segment.")
    if seg == "..":
        raise Refused(
            Code.PATH_OUTSIDE_ROOT,
            f"The {what} holds '..' (a step up out of a folder), which a project path never "
            "does; name the file from the project's top folder instead.",
        )
    if seg == ".":
        raise Refused(Code.PATH_INVALID, f"The {what} has a '.' segment.")
    if "\\" in seg:
        raise Refused(Code.PATH_INVALID, f"The {what} holds a backslash.")
    problem = _text_problem(seg)
    if problem is not None:
        raise Refused(Code.PATH_INVALID, f"A name in the {what} {problem}.")
    if len(seg.encode("utf-8")) > MAX_SEGMENT_BYTES:
        raise Refused(
            Code.PATH_INVALID,
            f"A name in the {what} is too long: at most {MAX_SEGMENT_BYTES} bytes (about "
            f"{MAX_SEGMENT_BYTES} Latin letters, fewer in other scripts); shorten it.",
        )
    if seg.endswith((".", " ")):
        raise Refused(
            Code.PATH_INVALID,
            f"A name in the {what} ends with a dot or a space (Windows would drop it).",
        )
    if _is_device_name(seg):
        raise Refused(
            Code.PATH_RESERVED,
            f"A name in the {what} is a Windows device name ({seg[:16]!r}), which Windows "
            "cannot store; choose another name, e.g. with a letter added.",
        )


def _looks_like_drive(text: str) -> bool:
    return len(text) >= 2 and text[1] == ":" and text[0].isascii() and text[0].isalpha()


def _absolute_sentence(text: str) -> str:
    """Rule 2's sentence, naming what makes ``text`` absolute (issue 34: ``a:b.txt`` was told
    only "absolute", which says nothing about the colon)."""
    if _looks_like_drive(text):
        return (
            f"The path begins with '{text[:2]}', which Windows reads as a drive letter; paths "
            "are project-relative, and a name may not hold ':'."
        )
    return f"The path begins with '{text[0]}'; paths are project-relative."


def windows_character(text: str) -> str | None:
    """The first character of :data:`WINDOWS_FORBIDDEN` in ``text``, or None (rule 9)."""
    if text.isalnum():  # the common name at once
        return None
    return next((ch for ch in text if ch in WINDOWS_FORBIDDEN), None)


def refuse_windows_characters(path: ProjectPath, *, what: str = "path") -> None:
    """Rule 9 for a name being created: refuse ``path-invalid`` when a segment holds one of
    :data:`WINDOWS_FORBIDDEN`, with the sentence naming the character (issue 34)."""
    for seg in path.parts:
        ch = windows_character(seg)
        if ch is not None:
            raise Refused(
                Code.PATH_INVALID,
                f"A name in the {what} holds '{ch}'; Windows allows none of "
                f"{WINDOWS_FORBIDDEN_SAID} in a file name.",
                field="path",
            )


def parse_path(text: object, *, allow_meta: bool = False) -> ProjectPath:
    """Validate ``text`` as a project-relative path and return it as a :class:`ProjectPath`.

    Raises :class:`~core.refusals.Refused` with ``path-invalid``, ``path-outside-root`` or
    ``path-reserved`` (rules listed in the module docstring). ``allow_meta`` lets the one
    operation that owns ``.voicebox/`` (manifest, mailbox, skeleton) name paths inside it.
    """
    return _parsed(text, allow_meta, None)


class PathParser:
    """:func:`parse_path` for many paths at once (issue 34: an archive of 10,000 entries names
    the same folders again and again): the same rules, refusals and order, each distinct
    segment checked once per parser (``(text) -> ProjectPath``; ``allow_meta`` as
    :func:`parse_path`'s). Memory: the distinct segments seen."""

    def __init__(self, *, allow_meta: bool = False) -> None:
        self.allow_meta = allow_meta
        self._seen: tuple[set[str], set[str], set[str]] = (set(), set(), set())

    def parse(self, text: object) -> ProjectPath:
        """See :func:`parse_path` (same refusals)."""
        return _parsed(text, self.allow_meta, self._seen)


def _parsed(
    text: object, allow_meta: bool, seen: tuple[set[str], set[str], set[str]] | None
) -> ProjectPath:
    """The rules of :func:`parse_path` for ``text``, in their order; ``seen`` holds the
    segments that already passed the segment rule, the first-segment rule and the temporary
    rule (a :class:`PathParser`'s), else every segment is checked."""
    if not isinstance(text, str):
        raise Refused(Code.PATH_INVALID, "The path must be text.")
    if text == "":
        raise Refused(Code.PATH_INVALID, "The path is empty.")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise Refused(Code.PATH_INVALID, f"The path is longer than {MAX_PATH_BYTES} bytes.")
    if text.startswith(("/", "\\")) or _looks_like_drive(text):
        raise Refused(Code.PATH_OUTSIDE_ROOT, _absolute_sentence(text))
    valid, not_meta, not_temp = seen if seen is not None else (set(), set(), set())
    parts = tuple(text.split("/"))
    if len(parts) > MAX_DEPTH:
        raise Refused(Code.PATH_INVALID, f"The path is deeper than {MAX_DEPTH} folders.")
    for seg in parts:
        if seg not in valid:
            _check_segment(seg, what="path")
            valid.add(seg)
    # '..' is checked for every segment before the reserved-name rule, so an escape is always
    # named as an escape.
    if not allow_meta:
        if parts[0] not in not_meta:
            if fold(parts[0]) == _META_FOLDED:
                raise Refused(
                    Code.PATH_RESERVED,
                    f"'{META_DIR}/' (in any letter case) holds the project's metadata; only the "
                    "operations that own it may change it.",
                    field="path",
                )
            not_meta.add(parts[0])
        for seg in parts:
            if seg not in not_temp:
                if fold(seg).startswith(_TEMP_FOLDED):
                    raise Refused(
                        Code.PATH_RESERVED,
                        f"Names starting '{TEMP_PREFIX}' (in any letter case) are reserved for "
                        "the host's atomic writes: the file operations never create, open or "
                        "change one (one already there stays as it is).",
                    )
                not_temp.add(seg)
    return ProjectPath(parts)


def parse_new_path(text: object, *, windows_names: bool = True) -> tuple[ProjectPath, str | None]:
    """:func:`parse_path` for a name being created (a write, a new folder, a move's target):
    the text is first composed to Unicode NFC (issue 33 item 4 — macOS writes NFD names).

    Returns ``(path, sent)``: ``sent`` is the text as it arrived when composing changed it,
    else ``None``. Refuses as :func:`parse_path` (the composed text passes every other rule
    or is refused by it); a name taken in its composed form is refused by the operation
    (``path-nfc-collision``, :func:`core.projects.composed.refuse_twins`). The project's
    metadata is never named this way (``allow_meta`` is not offered). A new name also passes
    rule 9 (no ``< > : " | ? *``, :func:`refuse_windows_characters`) unless ``windows_names``
    is False — for ``file.write``, which checks rule 9 itself only when the file is not there
    yet (saving a file already so named stays possible).
    """
    if not isinstance(text, str) or text.isascii():
        path, sent = parse_path(text), None
    else:
        try:
            composed = unicodedata.normalize("NFC", text)
        except UnicodeError:  # pragma: no cover - normalize keeps lone surrogates; parse refuses
            composed = text
        path, sent = parse_path(composed), (None if composed == text else text)
    if windows_names:
        refuse_windows_characters(path)
    return path, sent


def check_name(text: object, *, max_chars: int = MAX_NAME_CHARS) -> str:
    """Validate a display name (project name, environment name) and return it unchanged.

    A name is 1..``max_chars`` characters, not only whitespace, and passes the character rule
    (valid Unicode, no control character, no bidirectional control, NFC). Anything else —
    markup, slashes, device names, emoji — is kept and always shown literally.
    Raises :class:`~core.refusals.Refused` ``name-invalid``.
    """
    if not isinstance(text, str) or not text.strip():
        raise Refused(Code.NAME_INVALID, "The name is empty.", field="name")
    if len(text) > max_chars:
        raise Refused(
            Code.NAME_INVALID, f"The name is longer than {max_chars} characters.", field="name"
        )
    problem = _text_problem(text)
    if problem is not None:
        raise Refused(Code.NAME_INVALID, f"The name {problem}.", field="name")
    return text


def check_project_name(text: object) -> str:
    """Validate a project name a person gives (``project.create``, ``project.rename``, the name
    typed for ``project.import``) and return it unchanged: :func:`check_name` (1..200
    characters, no control or bidirectional control, NFC), and no leading or trailing space,
    and no ``/`` or ``\\`` — a name with a separator reads as a path in the title, the
    breadcrumb and the export's file name (issue 34). These last rules are
    :data:`PROJECT_NAME_REFUSED`, which the page also checks as the name is typed. Markup and
    ``:*?"<>|`` stay allowed: a display name is shown as its characters, never used as a file
    name (the export makes its download name from it by its own rule). Never applied to a name
    already stored: a project named before this rule opens, lists, exports and imports as it
    is (its manifest is re-checked with :func:`check_name` only).
    Raises :class:`~core.refusals.Refused` ``name-invalid``.
    """
    name = check_name(text)
    for pattern, sentence in PROJECT_NAME_REFUSED:
        if pattern.search(name):
            raise Refused(Code.NAME_INVALID, sentence, field="name")
    return name
