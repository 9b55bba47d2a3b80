"""Search in files: what a query matches, in which files, within which bounds (issue 33 item 1).

The rule the ``file.search`` operation runs (:mod:`core.host.search_ops`); the page only shows
what it streams. Nothing here touches storage: :func:`search_text` takes a file's bytes.

**A query** (:class:`Query`) is a text and three switches, as in every editor:

- plain (default): the text as typed, letter case ignored (Unicode ``re.IGNORECASE``);
- ``case_sensitive``: letter case counts;
- ``whole_word``: a match must not have a word character (``\\w``) just before or after it;
- ``regex``: the text is a Python regular expression (:mod:`re` syntax), *guarded* below.

Zero-length matches (``^``, ``\\b``, ``x*``) are not results. A query is at most
:data:`MAX_QUERY_CHARS` characters.

**Files.** Every file of the project but its metadata folder ``.voicebox/``, in path order,
filtered by ``include`` and ``exclude`` globs (:func:`glob_matches`); a file larger than
:data:`MAX_FILE_BYTES` is skipped as *large*, one that holds a NUL byte or is not UTF-8 is
skipped as *binary* (both counted in the summary, never an error).

**Bounds.** At most ``max_matches`` matches in all (:data:`MAX_MATCHES`) and
:data:`MAX_MATCHES_PER_FILE` per file; the search stops at its time bound ``time_limit_ms``
(:data:`MAX_TIME_MS`) or when cancelled, and the summary says why it stopped
(``done`` / ``limit`` / ``time`` / ``cancelled``). A preview is the match's line, cut to
:data:`PREVIEW_CHARS` characters around the match.

**Regex safety: a bounded time per step.** Python's ``re`` backtracks, cannot be interrupted,
and Pyodide runs it on the host's only thread, so a catastrophic pattern (``(a+)+b``) would
hang the host for good. A time bound checked *between* steps only helps if each step is
bounded, so :func:`compile_query` proves a bound on every pattern before it runs:

1. refused outright (``args-invalid``, a sentence saying which construct): a back-reference or
   conditional (``\\1``, ``(?(1)…)``); a repeat (``*``, ``+``, ``{m,n}``, ``?``) of anything
   that can itself match in more than one way — a nested repeat or an alternation
   (``(a+)+``, ``(a|ab)*``): these are the exponential shapes;
2. what is left has a backtracking tree of at most ``ways × C(W + k, k)`` paths per start on
   ``W`` characters, ``ways`` being the product of its alternations' branch counts (at most
   :data:`MAX_WAYS`) and ``k`` its free repeats. :func:`compile_query` picks the largest
   *window* ``W`` (at most :data:`MAX_WINDOW`) for which ``W × ways × C(W + k, k)`` — the
   character tests of one window's search — stays under :data:`STEP_BUDGET`; a pattern for
   which even :data:`MIN_WINDOW` characters cost more is refused as too costly;
3. a pattern without free repeats (every plain and whole-word query) costs at most
   ``ways × width`` tests per start — linear — and searches a whole file at once. Any other
   searches each line on its own, a line longer than ``W`` in windows of ``W`` characters
   that overlap by half: a match up to ``W / 2`` characters long is always found, a longer
   one on a line longer than the window may not be (the summary's ``window`` says ``W``).

So one step — a file for a linear pattern, a window otherwise — costs at most
:data:`STEP_BUDGET` character tests (or, linear, its bounded file), and the deadline and the
cancel flag are checked between steps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any

from core.refusals import Code, Refused

# the parser's opcodes and parser: the guard reads the parsed pattern. typeshed declares
# neither private module (only the deprecated sre_constants/sre_parse aliases), so they are
# read as untyped values here, once.
sre: Any = getattr(re, "_constants")  # noqa: B009 - typeshed has no re._constants
sre_parse: Any = getattr(re, "_parser")  # noqa: B009 - typeshed has no re._parser

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_MATCHES",
    "MAX_MATCHES_PER_FILE",
    "MAX_QUERY_CHARS",
    "MAX_TIME_MS",
    "STEP_BUDGET",
    "FileHit",
    "Hit",
    "Matcher",
    "Query",
    "SearchCancels",
    "compile_query",
    "glob_matches",
    "path_selected",
    "search_text",
]

MAX_QUERY_CHARS = 500
MAX_GLOBS = 32
MAX_GLOB_CHARS = 200
MAX_FILE_BYTES = 4 * 1024 * 1024
"""A file larger than this (bytes) is skipped as large: search is for source and text."""
MAX_MATCHES = 5_000
"""The most matches one search may return (its ``max_matches`` is at most this)."""
MAX_MATCHES_PER_FILE = 200
MAX_TIME_MS = 60_000
"""The longest time bound a search may ask (ms); the page asks 10 s."""
PREVIEW_CHARS = 160
STEP_BUDGET = 1 << 24
"""The most character tests one step of a guarded pattern may cost (module docstring)."""
MAX_WINDOW = 4096
MIN_WINDOW = 32
MAX_WAYS = 256


@dataclass(frozen=True, slots=True)
class Query:
    """What to find: ``text`` and the switches (module docstring); ``include`` and
    ``exclude`` are glob lists (:func:`glob_matches`; an empty ``include`` takes every file)."""

    text: str
    case_sensitive: bool = False
    whole_word: bool = False
    regex: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Matcher:
    """A compiled, guarded query: ``pattern``; ``window`` is ``None`` for a linear pattern
    (searched a whole file at once), else the window in characters (module docstring)."""

    pattern: re.Pattern[str]
    window: int | None


@dataclass(frozen=True, slots=True)
class Hit:
    """One match: ``line`` (1-based), ``column`` and ``length`` in characters of that line
    (0-based column), ``preview`` (part of the line) and ``start``/``end``, where the match
    lies inside ``preview`` (characters)."""

    line: int
    column: int
    length: int
    preview: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class FileHit:
    """A file's matches (at most :data:`MAX_MATCHES_PER_FILE`; ``more`` when it had more)."""

    path: str
    hits: tuple[Hit, ...]
    more: bool = False


