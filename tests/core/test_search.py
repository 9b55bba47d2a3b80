"""Search in files: every option, the globs, binary and large files skipped, the bounds, the
regex guard and the time bound, streaming and cancel (issue 33 item 1; core/projects/search.py,
core/host/search_ops.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.host.search_ops import BATCH, FIRST_BATCH
from core.ports import Entry
from core.projects.search import (
    MAX_FILE_BYTES,
    MAX_MATCHES_PER_FILE,
    STEP_BUDGET,
    Query,
    compile_query,
    glob_matches,
    path_selected,
    search_text,
)
from core.refusals import Code, Refused
from tests.support import HostHarness, run


def hits(text: str, query: str, **switches: Any) -> list[tuple[int, int, int]]:
    found, _ = search_text(compile_query(Query(query, **switches)), text, 1000)
    return [(h.line, h.column, h.length) for h in found]


def refused(query: str, **switches: Any) -> Refused:
    with pytest.raises(Refused) as caught:
        compile_query(Query(query, **switches))
    assert caught.value.code == Code.ARGS_INVALID
    return caught.value


TEXT = "Foo foo\nfood FOO\n(foo)\n"


def test_plain_search_ignores_letter_case_and_reports_line_and_column() -> None:
    assert hits(TEXT, "foo") == [(1, 0, 3), (1, 4, 3), (2, 0, 3), (2, 5, 3), (3, 1, 3)]
    assert hits("a.b axb", "a.b") == [(1, 0, 3)]  # plain text: '.' is a dot
    assert hits("STRASSE straße", "straße") == [(1, 8, 6)]


def test_case_sensitive_search_counts_letter_case() -> None:
    assert hits(TEXT, "foo", case_sensitive=True) == [(1, 4, 3), (2, 0, 3), (3, 1, 3)]
    assert hits(TEXT, "FOO", case_sensitive=True) == [(2, 5, 3)]


def test_whole_word_search_needs_no_word_character_around_the_match() -> None:
    assert hits(TEXT, "foo", whole_word=True) == [(1, 0, 3), (1, 4, 3), (2, 5, 3), (3, 1, 3)]
    assert hits("a_foo foo_ foo2 foo", "foo", whole_word=True) == [(1, 16, 3)]


def test_regex_search_uses_python_syntax_and_skips_empty_matches() -> None:
    assert hits(TEXT, r"fo+d?\b", regex=True, case_sensitive=True) == [
        (1, 4, 3),
        (2, 0, 4),
        (3, 1, 3),
    ]
    assert hits("abc\n\nx", r"^", regex=True) == []  # zero-length matches are not results
    assert hits("def f(x):\n  return x", r"^\s*return\b", regex=True) == [(2, 0, 8)]
    assert refused("(unclosed", regex=True).message.startswith("The regular expression does")
    assert "Type something" in refused("").message


def test_previews_show_the_line_around_the_match() -> None:
    long_line = "x" * 500 + "needle" + "y" * 500
    (hit,), more = search_text(compile_query(Query("needle")), f"first\n{long_line}\n", 10)
    assert not more and hit.line == 2 and hit.column == 500
    assert len(hit.preview) <= 160
    assert hit.preview[hit.start : hit.end] == "needle"
    (crlf,), _ = search_text(compile_query(Query("b")), "a b\r\nc", 10)
    assert crlf.preview == "a b"


def test_catastrophic_patterns_are_refused_before_they_run() -> None:
    for pattern in [r"(a+)+b", r"(a*)*", r"(a|a)*b", r"(a|ab)*c", r"(\w+\s?)+$", r"(x+x+)+y"]:
        assert "exponential" in refused(pattern, regex=True).message
    assert "Back-references" in refused(r"(a)\1", regex=True).message
    assert "repeats" in refused(r"a*b*c*d*e*f*g*h*i*j*", regex=True).message
    assert "alternatives" in refused("(ab|ba)" * 9, regex=True).message


def test_a_guarded_pattern_costs_a_bounded_number_of_steps_per_window() -> None:
    # no free repeat: linear, a whole file at once
    assert compile_query(Query("plain text")).window is None
    assert compile_query(Query(r"ab[cd]\d{3}", regex=True)).window is None
    # free repeats: the window shrinks as their number grows, the cost stays in the budget
    one = compile_query(Query(r"\w+", regex=True)).window
    three = compile_query(Query(r"a.*b.*c.*d", regex=True)).window
    assert one is not None and three is not None and one > three >= 32
    # a worst case for three repeats, on a line far longer than the window, still finds the
    # matches within half a window and ends (each window costs at most STEP_BUDGET tests)
    line = "a" * 20_000 + "bcd"
    found, _ = search_text(compile_query(Query(r"a.*b.*c.*d", regex=True)), line, 10)
    assert len(found) == 1
    assert found[0].column + found[0].length == 20_003  # the match ends at the 'd'
    assert found[0].length <= three  # and lies in one window
    assert STEP_BUDGET == 1 << 24


def test_a_match_longer_than_half_a_window_on_a_long_line_is_the_documented_limit() -> None:
    matcher = compile_query(Query(r"a.*z", regex=True))
    assert matcher.window is not None
    short = "." * 10_000 + "a" + "b" * 10 + "z"
    found, _ = search_text(matcher, short, 10)
    assert [(h.column, h.length) for h in found] == [(10_000, 12)]


def test_globs_match_names_at_any_depth_or_paths_from_the_root() -> None:
    assert glob_matches("*.py", "a/b/c.py") and not glob_matches("*.py", "a/b/c.pyc")
    assert glob_matches("node_modules", "web/node_modules/x/y.js")
    assert glob_matches("src/**/*.mjs", "src/a/b/c.mjs")
    assert glob_matches("src/**/*.mjs", "src/c.mjs")
    assert not glob_matches("src/*.mjs", "src/a/c.mjs")
    assert glob_matches("docs", "docs/x.md") and glob_matches("docs/api", "docs/api/x.md")
    assert not glob_matches("docs/api", "src/docs/api/x.md")
    assert glob_matches("test_?.txt", "test_1.txt")
    assert not glob_matches("test_?.txt", "test_12.txt")
    assert not glob_matches("*.PY", "a.py")  # letter case counts
    assert path_selected("src/a.py", ("*.py",), ("tests",))
    assert not path_selected("tests/a.py", ("*.py",), ("tests",))
    assert not path_selected("src/a.js", ("*.py",), ())
    assert path_selected("anything", (), ())


# ---- through the host ------------------------------------------------------------------------


class TickingClock:
    """A clock that advances ``step`` ms each time it is read (a search that never ends on
    its own meets its deadline)."""

    def __init__(self, step: int) -> None:
        self.t, self.step = 1_700_000_000_000, step

    def now_ms(self) -> int:
        self.t += self.step
        return self.t


def project(h: HostHarness, files: dict[str, bytes]) -> str:
    pid = h.ok("project.create", name="p")["project"]["id"]
    for path, data in files.items():
        h.ok("file.write", data, project=pid, path=path)
    return pid


def search(h: HostHarness, sink: Any = None, **args: Any) -> tuple[dict[str, Any], list[dict]]:
    msg = json.dumps({"v": 1, "id": "s1", "op": "file.search", "args": {"search": "s1", **args}})
    chunks: list[bytes] = []

    async def collect(chunk: bytes) -> None:
        chunks.append(chunk)
        if sink is not None:
            await sink(chunk)

    answer, _, _ = run(h.host.handle_full(msg, None, None, collect))
    lines = [json.loads(x) for x in b"".join(chunks).splitlines()]
    return json.loads(answer), lines


FILES = {
    "src/app.py": b"import os\nprint('hello')\n",
    "src/lib/util.py": b"def hello():\n    return 'Hello'\n",
    "docs/readme.md": b"# hello world\n",
    "img/logo.png": b"\x89PNG\r\n\x1a\n\0\0hello",
    "latin1.txt": "hello caf\u00e9".encode("latin-1"),
    "node_modules/x/index.js": b"hello",
}


def test_search_streams_files_with_matches_and_skips_binary_files() -> None:
    h = HostHarness()
    pid = project(h, FILES)
    answer, lines = search(h, project=pid, query="hello")
    assert answer["ok"], answer
    assert [f["path"] for f in lines] == [
        "docs/readme.md",
        "node_modules/x/index.js",
        "src/app.py",
        "src/lib/util.py",
    ]
    util = lines[-1]
    assert [(x["line"], x["column"]) for x in util["hits"]] == [(1, 4), (2, 12)]
    summary = answer["result"]
    assert summary["skipped_binary"] == 2 and summary["files"] == 4
    assert summary["matches"] == 5 and summary["files_matched"] == 4
    assert summary["stopped"] == "done" and summary["window"] is None


def test_include_and_exclude_globs_select_the_files_searched() -> None:
    h = HostHarness()
    pid = project(h, FILES)
    _, lines = search(
        h, project=pid, query="hello", include=["*.py", "*.js"], exclude=["node_modules"]
    )
    assert [f["path"] for f in lines] == ["src/app.py", "src/lib/util.py"]
    _, lines = search(h, project=pid, query="hello", include=["src/lib"], case_sensitive=True)
    assert [(f["path"], len(f["hits"])) for f in lines] == [("src/lib/util.py", 1)]
    refusal = search(h, project=pid, query="x", include=["a" * 201])[0]["refusal"]
    assert refusal["code"] == "args-invalid"


def test_large_files_are_skipped_and_the_match_bounds_hold() -> None:
    h = HostHarness()
    many = b"x\n" * (MAX_MATCHES_PER_FILE + 5)
    pid = project(h, {"big.txt": b"x" * (MAX_FILE_BYTES + 1), "a.txt": many, "b.txt": many})
    answer, lines = search(h, project=pid, query="x")
    assert answer["result"]["skipped_large"] == 1
    assert [(f["path"], len(f["hits"]), f["more"]) for f in lines] == [
        ("a.txt", MAX_MATCHES_PER_FILE, True),
        ("b.txt", MAX_MATCHES_PER_FILE, True),
    ]
    answer, lines = search(h, project=pid, query="x", max_matches=250)
    assert answer["result"]["stopped"] == "limit" and answer["result"]["matches"] == 250
    assert sum(len(f["hits"]) for f in lines) == 250


def test_a_search_stops_at_its_time_bound_and_says_so() -> None:
    h = HostHarness()
    pid = project(h, {f"f{i:03}.txt": b"needle\n" for i in range(100)})
    h.ctx.clock = TickingClock(step=7)  # every reading of the clock: 7 ms later
    answer, lines = search(h, project=pid, query="needle", time_limit_ms=100)
    summary = answer["result"]
    assert summary["stopped"] == "time"
    assert 0 < summary["files"] < 100 and len(lines) == summary["files_matched"]


def test_a_catastrophic_regex_is_refused_with_a_sentence_not_run() -> None:
    h = HostHarness()
    pid = project(h, {"a.txt": b"a" * 50_000})
    refusal = search(h, project=pid, query="(a+)+b", regex=True)[0]["refusal"]
    assert refusal["code"] == "args-invalid" and "exponential" in refusal["message"]


def test_a_search_is_cancelled_by_name_and_says_so() -> None:
    h = HostHarness()
    pid = project(h, {f"f{i:03}.txt": b"needle\n" for i in range(50)})
    seen: list[dict[str, Any]] = []

    async def cancel_after_first(chunk: bytes) -> None:
        if not seen:
            cancel = {"v": 1, "id": "c", "op": "file.search_cancel", "args": {"search": "s1"}}
            answer, _ = await h.host.handle(json.dumps(cancel))
            seen.append(json.loads(answer))

    answer, _ = search(h, sink=cancel_after_first, project=pid, query="needle")
    assert seen[0]["result"] == {"cancelled": True}
    assert answer["result"]["stopped"] == "cancelled"
    assert answer["result"]["files"] < 50
    assert h.ok("file.search_cancel", search="s1") == {"cancelled": False}  # it ended


class ListReads:
    """Makes a project's in-memory files a :class:`core.ports.ReadsMany` adapter: each
    ``read_many`` call's paths and bound are recorded (``grown``: paths it reports as grown
    past the bound, ``gone``: as unreadable), and so is every one-file ``read``."""

    def __init__(self, h: HostHarness, pid: str, grown: tuple[str, ...] = (), gone=()) -> None:
        self.files = h.roots.roots[pid]
        self.calls: list[tuple[list[str], int]] = []
        self.single: list[str] = []
        one_read = self.files.read

        async def read(path: Any) -> bytes:
            self.single.append(str(path))
            return await one_read(path)

        async def read_many(paths: Any, max_bytes: int) -> list[Any]:
            self.calls.append(([str(p) for p in paths], max_bytes))
            out: list[Any] = []
            for path in paths:
                if str(path) in grown:
                    out.append("large")
                elif str(path) in gone:
                    out.append("unreadable")
                else:
                    data = await one_read(path)
                    out.append("large" if len(data) > max_bytes else data)
            return out

        self.files.read = read  # type: ignore[method-assign]
        self.files.read_many = read_many  # type: ignore[attr-defined]


def test_a_search_reads_only_the_files_the_host_chose_in_batch_reads() -> None:
    """Issue 33: the search reads its files through one ``read_many`` call per batch — never one
    call per file — and only the files the host chose: not the metadata folder, not an
    excluded folder, not a file listed larger than the bound; the bound is the host's."""
    h = HostHarness()
    files = {
        f"d{i // 100}/f{i:04}.txt": b"needle\n" if i % 10 == 0 else b"hay\n" for i in range(700)
    }
    files["skip/x.txt"] = b"needle"
    files["big.txt"] = b"x" * (MAX_FILE_BYTES + 1)
    pid = project(h, files)
    reads = ListReads(h, pid, grown=("d0/f0010.txt",), gone=("d0/f0020.txt",))
    answer, lines = search(h, project=pid, query="needle", exclude=["skip"])
    summary = answer["result"]
    asked = [p for paths, _ in reads.calls for p in paths]
    assert not reads.single  # no file read one call at a time
    assert [len(paths) for paths, _ in reads.calls] == [
        FIRST_BATCH,
        BATCH,
        700 - FIRST_BATCH - BATCH,
    ]
    assert all(bound == MAX_FILE_BYTES for _, bound in reads.calls)
    assert asked == sorted(p for p in files if p.startswith("d"))  # in path order, once each
    assert summary["skipped_large"] == 2  # big.txt by its listing, f0010 grown since
    assert summary["skipped_names"] == 1  # f0020 could not be read
    assert summary["files"] == 698 and summary["matches"] == 68 == len(lines)
    assert [f["path"] for f in lines][:2] == ["d0/f0000.txt", "d0/f0030.txt"]


