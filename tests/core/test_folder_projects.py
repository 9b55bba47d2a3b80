"""Projects in a folder the user picked (core/projects/catalog.py, core/host/project_ops.py; SPEC
§3)."""

from __future__ import annotations

import json

import pytest

from core.memory.adapters import MemoryProjectFiles
from core.paths import ProjectPath
from tests.support import HostHarness, run


@pytest.fixture
def h() -> HostHarness:
    return HostHarness()


def picked(**files: bytes) -> MemoryProjectFiles:
    folder = MemoryProjectFiles()
    for path, data in files.items():
        run(folder.write(ProjectPath(tuple(path.split("__"))), data))
    return folder


def add(h: HostHarness, folder: MemoryProjectFiles, name: str = "src") -> dict:
    answer = h.attach("project.add_folder", folder, name=name)
    assert answer["ok"], answer
    return answer["result"]["project"]


def test_a_picked_folder_is_listed_beside_opfs_projects_as_kind_directory(h: HostHarness) -> None:
    h.ok("project.create", name="in the browser")
    project = add(h, picked(**{"a.txt": b"1"}), "on disk")
    kinds = {p["name"]: p["kind"] for p in h.ok("project.list")["projects"]}
    assert kinds == {"in the browser": "opfs", "on disk": "directory"}
    assert project["kind"] == "directory"


def test_opening_a_folder_writes_nothing_into_it(h: HostHarness) -> None:
    folder = picked(**{"README.md": b"hi"})
    before = repr(folder.tree)
    pid = add(h, folder)["id"]
    h.ok("project.open", project=pid)
    h.ok("file.list", project=pid)
    assert h.call("file.read", project=pid, path="README.md")[1] == b"hi"
    assert repr(folder.tree) == before


def test_the_manifest_is_written_on_the_first_write_and_the_folder_describes_itself(
    h: HostHarness,
) -> None:
    folder = picked(**{"README.md": b"hi"})
    pid = add(h, folder, "my tree")["id"]
    h.ok("file.write", b"new", project=pid, path="added.txt")
    assert ".voicebox" in folder.tree
    # the same folder picked again (e.g. in another profile) comes back as the same project
    h.ok("project.delete", project=pid)
    again = add(h, folder, "ignored name")
    assert (again["id"], again["name"]) == (pid, "my tree")


def test_the_same_file_operations_work_as_for_opfs(h: HostHarness) -> None:
    folder = picked()
    pid = add(h, folder)["id"]
    h.ok("file.write", b"x", project=pid, path="d/e.txt")
    h.ok("file.move", project=pid, src="d/e.txt", dst="f.txt")
    assert [f["path"] for f in h.ok("file.walk", project=pid)["files"]] == ["f.txt"]
    assert h.refused("file.write", b"x", project=pid, path="../up")["code"] == "path-outside-root"


def test_changes_made_outside_the_host_are_read_fresh(h: HostHarness) -> None:
    folder = picked(**{"a.txt": b"old"})
    pid = add(h, folder)["id"]
    assert h.call("file.read", project=pid, path="a.txt")[1] == b"old"
    run(folder.write(ProjectPath(("a.txt",)), b"changed behind the host's back"))
    assert h.call("file.read", project=pid, path="a.txt")[1] == b"changed behind the host's back"


def test_lapsed_permission_is_refused_by_name_and_the_project_stays_listed(h: HostHarness) -> None:
    folder = picked(**{"a.txt": b"1"})
    pid = add(h, folder)["id"]
    before = repr(folder.tree)
    h.folders.permission[pid] = "prompt"
    assert h.refused("project.open", project=pid)["code"] == "permission-required"
    h.folders.permission[pid] = "denied"
    assert h.refused("file.write", b"2", project=pid, path="a.txt")["code"] == "permission-denied"
    assert repr(folder.tree) == before
    assert pid in [p["id"] for p in h.ok("project.list")["projects"]]


def test_removing_a_folder_project_forgets_it_and_deletes_nothing(h: HostHarness) -> None:
    folder = picked(**{"a.txt": b"1", "sub__b.txt": b"2"})
    pid = add(h, folder)["id"]
    before = repr(folder.tree)
    removed = h.ok("project.delete", project=pid)
    assert removed["files_deleted"] is False
    assert repr(folder.tree) == before
    assert h.ok("project.list")["projects"] == []


def test_the_page_can_get_the_handle_back_for_a_permission_gesture(h: HostHarness) -> None:
    folder = picked()
    pid = add(h, folder)["id"]
    msg = json.dumps({"v": 1, "id": "x", "op": "project.folder_handle", "args": {"project": pid}})
    _, _, handle = run(h.host.handle_full(msg))
    assert handle is folder
    opfs = h.ok("project.create", name="o")["project"]["id"]
    assert h.refused("project.folder_handle", project=opfs)["code"] == "project-not-found"


