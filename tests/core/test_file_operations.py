"""File operations through the dispatcher over in-memory ports (core/host/file_ops.py; SPEC §3)."""

from __future__ import annotations

import hashlib

import pytest

from core.memory.adapters import MemoryProjectFiles
from core.policy import Policy
from core.refusals import Code, Refused
from core.tools.admission import CallRequest
from tests.support import HostHarness, run


@pytest.fixture
def h() -> HostHarness:
    return HostHarness()


def project(h: HostHarness, name: str = "p") -> str:
    return h.ok("project.create", name=name)["project"]["id"]


def test_write_then_read_round_trips_bytes_and_reports_sha256(h: HostHarness) -> None:
    pid = project(h)
    data = bytes(range(256)) * 3
    written = h.ok("file.write", data, project=pid, path="bin/blob.dat")
    assert written == {
        "path": "bin/blob.dat",
        "size": 768,
        "sha256": hashlib.sha256(data).hexdigest(),
        "composed_from": None,
    }
    answer, body = h.call("file.read", project=pid, path="bin/blob.dat")
    assert body == data and answer["result"] == written


def test_listing_is_one_folder_sorted_and_hides_metadata(h: HostHarness) -> None:
    pid = project(h)
    for path in ["b.txt", "a/x.txt", "a/y/z.txt"]:
        h.ok("file.write", b"1", project=pid, path=path)
    root = h.ok("file.list", project=pid)["entries"]
    assert [(e["name"], e["kind"]) for e in root] == [("a", "dir"), ("b.txt", "file")]
    assert [e["name"] for e in h.ok("file.list", project=pid, folder="a")["entries"]] == [
        "x.txt",
        "y",
    ]
    assert [f["path"] for f in h.ok("file.walk", project=pid)["files"]] == [
        "a/x.txt",
        "a/y/z.txt",
        "b.txt",
    ]


def test_refused_writes_leave_storage_byte_identical(h: HostHarness) -> None:
    pid = project(h)
    h.ok("file.write", b"keep", project=pid, path="keep.txt")
    before = repr(h.roots.roots[pid].tree)
    for path, code in [
        ("../escape", "path-outside-root"),
        ("/abs", "path-outside-root"),
        ("a\x00b", "path-invalid"),
        (".voicebox/manifest.json", "path-reserved"),
        (".vbx-tmp-1", "path-reserved"),
    ]:
        assert h.refused("file.write", b"x", project=pid, path=path)["code"] == code
    assert repr(h.roots.roots[pid].tree) == before


def test_if_absent_refuses_to_overwrite(h: HostHarness) -> None:
    pid = project(h)
    h.ok("file.write", b"1", project=pid, path="a.txt")
    assert (
        h.refused("file.write", b"2", project=pid, path="a.txt", if_absent=True)["code"]
        == "already-exists"
    )
    assert h.call("file.read", project=pid, path="a.txt")[1] == b"1"


def test_writing_over_a_folder_is_refused(h: HostHarness) -> None:
    pid = project(h)
    h.ok("file.mkdir", project=pid, path="d")
    assert h.refused("file.write", b"x", project=pid, path="d")["code"] == "is-a-directory"


def test_move_renames_files_and_refuses_clobbering(h: HostHarness) -> None:
    pid = project(h)
    h.ok("file.write", b"1", project=pid, path="a.txt")
    h.ok("file.write", b"2", project=pid, path="b.txt")
    assert h.refused("file.move", project=pid, src="a.txt", dst="b.txt")["code"] == "already-exists"
    h.ok("file.move", project=pid, src="a.txt", dst="sub/c.txt")
    assert h.call("file.read", project=pid, path="sub/c.txt")[1] == b"1"
    assert h.refused("file.move", project=pid, src="nope", dst="x")["code"] == "file-not-found"


def test_deleting_a_non_empty_folder_needs_recursive(h: HostHarness) -> None:
    pid = project(h)
    h.ok("file.write", b"1", project=pid, path="d/a.txt")
    assert h.refused("file.delete", project=pid, path="d")["code"] == "directory-not-empty"
    h.ok("file.delete", project=pid, path="d", recursive=True)
    assert h.ok("file.list", project=pid)["entries"] == []


def test_read_only_mode_refuses_every_write_and_allows_reads(h: HostHarness) -> None:
    pid = project(h)
    h.ok("file.write", b"1", project=pid, path="a.txt")
    h.ctx.policy = Policy(read_only=True)
    assert h.refused("file.write", b"2", project=pid, path="a.txt")["code"] == "read-only-mode"
    assert h.refused("project.create", name="x")["code"] == "read-only-mode"
    assert h.call("file.read", project=pid, path="a.txt")[1] == b"1"


def test_unknown_projects_are_refused(h: HostHarness) -> None:
    assert h.refused("file.list", project="p_0000000000000000")["code"] == "project-not-found"


def test_project_lifecycle_create_rename_delete(h: HostHarness) -> None:
    pid = project(h, "first")
    assert h.ok("project.rename", project=pid, name="second")["project"]["name"] == "second"
    assert [p["name"] for p in h.ok("project.list")["projects"]] == ["second"]
    h.ok("project.delete", project=pid)
    assert h.ok("project.list")["projects"] == []
    assert h.refused("project.open", project=pid)["code"] == "project-not-found"


