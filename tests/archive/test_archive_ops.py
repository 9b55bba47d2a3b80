"""The host operations ``project.export`` and ``project.import`` (SPEC §10, §11)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

from core.archive.manifest import MANIFEST_NAME
from core.custody.environment import Environments, save_environments
from core.host.archive_ops import FALLBACK_NAME
from core.memory.adapters import MemoryProjectFiles, MemoryProjectRoots
from core.paths import ProjectPath
from core.policy import Policy
from tests.archive.kit import BINARY, UNICODE_PATH, new_project, storage, zip_of
from tests.support import HostHarness, run

FILES = {UNICODE_PATH: "текст ü 📦".encode(), "bin/data.bin": BINARY, "a.txt": b"a"}
LOCAL_KEY = "ek_" + "1" * 32


def _export(h: HostHarness, pid: str) -> tuple[dict, bytes]:
    answer, body = h.call("project.export", project=pid)
    assert answer["ok"], answer
    assert body is not None
    return answer, body


def test_export_answers_the_archive_as_body_and_a_summary_as_result() -> None:
    h = HostHarness()
    pid = new_project(h, "Проект-ü-📦", FILES)
    answer, body = _export(h, pid)
    result = answer["result"]
    assert result["size"] == len(body)
    manifest = zipfile.ZipFile(io.BytesIO(body)).read(MANIFEST_NAME)
    assert result["manifest_sha256"] == hashlib.sha256(manifest).hexdigest()
    assert result["files"] == 3 and result["bytes"] == sum(len(d) for d in FILES.values())
    assert result["name"] == "Проект-ü-📦" and result["filename"] == "Проект-ü-📦.zip"
    archive = zipfile.ZipFile(io.BytesIO(body))
    for path, data in FILES.items():
        assert archive.read(path) == data


def test_export_is_audited_with_size_manifest_sha256_and_counts() -> None:
    h = HostHarness()
    pid = new_project(h, "P", FILES)
    answer, body = _export(h, pid)
    record = h.sink.records[answer["logged"]]
    assert record["op"] == "project.export" and record["decision"] == "admitted"
    assert record["project"] == pid
    manifest = zipfile.ZipFile(io.BytesIO(body)).read(MANIFEST_NAME)
    assert record["details"]["manifest_sha256"] == hashlib.sha256(manifest).hexdigest()
    assert record["details"]["size"] == len(body)
    assert record["details"]["files"] == 3


def test_two_exports_through_the_host_are_byte_identical() -> None:
    h = HostHarness()
    pid = new_project(h, "P", FILES)
    assert _export(h, pid)[1] == _export(h, pid)[1]


def test_export_chunks_reach_the_sink_before_the_answer() -> None:
    h = HostHarness()
    pid = new_project(h, "P", {"big.bin": bytes(3 << 20), "small.txt": b"s"})
    chunks: list[bytes] = []

    async def sink(chunk: bytes) -> None:
        chunks.append(chunk)

    msg = json.dumps({"v": 1, "id": "x1", "op": "project.export", "args": {"project": pid}})
    text, body, _ = run(h.host.handle_full(msg, None, None, sink))
    answer = json.loads(text)
    assert answer["ok"] and body is None
    assert len(chunks) >= 3
    assert max(len(c) for c in chunks) <= 2 * (1 << 20) + (64 << 10)
    whole = b"".join(chunks)
    assert answer["result"]["size"] == len(whole)
    manifest = zipfile.ZipFile(io.BytesIO(whole)).read(MANIFEST_NAME)
    assert answer["result"]["manifest_sha256"] == hashlib.sha256(manifest).hexdigest()


def test_export_names_the_local_environment_as_source() -> None:
    h = HostHarness()
    envs = Environments().added(LOCAL_KEY, "this browser", "local", 0)
    run(save_environments(h.state, envs))
    pid = new_project(h, "P", {"a.txt": b"a"})
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(_export(h, pid)[1])).read(MANIFEST_NAME))
    assert manifest["source_env_key"] == LOCAL_KEY
    assert manifest["source_project"] == pid


def test_export_of_a_picked_folder_project_works_like_opfs() -> None:
    h = HostHarness()
    folder = MemoryProjectFiles()
    pid = h.attach("project.add_folder", folder, name="Folder")["result"]["project"]["id"]
    h.ok("file.write", b"in a folder", project=pid, path="x/y.txt")
    archive = zipfile.ZipFile(io.BytesIO(_export(h, pid)[1]))
    assert archive.read("x/y.txt") == b"in a folder"


def test_export_of_an_unknown_project_is_refused() -> None:
    h = HostHarness()
    assert h.refused("project.export", project="p_" + "0" * 16)["code"] == "project-not-found"


def test_import_creates_a_new_project_with_every_file() -> None:
    h = HostHarness()
    body = _export(h, new_project(h, "Source", FILES))[1]
    result = h.ok("project.import", body, name="Copy")
    new_id = result["project"]["id"]
    assert result["project"]["name"] == "Copy" and result["project"]["kind"] == "opfs"
    assert result["files"] == 3 and result["manifest"] is True
    assert result["archive_sha256"] == hashlib.sha256(body).hexdigest()
    for path, data in FILES.items():
        _, read = h.call("file.read", project=new_id, path=path)
        assert read == data
    assert "Copy" in [p["name"] for p in h.ok("project.list")["projects"]]


def test_import_takes_the_manifest_name_when_none_is_given() -> None:
    h = HostHarness()
    source = new_project(h, "Named in manifest", {"a": b"a"})
    body = _export(h, source)[1]
    h.ok("project.delete", project=source)
    assert h.ok("project.import", body)["project"]["name"] == "Named in manifest"
    assert h.ok("project.import", zip_of(("a", b"a")))["project"]["name"] == FALLBACK_NAME


def test_import_is_audited_as_a_project_event() -> None:
    h = HostHarness()
    answer, _ = h.call("project.import", zip_of(("a.txt", b"a")), name="I")
    record = h.sink.records[answer["logged"]]
    assert record["op"] == "project.import" and record["decision"] == "admitted"
    assert record["project"] == answer["result"]["project"]["id"]
    assert record["details"]["files"] == 1 and record["details"]["manifest"] is False


def test_import_needs_a_body() -> None:
    h = HostHarness()
    assert h.refused("project.import", name="x")["code"] == "message-malformed"


def test_import_is_refused_in_read_only_mode_and_nothing_is_created() -> None:
    h = HostHarness()
    h.ctx.policy = Policy(read_only=True)
    before = storage(h)
    assert h.refused("project.import", zip_of(("a", b"a")))["code"] == "read-only-mode"
    assert storage(h) == before


def test_import_with_an_invalid_name_creates_nothing() -> None:
    h = HostHarness()
    before = storage(h)
    assert h.refused("project.import", zip_of(("a", b"a")), name="  ")["code"] == "name-invalid"
    assert storage(h) == before


def test_case_variants_import_when_asked_for_a_case_sensitive_target() -> None:
    h = HostHarness()
    body = zip_of(("Readme.md", b"1"), ("README.md", b"2"))
    assert h.refused("project.import", body)["code"] == "archive-entry-case-collision"
    assert h.ok("project.import", body, case_sensitive=True)["files"] == 2


class QuotaRoots(MemoryProjectRoots):
    """Project roots whose projects hold at most ``quota`` bytes each."""

    def __init__(self, quota: int) -> None:
        super().__init__()
        self.quota = quota

    async def create(self, project_id: str) -> MemoryProjectFiles:
        root = await super().create(project_id)
        root.quota = self.quota
        return root


def test_a_storage_failure_mid_import_removes_the_new_project() -> None:
    h = HostHarness()
    h.ctx.roots = h.roots = QuotaRoots(quota=4096)
    existing = new_project(h, "Existing", {"a": b"a"})
    before = storage(h)
    body = zip_of(("one.bin", bytes(2000)), ("two.bin", bytes(2000)), ("three.bin", bytes(2000)))
    refusal = h.refused("project.import", body, name="Too big")
    assert refusal["code"] == "storage-quota-exceeded"
    assert storage(h) == before
    assert list(h.roots.roots) == [existing]


def test_an_export_of_a_picked_folder_says_which_of_the_persons_files_it_left_out_and_why() -> None:
    """Issue 29 item 14: a person's files whose names the path rule does not allow (here one
    shaped like a temporary, a Windows device name, macOS's ``Icon\\r``) cannot travel in an
    archive, and are named in the export's answer with the rule each fails — never dropped
    silently. The rest is exported."""
    h = HostHarness()
    folder = MemoryProjectFiles()
    for parts, data in [
        (("notes.md",), b"mine"),
        ((".vbx-tmp-my-draft.md",), b"my draft"),
        (("docs", "CON.txt"), b"device"),
        (("Icon\r",), b"mac"),
        ((".vbx-tmp-folder", "inside.md"), b"in a reserved folder"),
    ]:
        run(folder.write(ProjectPath(parts), data))
    pid = h.attach("project.add_folder", folder, name="Folder")["result"]["project"]["id"]
    answer, body = _export(h, pid)
    assert zipfile.ZipFile(io.BytesIO(body)).namelist() == ["notes.md", MANIFEST_NAME]
    result = answer["result"]
    assert result["skipped"] == 4
    left = {x["path"]: x["why"] for x in result["left_out"]}
    assert list(left) == [".vbx-tmp-folder/", ".vbx-tmp-my-draft.md", "Icon\\u000d", "docs/CON.txt"]
    assert "reserved for the host's atomic writes" in left[".vbx-tmp-my-draft.md"]
    assert "Windows device name" in left["docs/CON.txt"]
    assert "control character" in left["Icon\\u000d"]
    assert h.sink.records[answer["logged"]]["details"]["skipped"] == 4


def test_the_preview_under_a_taken_name_promises_only_what_the_import_will_do() -> None:
    h = HostHarness()
    body = _export(h, new_project(h, "tryout-one", {"a.txt": b"a"}))[1]
    preview = h.ok("project.import_preview", body)
    assert preview["name_taken"] and preview["suggested_name"] == "tryout-one (2)"
    first = preview["creates"][0]
    # the import never takes the taken name: it asks for another (and refuses this one)
    assert h.refused("project.import", body, name="tryout-one")["code"] == "already-exists"
    assert "A new project “tryout-one”" not in first
    assert "“tryout-one” is taken" in first and "name you choose" in first, first
    # a free name is promised as it is
    h.ok("project.delete", project=h.ok("project.list")["projects"][0]["id"])
    free = h.ok("project.import_preview", body)
    assert not free["name_taken"]
    assert free["creates"][0].startswith("A new project “tryout-one” in this browser's")
