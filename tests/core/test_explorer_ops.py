"""Folder moves, the project trash and "Keep both" as host rules (core/projects/tree.py,
core/projects/trash.py, core/host/file_ops.py; issue 17 items 3 and 4)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from core.paths import ProjectPath
from core.policy import Policy
from core.projects.tree import kept_name
from core.refusals import Code, Refused
from tests.support import HostHarness


@pytest.fixture
def h() -> HostHarness:
    return HostHarness()


def project(h: HostHarness) -> str:
    return h.ok("project.create", name="p")["project"]["id"]


def tree(h: HostHarness, pid: str) -> dict[str, bytes]:
    """Every visible file of the project and its bytes."""
    return {
        f["path"]: h.call("file.read", project=pid, path=f["path"])[1] or b""
        for f in h.ok("file.walk", project=pid)["files"]
    }


def fill(h: HostHarness, pid: str, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        h.ok("file.write", data, project=pid, path=path)


SRC = {
    "src/a.txt": b"alpha",
    "src/lib/b.py": b"print(1)\n",
    "src/lib/deep/c.bin": bytes(range(256)),
}


def test_a_folder_renames_with_every_file_and_subfolder(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    h.ok("file.mkdir", project=pid, path="src/empty")
    moved = h.ok("file.move", project=pid, src="src", dst="code")
    assert moved["kind"] == "dir" and moved["files"] == 3 and moved["path"] == "code"
    assert tree(h, pid) == {k.replace("src/", "code/", 1): v for k, v in SRC.items()}
    assert [e["name"] for e in h.ok("file.list", project=pid)["entries"]] == ["code"]
    assert h.ok("file.list", project=pid, folder="code/empty")["entries"] == []


def test_a_folder_moves_into_another_folder(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, {**SRC, "dest/keep.txt": b"k"})
    h.ok("file.move", project=pid, src="src/lib", dst="dest/lib")
    assert tree(h, pid) == {
        "src/a.txt": b"alpha",
        "dest/keep.txt": b"k",
        "dest/lib/b.py": b"print(1)\n",
        "dest/lib/deep/c.bin": bytes(range(256)),
    }


@pytest.mark.parametrize("src", ["src", "src/a.txt"])
def test_a_move_onto_itself_says_it_is_already_there(h: HostHarness, src: str) -> None:
    """A file or folder moved to its own path: said as such, not as a folder moved into
    itself (which a file cannot be; stop 45's tryout)."""
    pid = project(h)
    fill(h, pid, SRC)
    refusal = h.refused("file.move", project=pid, src=src, dst=src)
    assert refusal["code"] == "args-invalid" and "already there" in refusal["message"]
    assert "into itself" not in refusal["message"]
    assert tree(h, pid) == SRC


@pytest.mark.parametrize("dst", ["src/inner", "src/lib/deep/x"])
def test_a_folder_cannot_move_into_itself(h: HostHarness, dst: str) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    refusal = h.refused("file.move", project=pid, src="src", dst=dst)
    assert refusal["code"] == "args-invalid" and "into itself" in refusal["message"]
    assert tree(h, pid) == SRC


def test_a_sibling_with_the_same_prefix_is_not_inside(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    h.ok("file.move", project=pid, src="src", dst="src2")
    assert set(tree(h, pid)) == {k.replace("src/", "src2/", 1) for k in SRC}


@pytest.mark.parametrize(
    "op_args",
    [
        {"src": "src", "dst": ".voicebox/x"},
        {"src": "src", "dst": ".VOICEBOX/x"},
        {"src": ".voicebox", "dst": "meta"},
        {"src": ".voicebox/trash", "dst": "t"},
    ],
)
def test_voicebox_is_never_a_move_source_or_target(h: HostHarness, op_args: dict[str, str]) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    h.ok("file.delete", project=pid, path="src/a.txt")
    assert h.refused("file.move", project=pid, **op_args)["code"] == "path-reserved"


def test_voicebox_cannot_be_deleted_or_trashed_directly(h: HostHarness) -> None:
    pid = project(h)
    for path in [".voicebox", ".voicebox/trash", ".Voicebox/trash/x"]:
        assert h.refused("file.delete", project=pid, path=path, recursive=True)["code"] == (
            "path-reserved"
        )


def test_a_colliding_name_is_refused_unless_the_call_says_what_to_do(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, {**SRC, "code/old.txt": b"old"})
    assert h.refused("file.move", project=pid, src="src", dst="code")["code"] == "already-exists"
    assert tree(h, pid) == {**SRC, "code/old.txt": b"old"}
    kept = h.ok("file.move", project=pid, src="src", dst="code", on_conflict="keep-both")
    assert kept["path"] == "code (2)"
    assert tree(h, pid)["code/old.txt"] == b"old"


def test_replace_on_move_puts_the_old_target_in_the_trash(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, {"a.txt": b"new", "b.txt": b"old"})
    moved = h.ok("file.move", project=pid, src="a.txt", dst="b.txt", on_conflict="replace")
    assert tree(h, pid) == {"b.txt": b"new"}
    [entry] = h.ok("trash.list", project=pid)["entries"]
    assert entry["id"] == moved["replaced"] and entry["path"] == "b.txt"
    assert entry["files"][0]["sha256"] == hashlib.sha256(b"old").hexdigest()


def test_a_failure_part_way_rolls_the_folder_move_back(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    store = h.roots.roots[pid]
    real = store.move
    calls = {"n": 0}

    async def failing(src: ProjectPath, dst: ProjectPath) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise Refused(Code.STORAGE_FAILED, "The disk went away.")
        await real(src, dst)

    store.move = failing  # type: ignore[method-assign]
    refusal = h.refused("file.move", project=pid, src="src", dst="elsewhere/src")
    store.move = real  # type: ignore[method-assign]
    assert refusal["code"] == "storage-failed" and calls["n"] > 3  # 2 moved back after the 3rd
    assert tree(h, pid) == SRC
    assert h.refused("file.list", project=pid, folder="elsewhere/src")["code"] == "file-not-found"


def test_a_failed_rollback_says_exactly_where_the_files_are(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    store = h.roots.roots[pid]
    real = store.move
    calls = {"n": 0}

    async def failing(src: ProjectPath, dst: ProjectPath) -> None:
        calls["n"] += 1
        if calls["n"] >= 3:
            raise Refused(Code.STORAGE_FAILED, "The disk went away.")
        await real(src, dst)

    store.move = failing  # type: ignore[method-assign]
    refusal = h.refused("file.move", project=pid, src="src", dst="out")
    store.move = real  # type: ignore[method-assign]
    assert refusal["code"] == "storage-failed"
    assert "2 of 3 files are now under 'out'" in refusal["message"]
    assert sorted(tree(h, pid)) == ["out/a.txt", "out/lib/b.py", "src/lib/deep/c.bin"]


def test_delete_moves_into_the_trash_and_restore_is_byte_identical(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    before = {p: hashlib.sha256(b).hexdigest() for p, b in tree(h, pid).items()}
    gone = h.ok("file.delete", project=pid, path="src", recursive=True)
    assert gone["files"] == 3 and gone["bytes"] == sum(len(b) for b in SRC.values())
    assert tree(h, pid) == {}
    [entry] = h.ok("trash.list", project=pid)["entries"]
    assert entry["id"] == gone["trash_id"] and entry["kind"] == "dir"
    assert {f"src/{f['path']}": f["sha256"] for f in entry["files"]} == before
    back = h.ok("trash.restore", project=pid, id=entry["id"])
    assert back["path"] == "src"
    assert {p: hashlib.sha256(b).hexdigest() for p, b in tree(h, pid).items()} == before
    assert h.ok("trash.list", project=pid)["entries"] == []


def test_an_emptied_folder_can_be_removed(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, {"d/a.txt": b"1"})
    h.ok("file.delete", project=pid, path="d/a.txt")
    h.clock.advance(5)
    h.ok("file.delete", project=pid, path="d")
    assert h.ok("file.list", project=pid)["entries"] == []
    kinds = [e["kind"] for e in h.ok("trash.list", project=pid)["entries"]]
    assert kinds == ["dir", "file"]


def test_restore_onto_an_existing_name_asks_then_keeps_both(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, {"notes.txt": b"first"})
    trash_id = h.ok("file.delete", project=pid, path="notes.txt")["trash_id"]
    fill(h, pid, {"notes.txt": b"second"})
    refusal = h.refused("trash.restore", project=pid, id=trash_id)
    assert refusal["code"] == "already-exists"
    assert tree(h, pid) == {"notes.txt": b"second"}
    back = h.ok("trash.restore", project=pid, id=trash_id, on_conflict="keep-both")
    assert back["path"] == "notes (2).txt"
    assert tree(h, pid) == {"notes.txt": b"second", "notes (2).txt": b"first"}


def test_restore_refuses_bytes_changed_in_the_trash(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, {"a.txt": b"original"})
    trash_id = h.ok("file.delete", project=pid, path="a.txt")["trash_id"]
    store = h.roots.roots[pid]
    stored = store.tree[".voicebox"]["trash"][trash_id]["data"]  # type: ignore[index]
    stored["a.txt"] = b"tampered"
    refusal = h.refused("trash.restore", project=pid, id=trash_id)
    assert refusal["code"] == "storage-failed"
    assert tree(h, pid) == {}
    assert [e["id"] for e in h.ok("trash.list", project=pid)["entries"]] == [trash_id]


def test_empty_removes_for_good_and_is_audited(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, {"a.txt": b"1", "b.txt": b"22"})
    first = h.ok("file.delete", project=pid, path="a.txt")["trash_id"]
    h.ok("file.delete", project=pid, path="b.txt")
    assert h.ok("trash.empty", project=pid, id=first) == {"entries": 1, "files": 1, "bytes": 1}
    assert h.refused("trash.restore", project=pid, id=first)["code"] == "file-not-found"
    assert h.ok("trash.empty", project=pid) == {"entries": 1, "files": 1, "bytes": 2}
    assert h.ok("trash.list", project=pid)["entries"] == []
    ops = [r["op"] for r in h.sink.records.values() if r["decision"] == "admitted"]
    assert ops.count("trash.empty") == 2 and ops.count("file.delete") == 2


def test_trash_is_invisible_to_listings_and_export(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    h.ok("file.delete", project=pid, path="src", recursive=True)
    assert h.ok("file.walk", project=pid)["files"] == []
    answer, _ = h.call("project.export", project=pid)
    assert answer["ok"] and answer["result"]["files"] == 0


def test_safe_mode_refuses_moves_deletes_restores_and_emptying(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    trash_id = h.ok("file.delete", project=pid, path="src/a.txt")["trash_id"]
    h.ctx.policy = Policy(read_only=True)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("file.move", {"src": "src", "dst": "x"}),
        ("file.delete", {"path": "src", "recursive": True}),
        ("trash.restore", {"id": trash_id}),
        ("trash.empty", {}),
    ]
    for op, args in calls:
        assert h.refused(op, project=pid, **args)["code"] == "read-only-mode", op
    assert h.ok("trash.list", project=pid)["entries"][0]["id"] == trash_id
    assert set(tree(h, pid)) == {"src/lib/b.py", "src/lib/deep/c.bin"}


def test_keep_both_writes_beside_under_the_first_free_name(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, {"d/notes.txt": b"1", "d/notes (2).txt": b"2"})
    written = h.ok("file.write", b"3", project=pid, path="d/notes.txt", keep_both=True)
    assert written["path"] == "d/notes (3).txt"
    assert tree(h, pid)["d/notes.txt"] == b"1"
    fresh = h.ok("file.write", b"4", project=pid, path="d/new.txt", keep_both=True)
    assert fresh["path"] == "d/new.txt"


@pytest.mark.parametrize(
    ("leaf", "kept"),
    [
        ("notes.txt", "notes (2).txt"),
        ("archive.tar.gz", "archive.tar (2).gz"),
        ("Makefile", "Makefile (2)"),
        (".env", ".env (2)"),
    ],
)
def test_kept_name_keeps_the_extension(leaf: str, kept: str) -> None:
    assert kept_name(leaf, 2) == kept


def test_a_folder_holding_a_name_the_host_refuses_is_not_moved_at_all(h: HostHarness) -> None:
    pid = project(h)
    fill(h, pid, SRC)
    store = h.roots.roots[pid]
    store.tree["src"]["CON"] = b"device"  # type: ignore[index]
    for op, args in [
        ("file.move", {"src": "src", "dst": "x"}),
        ("file.delete", {"path": "src", "recursive": True}),
    ]:
        refusal = h.refused(op, project=pid, **args)
        assert refusal["code"] == "path-reserved" and "CON" in refusal["message"], op
    assert {k: v for k, v in tree(h, pid).items() if k != "src/CON"} == SRC
    assert store.tree["src"]["CON"] == b"device"  # type: ignore[index]
    assert h.ok("trash.list", project=pid)["entries"] == []


def test_one_folder_downloads_as_a_zip_of_just_that_folder(h: HostHarness) -> None:
    import io
    import zipfile

    pid = project(h)
    fill(h, pid, {**SRC, "other.txt": b"not in it"})
    answer, body = h.call("project.export", project=pid, folder="src/lib")
    assert answer["ok"], answer
    names = zipfile.ZipFile(io.BytesIO(body or b"")).namelist()
    assert sorted(n for n in names if not n.startswith(".voicebox")) == [
        "src/lib/b.py",
        "src/lib/deep/c.bin",
    ]
    assert answer["result"]["files"] == 2 and answer["result"]["filename"] == "p - lib.zip"
    for folder, code in [("src/a.txt", "not-a-directory"), ("nope", "file-not-found")]:
        assert h.refused("project.export", project=pid, folder=folder)["code"] == code


@pytest.mark.parametrize("fold_case", [True, False], ids=["case-folding", "case-keeping"])
def test_a_folder_rename_in_a_picked_folder_refuses_a_case_only_twin(
    h: HostHarness, fold_case: bool
) -> None:
    from core.memory.adapters import MemoryProjectFiles
    from tests.support import run

    folder = MemoryProjectFiles(fold_case=fold_case)
    for path, data in SRC.items():
        run(folder.write(ProjectPath(tuple(path.split("/"))), data))
    pid = h.attach("project.add_folder", folder, name="picked")["result"]["project"]["id"]
    before = repr(folder.tree)
    for dst in ["SRC", "Src"]:
        refusal = h.refused("file.move", project=pid, src="src", dst=dst)
        assert refusal["code"] == "path-case-collision" and "'src'" in refusal["message"], dst
    assert repr(folder.tree) == before
    h.ok("file.move", project=pid, src="src", dst="source")
    assert set(tree(h, pid)) == {k.replace("src/", "source/", 1) for k in SRC}


def test_the_walk_names_the_download_exactly_as_the_export_will(h: HostHarness) -> None:
    """Issue 34: the streamed download sends its file name before the archive's first byte,
    so ``file.walk`` names it — the very name ``project.export``'s summary gives afterwards,
    for the whole project and for one folder, unsafe characters made safe."""
    pid = h.ok("project.create", name='Notes: "draft" ünï')["project"]["id"]
    fill(h, pid, SRC)
    for folder in ("", "src/lib"):
        walked = h.ok("file.walk", project=pid, folder=folder)["archive_filename"]
        answer, _ = h.call("project.export", project=pid, **({"folder": folder} if folder else {}))
        assert answer["ok"], answer
        assert walked == answer["result"]["filename"]
    assert h.ok("file.walk", project=pid)["archive_filename"] == "Notes_ _draft_ ünï.zip"
    assert h.ok("file.walk", project=pid, folder="src/lib")["archive_filename"] == (
        "Notes_ _draft_ ünï - lib.zip"
    )
