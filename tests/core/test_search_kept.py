"""The bytes a search reads are kept between searches, bounded and never stale (issue 33: a
search completes within 2 s; core/projects/kept_texts.py, core/projects/listing_cache.py).

Every test searches first (so the project's bytes are kept), changes the project through the
host — or behind its back, reported by the watch — and searches again: the second search
must see the new state, never a kept old line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.memory.adapters import MemoryProjectFiles, MemoryWatcher
from core.paths import ProjectPath, parse_path
from core.projects.kept_texts import KeptTexts
from core.projects.listing_cache import ListingCache
from tests.support import HostHarness, run

FILES = {
    "a.txt": b"alpha old line\n",
    "src/b.py": b"beta = 'old line'\n",
    "src/deep/c.md": b"# old line\n",
    "docs/d.txt": b"nothing here\n",
}


def _search(h: HostHarness, pid: str, query: str, sid: str = "s1") -> list[str]:
    """The paths where ``query`` is found, in the search's order."""
    msg = json.dumps(
        {
            "v": 1,
            "id": sid,
            "op": "file.search",
            "args": {"project": pid, "search": sid, "query": query},
        }
    )
    chunks: list[bytes] = []

    async def collect(chunk: bytes) -> None:
        chunks.append(chunk)

    answer, _, _ = run(h.host.handle_full(msg, None, None, collect))
    assert json.loads(answer)["ok"], answer
    return [json.loads(x)["path"] for x in b"".join(chunks).splitlines()]


def _kept(h: HostHarness) -> KeptTexts:
    listings = h.ctx.listings
    assert isinstance(listings, ListingCache)
    return listings.texts


def _setup(files: dict[str, bytes] = FILES) -> tuple[HostHarness, MemoryWatcher, str]:
    watcher = MemoryWatcher()
    h = HostHarness(watcher=watcher)
    pid = h.ok("project.create", name="p")["project"]["id"]
    for path, data in files.items():
        h.ok("file.write", data, project=pid, path=path)
    return h, watcher, pid


def _counting(h: HostHarness, pid: str) -> list[str]:
    """Every one-file read of the project's storage, recorded (the in-memory adapter reads many
    one file at a time)."""
    files = h.roots.roots[pid]
    reads: list[str] = []
    one_read = files.read

    async def read(path: ProjectPath) -> bytes:
        reads.append(str(path))
        return await one_read(path)

    files.read = read  # type: ignore[method-assign]
    return reads


def test_a_second_search_reads_the_kept_bytes_not_storage() -> None:
    h, _, pid = _setup()
    reads = _counting(h, pid)
    assert _search(h, pid, "old line") == ["a.txt", "src/b.py", "src/deep/c.md"]
    assert sorted(reads) == sorted(FILES)
    reads.clear()
    assert _search(h, pid, "old line") == ["a.txt", "src/b.py", "src/deep/c.md"]
    assert reads == []  # every file answered from the kept bytes
    assert _kept(h).bytes == sum(len(b) for b in FILES.values())


def test_a_save_after_a_search_is_what_the_next_search_finds() -> None:
    h, _, pid = _setup()
    assert "a.txt" in _search(h, pid, "old line")
    h.ok("file.write", b"alpha new text\n", project=pid, path="a.txt")
    assert _search(h, pid, "old line") == ["src/b.py", "src/deep/c.md"]
    assert _search(h, pid, "new text") == ["a.txt"]


def test_a_deleted_file_or_folder_is_never_found_from_kept_bytes() -> None:
    h, _, pid = _setup()
    assert len(_search(h, pid, "old line")) == 3
    h.ok("file.delete", project=pid, path="a.txt")
    h.ok("file.delete", project=pid, path="src", recursive=True)
    assert _search(h, pid, "old line") == []


def test_a_moved_file_and_a_renamed_folder_are_found_at_their_new_paths_only() -> None:
    h, _, pid = _setup()
    assert len(_search(h, pid, "old line")) == 3
    h.ok("file.move", project=pid, src="a.txt", dst="docs/a2.txt")
    h.ok("file.move", project=pid, src="src", dst="lib")
    assert _search(h, pid, "old line") == ["docs/a2.txt", "lib/b.py", "lib/deep/c.md"]
    # a new file at the old path is read, not answered from the old bytes
    h.ok("file.write", b"fresh\n", project=pid, path="src/b.py")
    assert _search(h, pid, "fresh") == ["src/b.py"]
    assert _search(h, pid, "beta") == ["lib/b.py"]