def test_an_attachment_is_refused_by_operations_that_take_none(h: HostHarness) -> None:
    answer = h.attach("project.list", picked())
    assert answer["refusal"]["code"] == "message-malformed"
    assert h.attach("project.add_folder", None, name="x")["refusal"]["code"] == "message-malformed"


PERSONS_TEMPORARY_SHAPED = {".vbx-tmp-my-draft.md": b"my draft", ".vbx-tmp-": b"also mine"}


@pytest.mark.parametrize("kind", ["opfs", "picked"])
def test_a_persons_files_shaped_like_temporaries_are_listed_kept_and_refused_by_name(
    h: HostHarness, kind: str
) -> None:
    if kind == "picked":
        folder = picked(**PERSONS_TEMPORARY_SHAPED)
        pid = add(h, folder)["id"]
    else:
        pid = h.ok("project.create", name="in the browser")["project"]["id"]
        folder = h.roots.roots[pid]
        for name, data in PERSONS_TEMPORARY_SHAPED.items():
            run(folder.write(ProjectPath((name,)), data))
    run(folder.mkdir(ProjectPath((".vbx-tmp-empty-dir",))))
    before = repr(folder.tree)
    listed = {(e["name"], e["kind"]) for e in h.ok("file.list", project=pid)["entries"]}
    assert listed == {
        (".vbx-tmp-my-draft.md", "file"),
        (".vbx-tmp-", "file"),
        (".vbx-tmp-empty-dir", "dir"),
    }
    walked = {f["path"] for f in h.ok("file.walk", project=pid)["files"]}
    assert walked == {".vbx-tmp-my-draft.md", ".vbx-tmp-"}
    for op, args in [
        ("file.read", {"path": ".vbx-tmp-my-draft.md"}),
        ("file.delete", {"path": ".vbx-tmp-"}),
        ("file.delete", {"path": ".vbx-tmp-empty-dir"}),
        ("file.move", {"src": ".vbx-tmp-my-draft.md", "dst": "draft.md"}),
    ]:
        refusal = h.refused(op, project=pid, **args)
        assert refusal["code"] == "path-reserved"
        assert "reserved" in refusal["message"]
    assert repr(folder.tree) == before


@pytest.mark.parametrize("fold_case", [False, True], ids=["case-sensitive", "case-folding"])
def test_a_name_differing_only_in_case_from_a_sibling_is_refused_in_a_picked_folder(
    h: HostHarness, fold_case: bool
) -> None:
    folder = MemoryProjectFiles(fold_case=fold_case)
    for path, data in [("README.md", b"the person's"), ("notes.txt", b"n"), ("src/a.txt", b"a")]:
        run(folder.write(ProjectPath(tuple(path.split("/"))), data))
    pid = add(h, folder)["id"]
    before = repr(folder.tree)
    for op, body, args, sibling in [
        ("file.write", b"another file?", {"path": "readme.md"}, "README.md"),
        ("file.write", b"x", {"path": "SRC/b.txt"}, "src"),
        ("file.mkdir", None, {"path": "Src/deeper"}, "src"),
        ("file.move", None, {"src": "notes.txt", "dst": "ReadMe.md"}, "README.md"),
        ("file.move", None, {"src": "README.md", "dst": "readme.md"}, "README.md"),
        ("file.move", None, {"src": "notes.txt", "dst": "SRC/notes.txt"}, "src"),
    ]:
        refusal = h.refused(op, body, project=pid, **args)
        assert refusal["code"] == "path-case-collision", (op, args)
        assert f"'{sibling}'" in refusal["message"]
    # nothing was written: not the file, not a folder, not even the adopted folder's manifest
    assert repr(folder.tree) == before
    # the same spelling is the same entry, and a new name is fine
    h.ok("file.write", b"edited", project=pid, path="README.md")
    h.ok("file.write", b"b", project=pid, path="src/b.txt")
    h.ok("file.write", b"c", project=pid, path="src/new/c.txt")
    assert run(folder.read(ProjectPath(("README.md",)))) == b"edited"


def test_opfs_projects_keep_names_that_differ_only_in_case(h: HostHarness) -> None:
    """OPFS is case-sensitive and only this host writes it: both spellings are two files (an
    export to a case-insensitive disk is checked where it is unpacked, archive import)."""
    pid = h.ok("project.create", name="o")["project"]["id"]
    h.ok("file.write", b"1", project=pid, path="README.md")
    h.ok("file.write", b"2", project=pid, path="readme.md")
    h.ok("file.mkdir", project=pid, path="SRC")
    names = [e["name"] for e in h.ok("file.list", project=pid)["entries"]]
    assert names == ["README.md", "SRC", "readme.md"]