def test_a_search_walk_asks_no_sizes_where_the_listing_can_leave_them_out() -> None:
    """Issue 33: over an adapter that lists names and kinds without sizes (the browser's, where
    a size is a call per file), the walk never asks a size; the read applies the bound."""
    h = HostHarness()
    pid = project(h, {"a.txt": b"needle", "big.txt": b"needle" * MAX_FILE_BYTES, "d/b.txt": b"no"})
    reads = ListReads(h, pid)
    sized: list[tuple[str, ...]] = []
    listed: list[tuple[str, ...]] = []
    list_dir = reads.files.list_dir

    async def counting_list_dir(folder: tuple[str, ...]) -> Any:
        sized.append(folder)
        return await list_dir(folder)

    async def list_kinds(folder: tuple[str, ...]) -> Any:
        listed.append(folder)
        return [Entry(e.name, e.kind) for e in await list_dir(folder)]

    reads.files.list_dir = counting_list_dir  # type: ignore[method-assign]
    reads.files.list_kinds = list_kinds  # type: ignore[attr-defined]
    answer, lines = search(h, project=pid, query="needle")
    assert listed == [(), ("d",)] and not sized
    assert [p for paths, _ in reads.calls for p in paths] == ["a.txt", "big.txt", "d/b.txt"]
    assert answer["result"]["skipped_large"] == 1 and [f["path"] for f in lines] == ["a.txt"]