def test_a_batch_write_after_a_search_is_what_the_next_search_finds() -> None:
    h, _, pid = _setup()
    assert len(_search(h, pid, "old line")) == 3
    body = b"uploaded line\n"
    h.ok("file.write_batch", body, project=pid, files=[{"path": "up/new.txt", "size": len(body)}])
    assert _search(h, pid, "uploaded") == ["up/new.txt"]
    # a replaced file through trash restore is read again too
    h.ok("file.write", b"beta = 'changed'\n", project=pid, path="src/b.py")
    assert _search(h, pid, "old line") == ["a.txt", "src/deep/c.md"]


def test_a_project_deleted_and_an_import_after_a_search_show_their_own_files() -> None:
    h, _, pid = _setup()
    assert len(_search(h, pid, "old line")) == 3
    assert _kept(h).project_bytes(pid) > 0
    _, archive = h.call("project.export", project=pid)
    assert archive
    answer, _ = h.call("project.delete", project=pid)
    assert answer["ok"], answer
    assert _kept(h).project_bytes(pid) == 0  # a removed project's bytes go with it
    new = h.ok("project.import", archive, name="copy")["project"]["id"]
    h.ok("file.write", b"imported then edited\n", project=new, path="a.txt")
    assert _search(h, new, "old line") == ["src/b.py", "src/deep/c.md"]
    assert _search(h, new, "edited") == ["a.txt"]


def test_another_programs_change_drops_the_kept_bytes_once_the_watch_reports_it() -> None:
    h, watcher, pid = _setup()
    assert len(_search(h, pid, "old line")) == 3
    storage: MemoryProjectFiles = h.roots.roots[pid]
    run(storage.write(parse_path("a.txt"), b"changed behind the host\n"))
    run(storage.delete(parse_path("src"), recursive=True))
    watcher.deliver()
    assert _search(h, pid, "old line") == []
    assert _search(h, pid, "behind") == ["a.txt"]


def test_a_project_whose_watch_is_not_active_keeps_no_bytes() -> None:
    watcher = MemoryWatcher(begin_active=False)
    h = HostHarness(watcher=watcher)
    pid = h.ok("project.create", name="p")["project"]["id"]
    h.ok("file.write", b"old line\n", project=pid, path="a.txt")
    reads = _counting(h, pid)
    _search(h, pid, "old")
    _search(h, pid, "old")
    assert reads == ["a.txt", "a.txt"] and _kept(h).bytes == 0


def test_a_search_while_a_write_is_in_flight_keeps_nothing_it_read_before_the_write() -> None:
    """A change that ends while a read is in flight moves the project's generation: the bytes
    read before it are not kept."""
    h, _, pid = _setup({"a.txt": b"old line\n"})
    storage = h.roots.roots[pid]
    one_read = storage.read
    wrote: list[bool] = []

    async def read_then_write(path: ProjectPath) -> bytes:
        data = await one_read(path)
        if not wrote:
            wrote.append(True)  # the host's own save lands while the search's read is out
            answer, _ = await h.host.handle(
                json.dumps(
                    {
                        "v": 1,
                        "id": "w",
                        "op": "file.write",
                        "args": {"project": pid, "path": "a.txt"},
                    }
                ),
                b"new line\n",
            )
            assert json.loads(answer)["ok"], answer
        return data

    storage.read = read_then_write  # type: ignore[method-assign]
    _search(h, pid, "line")
    assert _kept(h).bytes == 0
    storage.read = one_read  # type: ignore[method-assign]
    assert _search(h, pid, "new line") == ["a.txt"] and _search(h, pid, "old line") == []


def test_the_kept_bytes_never_exceed_their_bound_least_recently_used_out_first() -> None:
    kept = KeptTexts(max_bytes=1000, max_file=300)
    for i in range(10):
        assert kept.put("p", ("d", f"f{i}"), bytes(250))
        assert kept.bytes <= 1000
    assert len(kept) == 4 and kept.get("p", ("d", "f0")) is None
    assert kept.get("p", ("d", "f6")) is not None  # now the most recently used
    kept.put("p", ("d", "f10"), bytes(250))
    assert kept.get("p", ("d", "f6")) is not None and kept.get("p", ("d", "f7")) is None
    assert not kept.put("p", ("big",), bytes(301)) and kept.get("p", ("big",)) is None
    kept.drop_at("p", ("d",))
    assert kept.bytes == 0 and len(kept) == 0