def test_a_quota_failure_is_named_and_writes_nothing(h: HostHarness) -> None:
    pid = project(h)
    h.roots.roots[pid].quota = 1000
    h.ok("file.write", b"x" * 100, project=pid, path="small.bin")
    assert (
        h.refused("file.write", b"y" * 5000, project=pid, path="small.bin")["code"]
        == "storage-quota-exceeded"
    )
    assert h.call("file.read", project=pid, path="small.bin")[1] == b"x" * 100


def test_a_project_without_its_manifest_is_never_listed_and_is_swept_at_start() -> None:
    from core.projects.catalog import ProjectCatalog

    h = HostHarness()
    catalog = ProjectCatalog(h.roots, h.clock, h.ctx.random)
    staged, _ = run(catalog.create_staged("half"))
    assert h.ok("project.list")["projects"] == []
    assert h.refused("project.open", project=staged.id)["code"] == "project-not-found"
    kept = h.ok("project.create", name="whole")["project"]["id"]
    assert run(catalog.sweep_unfinished()) == [staged.id]
    assert run(h.roots.list_ids()) == [kept]


def tool_write(h: HostHarness, pid: str, path: str) -> Code:
    """``file.write`` as an agent's ``tool.call`` (no gesture): the refusal code it gets."""
    box = h.host.tools
    entry = box.registry.get("file.write")
    assert entry is not None
    args = {"project": pid, "path": path, "content_b64": "eA=="}
    admitted = box.admit(CallRequest("file.write", entry.descriptor_id, args))
    with pytest.raises(Refused) as caught:
        run(box.run(admitted, actor="agent"))
    return caught.value.code


CASE_ALIASES = [
    ".VOICEBOX/x",
    ".Voicebox/x",
    ".VOICEBOX/skeleton.json",
    ".VBX-TMP-x",
    "a/.Vbx-Tmp-1",
]


@pytest.mark.parametrize("kind", ["opfs", "picked", "picked-case-folding"])
def test_case_aliases_of_reserved_names_are_refused_through_the_page_and_tool_call(
    h: HostHarness, kind: str
) -> None:
    """On a case-folding disk ``.VOICEBOX/skeleton.json`` IS the metadata's skeleton: a write
    there would bypass ``receipt.import`` and ``blocks.ratify`` (issue 13 finding 2)."""
    if kind == "opfs":
        pid = project(h)
        files = h.roots.roots[pid]
    else:
        files = MemoryProjectFiles(fold_case=kind == "picked-case-folding")
        answer = h.attach("project.add_folder", files, name="picked")
        pid = answer["result"]["project"]["id"]
    h.ok("file.write", b"first", project=pid, path="a.txt")  # the metadata now exists
    before = repr(files.tree)
    for path in CASE_ALIASES:
        for op, body in [("file.write", b"x"), ("file.mkdir", None), ("file.read", None)]:
            assert h.refused(op, body, project=pid, path=path)["code"] == "path-reserved"
        assert tool_write(h, pid, path) == Code.PATH_RESERVED
    assert repr(files.tree) == before


class _ListsAtOnce(MemoryProjectFiles):
    """The in-memory project, able to list several folders in one wait (like a browser folder,
    :class:`~core.ports.ListsFolders`); counts the waits a walk makes."""

    def __init__(self) -> None:
        super().__init__()
        self.waits = 0

    async def list_dir(self, folder):  # type: ignore[no-untyped-def]
        self.waits += 1
        return await super().list_dir(folder)

    async def list_dirs(self, folders):  # type: ignore[no-untyped-def]
        self.waits += 1
        return [await super(_ListsAtOnce, self).list_dir(folder) for folder in folders]


def test_file_walk_lists_a_depth_of_folders_in_one_wait_where_storage_can() -> None:
    """Issue 34, round 42: ``file.walk`` (what the streamed export is named and sized by) asked
    one listing per folder — each a wait on the browser's storage; it now asks a depth at a
    time (through read-through wrappers too), with the same answer as folder by folder."""
    from core.host.file_ops import walk
    from core.paths import ProjectPath, parse_path
    from core.projects.case_guard import CaseGuard

    at_once = _ListsAtOnce()
    plain = MemoryProjectFiles()
    for i in range(5):
        for j in range(4):
            for files in (at_once, plain):
                run(files.write(parse_path(f"d{i}/e{j}/f{i}{j}.txt"), b"x" * (i + j)))
    for files in (at_once, plain):
        run(files.write(parse_path("top.txt"), b"top"))
        run(files.write(ProjectPath((".voicebox", "hidden.json")), b"{}"))
    expected = run(walk(plain, ()))
    at_once.waits = 0
    got = run(walk(CaseGuard(at_once), ()))
    assert got == expected and len(got) == 21
    assert ".voicebox/hidden.json" not in [w.path for w in got]
    assert at_once.waits == 3  # the root, the 5 d*, the 20 e*: one wait a depth (was 26)
    assert [w.size for w in run(walk(CaseGuard(at_once), ("d4",)))] == [4, 5, 6, 7]