@pytest.mark.cpython_only  # its own event loop (as tests/core/test_audit_batching.py): inside
# Pyodide the runner's loop is already running; the browser's batch reads run in e2e/test_find.py
def test_a_search_with_batch_reads_in_flight_finds_the_same_in_the_same_order() -> None:
    """Issue 33: where the adapter's waits overlap (the browser's), the walk and the next
    batches' reads go on while one batch is searched; the answer is the same, in order."""
    import asyncio

    h = HostHarness()
    files = {f"d{i % 7}/f{i:04}.txt": (b"needle\n" if i % 3 else b"hay\n") for i in range(1200)}
    pid = project(h, {**files, "bin.dat": b"\0needle"})
    _, one_at_a_time = search(h, project=pid, query="needle")
    reads = ListReads(h, pid)
    reads.files.overlaps_waits = True  # type: ignore[attr-defined]
    waits: list[int] = []

    async def waiting_read_many(
        paths: Any, max_bytes: int, inner: Any = reads.files.read_many
    ) -> Any:
        waits.append(len(paths))
        await asyncio.sleep(0)  # a real wait: other work runs meanwhile
        return await inner(paths, max_bytes)

    reads.files.read_many = waiting_read_many  # type: ignore[attr-defined]
    msg = json.dumps(
        {
            "v": 1,
            "id": "r",
            "op": "file.search",
            "args": {"search": "r", "project": pid, "query": "needle"},
        }
    )
    chunks: list[bytes] = []

    async def sink(chunk: bytes) -> None:
        chunks.append(chunk)

    answer, _, _ = asyncio.run(h.host.handle_full(msg, None, None, sink))
    in_flight = [json.loads(x) for x in b"".join(chunks).splitlines()]
    assert in_flight == one_at_a_time and len(in_flight) == 800
    assert json.loads(answer)["result"]["skipped_binary"] == 1
    assert waits[0] == FIRST_BATCH and not reads.single
    # stopped early (the match limit) with reads in flight: the answer says why
    msg = msg.replace('"query": "needle"', '"query": "needle", "max_matches": 5')
    answer, _, _ = asyncio.run(h.host.handle_full(msg, None, None, sink))
    assert json.loads(answer)["result"]["stopped"] == "limit"