# ---- the query ------------------------------------------------------------------------------


def _refuse(sentence: str) -> Refused:
    return Refused(Code.ARGS_INVALID, sentence, field="query")


def compile_query(query: Query) -> Matcher:
    """The guarded :class:`Matcher` of ``query``. Refuses ``args-invalid`` (field ``query``)
    for an empty or too long text, a regular expression that does not compile, and one the
    guard refuses (module docstring, "Regex safety"), saying which construct."""
    if not query.text:
        raise _refuse("Type something to search for.")
    if len(query.text) > MAX_QUERY_CHARS:
        raise _refuse(f"The search text is longer than {MAX_QUERY_CHARS} characters.")
    source = query.text if query.regex else re.escape(query.text)
    if query.whole_word:
        source = rf"(?<!\w)(?:{source})(?!\w)"
    flags = re.MULTILINE | (0 if query.case_sensitive else re.IGNORECASE)
    try:
        parsed = sre_parse.parse(source, flags)
    except re.error as exc:
        raise _refuse(f"The regular expression does not compile: {exc.msg}.") from None
    ways, free = _shape(parsed.data, repeated=False)
    if ways > MAX_WAYS:
        raise _refuse(
            f"The regular expression has too many alternatives together (more than {MAX_WAYS} "
            "ways to match); split it into simpler searches."
        )
    window = None if free == 0 else _window(ways, free)
    return Matcher(_compile_guarded(source, flags), window)


def _compile_guarded(source: str, flags: int) -> re.Pattern[str]:
    """The one place a person's pattern is compiled, after :func:`_shape` bounded its cost
    (tests/core/linear_patterns.py names this exception to the linear-pattern law)."""
    guarded = source
    return re.compile(guarded, flags)


def _window(ways: int, free: int) -> int:
    """The largest window ``W`` ≤ :data:`MAX_WINDOW` whose search costs at most
    :data:`STEP_BUDGET` tests (module docstring, step 2); refuses below :data:`MIN_WINDOW`."""

    def cost(w: int) -> int:
        return w * ways * comb(w + free, free)

    if cost(MIN_WINDOW) > STEP_BUDGET:
        raise _refuse(
            f"The regular expression has too many repeats ({free}) to be searched in bounded "
            "time; use fewer *, + or {m,n}."
        )
    lo, hi = MIN_WINDOW, MAX_WINDOW
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if cost(mid) <= STEP_BUDGET else (lo, mid - 1)
    return lo


_CHAR_TESTS = frozenset({sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN, sre.CATEGORY, sre.AT})
_REPEATS = frozenset({sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT})