def test_a_search_over_more_than_the_bound_keeps_at_most_the_bound() -> None:
    files = {f"d{i // 10}/f{i}.txt": b"x" * 100 + b" needle\n" for i in range(50)}
    watcher = MemoryWatcher()
    h = HostHarness(watcher=watcher)
    assert h.ctx.listings is not None
    h.ctx.listings.texts = KeptTexts(max_bytes=2000, max_file=500)
    pid = h.ok("project.create", name="p")["project"]["id"]
    for path, data in files.items():
        h.ok("file.write", data, project=pid, path=path)
    assert len(_search(h, pid, "needle")) == 50
    assert 0 < _kept(h).bytes <= 2000
    assert len(_search(h, pid, "needle")) == 50


def test_a_picked_folder_is_read_fresh_never_kept() -> None:
    h = HostHarness(watcher=MemoryWatcher())
    folder = MemoryProjectFiles()
    run(folder.write(parse_path("a.txt"), b"old line\n"))
    pid = h.attach("project.add_folder", folder, name="picked")["result"]["project"]["id"]
    assert _search(h, pid, "old") == ["a.txt"]
    run(folder.write(parse_path("a.txt"), b"new line\n"))  # changed outside the host
    assert _search(h, pid, "old") == [] and _search(h, pid, "new") == ["a.txt"]
    assert _kept(h).bytes == 0


def _warm(h: HostHarness, pid: str, **args: Any) -> dict[str, Any]:
    return h.ok("file.search_warm", project=pid, search="w1", **args)


def test_a_warm_up_reads_the_project_so_the_first_search_reads_no_storage() -> None:
    h, _, pid = _setup()
    reads = _counting(h, pid)
    warmed = _warm(h, pid)
    assert warmed["stopped"] == "done" and warmed["files"] == len(FILES)
    assert warmed["kept_bytes"] == sum(len(b) for b in FILES.values())
    reads.clear()
    assert _search(h, pid, "old line") == ["a.txt", "src/b.py", "src/deep/c.md"]
    assert reads == []


def test_a_warm_up_stops_at_the_bound_and_keeps_no_more() -> None:
    files = {f"d{i // 10}/f{i:03}.txt": b"y" * 400 for i in range(1200)}
    h, _, pid = _setup(files)
    assert h.ctx.listings is not None
    h.ctx.listings.texts = KeptTexts(max_bytes=300_000, max_file=1000)
    warmed = _warm(h, pid)
    assert warmed["stopped"] == "full" and warmed["files"] < 1200
    assert warmed["kept_bytes"] <= 300_000


def test_a_warm_up_of_a_picked_folder_keeps_nothing() -> None:
    h = HostHarness(watcher=MemoryWatcher())
    folder = MemoryProjectFiles()
    run(folder.write(parse_path("a.txt"), b"x\n"))
    pid = h.attach("project.add_folder", folder, name="picked")["result"]["project"]["id"]
    assert _warm(h, pid) == {"files": 0, "kept_bytes": 0, "stopped": "not-kept", "elapsed_ms": 0}


@pytest.mark.cpython_only  # its own event loop (as test_search.py's batch reads in flight)
def test_a_walk_over_overlapping_waits_lists_folders_ahead_and_keeps_its_order() -> None:
    """Issue 33: over kept bytes a search is its walk — a listing per folder, each a wait in the
    browser — so where waits overlap the walk lists the next folders while it yields this
    one's files; the files come in the same order, and no listing begun ahead outlives it."""
    import asyncio

    files = {f"d{i % 12}/e{i % 3}/f{i:04}.txt": b"needle\n" for i in range(1500)}
    h, _, pid = _setup(files)
    before = _search(h, pid, "needle")
    storage = h.roots.roots[pid]
    storage.overlaps_waits = True  # type: ignore[attr-defined]
    one_list = storage.list_dir
    in_flight = [0]
    most = [0]

    async def waiting_list(folder: tuple[str, ...]) -> Any:
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        try:
            await asyncio.sleep(0)  # a real wait: other listings start meanwhile
            return await one_list(folder)
        finally:
            in_flight[0] -= 1

    storage.list_dir = waiting_list  # type: ignore[method-assign]
    msg = json.dumps(
        {
            "v": 1,
            "id": "x",
            "op": "file.search",
            "args": {"search": "x", "project": pid, "query": "needle"},
        }
    )
    chunks: list[bytes] = []

    async def sink(chunk: bytes) -> None:
        chunks.append(chunk)

    async def both() -> Any:
        answer = await h.host.handle_full(msg, None, None, sink)
        await asyncio.sleep(0)
        return answer

    asyncio.run(both())
    after = [json.loads(x)["path"] for x in b"".join(chunks).splitlines()]
    assert after == before and len(after) == 1500
    assert most[0] > 1 and in_flight[0] == 0