def _shape(items: Sequence[tuple[Any, Any]], *, repeated: bool) -> tuple[int, int]:
    """``(ways, free repeats)`` of a parsed sequence; refuses the exponential shapes. Inside a
    repeat (``repeated``) nothing may match in more than one way."""
    ways, free = 1, 0
    for op, av in items:
        if op in _CHAR_TESTS:
            continue
        if op in (sre.GROUPREF, sre.GROUPREF_EXISTS, sre.GROUPREF_IGNORE):
            raise _refuse("Back-references (\\1, (?P=name), (?(1)…)) are not searched.")
        if op == sre.SUBPATTERN:
            w, f = _shape(av[-1].data, repeated=repeated)
        elif op == sre.ATOMIC_GROUP or op in (sre.ASSERT, sre.ASSERT_NOT):
            body = av if op == sre.ATOMIC_GROUP else av[1]
            w, f = _shape(body.data, repeated=repeated)
        elif op == sre.BRANCH:
            if repeated:
                raise _nested()
            w, f = 0, 0
            for branch in av[1]:
                bw, bf = _shape(branch.data, repeated=False)
                w, f = w + bw, max(f, bf)
        elif op in _REPEATS:
            lo, hi, body = av
            if repeated and hi != lo:
                raise _nested()
            _shape(body.data, repeated=True)
            w, f = 1, (0 if hi == lo else 1)
        else:
            raise _refuse("The regular expression uses a construct that is not searched.")
        ways, free = ways * w, free + f
        if ways > MAX_WAYS:
            return ways, free
    return ways, free


def _nested() -> Refused:
    return _refuse(
        "A repeat of something that can itself match in more than one way — a nested repeat "
        "like (a+)+ or an alternative like (a|ab)* — can take exponential time; it is not "
        "searched. Write the repeat of one character or class, or a fixed group."
    )


# ---- the files ------------------------------------------------------------------------------


def check_globs(globs: Sequence[str], what: str) -> tuple[str, ...]:
    """``globs`` without empty ones (surrounding spaces trimmed); refuses ``args-invalid`` for
    more than :data:`MAX_GLOBS` or one longer than :data:`MAX_GLOB_CHARS` characters."""
    kept = tuple(g.strip().strip("/") for g in globs if g.strip().strip("/"))
    if len(kept) > MAX_GLOBS:
        raise Refused(Code.ARGS_INVALID, f"At most {MAX_GLOBS} {what} patterns.", field=what)
    if any(len(g) > MAX_GLOB_CHARS for g in kept):
        raise Refused(
            Code.ARGS_INVALID,
            f"An {what} pattern is longer than {MAX_GLOB_CHARS} characters.",
            field=what,
        )
    return kept


def _name_matches(pattern: str, name: str) -> bool:
    """One segment against one glob segment: ``*`` any run, ``?`` one character, the rest
    literal (letter case counts). The classic two-pointer match: at most len × len steps."""
    p = n = 0
    star, mark = -1, 0
    while n < len(name):
        if p < len(pattern) and pattern[p] in ("?", name[n]):
            p, n = p + 1, n + 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark, p = p, n, p + 1
        elif star >= 0:
            p, mark = star + 1, mark + 1
            n = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def _segments_match(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Glob segments against path segments from the start; ``**`` takes any number of
    segments; a pattern that matches a leading folder matches everything below it."""
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        if key not in memo:
            if i == len(pattern):
                memo[key] = True  # the pattern named this folder (or the file): all below
            elif pattern[i] == "**":
                memo[key] = any(go(i + 1, k) for k in range(j, len(parts) + 1))
            elif j == len(parts):
                memo[key] = False
            else:
                memo[key] = _name_matches(pattern[i], parts[j]) and go(i + 1, j + 1)
        return memo[key]

    return go(0, 0)


def glob_matches(glob: str, path: str) -> bool:
    """Whether ``path`` (``/``-separated, project-relative) is selected by ``glob``.

    A glob without ``/`` matches a file or folder *name* at any depth (``*.py``,
    ``node_modules``, ``test_?.txt``); one with ``/`` matches from the project root
    (``src/**/*.mjs``, ``docs/api``), ``**`` standing for any number of folders. Naming a
    folder selects everything in it. ``*`` and ``?`` never cross a ``/``; letter case counts.
    """
    parts = tuple(path.split("/"))
    if "/" not in glob:
        return any(_name_matches(glob, seg) for seg in parts)
    return _segments_match(tuple(glob.split("/")), parts)


def path_selected(path: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """``path`` is searched: some ``include`` glob selects it (or there is none) and no
    ``exclude`` glob does."""
    if include and not any(glob_matches(g, path) for g in include):
        return False
    return not any(glob_matches(g, path) for g in exclude)


# ---- one file -------------------------------------------------------------------------------


def decode_text(data: bytes) -> str | None:
    """The file's text, or ``None`` when it is binary: a NUL byte, or not UTF-8 (a BOM is
    dropped)."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _preview(line: str, column: int, length: int) -> tuple[str, int, int]:
    """At most :data:`PREVIEW_CHARS` characters of ``line`` around the match, trailing
    whitespace dropped, and where the match lies in it."""
    line = line.rstrip("\r\n")
    if len(line) <= PREVIEW_CHARS:
        return line, column, min(column + length, len(line))
    first = max(0, min(column - 40, len(line) - PREVIEW_CHARS))
    shown = line[first : first + PREVIEW_CHARS]
    start = column - first
    return shown, start, min(start + length, len(shown))


def _spans(
    matcher: Matcher, text: str, stop: Callable[[], bool] | None
) -> Iterator[tuple[int, int]]:
    """Every non-empty match of ``matcher`` in ``text`` as (start, end) offsets, in order;
    a guarded pattern asks ``stop`` before each line and window and ends when it says so."""
    pattern, window = matcher.pattern, matcher.window
    if window is None:
        for m in pattern.finditer(text):
            if m.end() > m.start():
                yield m.start(), m.end()
        return
    pos = 0
    while pos <= len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        yield from _line_spans(pattern, text, pos, end, window, stop)
        pos = end + 1


def _line_spans(
    pattern: re.Pattern[str],
    text: str,
    first: int,
    last: int,
    window: int,
    stop: Callable[[], bool] | None,
) -> Iterator[tuple[int, int]]:
    """Matches in ``text[first:last]`` (one line), searched in windows of ``window``
    characters overlapping by half (module docstring, step 3)."""
    half = max(1, window // 2)
    start = first
    taken = first  # no match may start before this (already reported)
    while True:
        if stop is not None and stop():
            return
        upto = min(last, start + window)
        final = upto == last
        for m in pattern.finditer(text, start, upto):
            if m.end() == m.start() or m.start() < taken:
                continue
            if not final and m.start() >= start + half:
                break  # the next window, which overlaps, reports it whole
            taken = m.end()
            yield m.start(), m.end()
        if final:
            return
        start += half


def search_text(
    matcher: Matcher, text: str, limit: int, stop: Callable[[], bool] | None = None
) -> tuple[list[Hit], bool]:
    """The first ``limit`` matches of ``matcher`` in ``text`` and whether there were more.
    Lines are counted by ``\\n``; columns in characters. ``stop`` (the deadline and the cancel
    flag) is asked between the steps of a guarded pattern; when it says stop, the matches
    found so far are returned."""
    hits: list[Hit] = []
    line_no, counted = 0, 0  # newlines before ``counted``, counted as matches come
    for start, end in _spans(matcher, text, stop):
        if len(hits) == limit:
            return hits, True
        line_no += text.count("\n", counted, start)
        counted = start
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        line_end = len(text) if line_end < 0 else line_end
        column = start - line_start
        length = min(end, line_end) - start
        preview, p_start, p_end = _preview(text[line_start:line_end], column, length)
        hits.append(Hit(line_no + 1, column, length, preview, p_start, p_end))
    return hits, False


# ---- cancelling -------------------------------------------------------------------------------


@dataclass
class SearchCancels:
    """The searches running in this host, by the page's search id, and which were cancelled
    (``file.search_cancel``). A new search under an id already running cancels the old one."""

    running: dict[str, list[bool]] = field(default_factory=dict)

    def start(self, search_id: str) -> list[bool]:
        """Register ``search_id``; returns its flag (``flag[0]`` becomes True on cancel)."""
        old = self.running.get(search_id)
        if old is not None:
            old[0] = True
        flag = [False]
        self.running[search_id] = flag
        return flag

    def cancel(self, search_id: str) -> bool:
        """Cancel ``search_id``; False when no such search runs."""
        flag = self.running.get(search_id)
        if flag is None:
            return False
        flag[0] = True
        return True

    def end(self, search_id: str, flag: list[bool]) -> None:
        """Forget ``search_id`` (when ``flag`` is still the one registered)."""
        if self.running.get(search_id) is flag:
            del self.running[search_id]
