"""The server's storage (SPEC §3, seed 002 §2; issue 15): no symlink inside a project is ever
followed, writes are atomic, a picked folder's letter-case rule holds, HOST_DIR is 0700 with
every file 0600."""

from __future__ import annotations

import base64
import io
import stat
import zipfile
from pathlib import Path

from tests.server.harness import Server, answer_of, execute_frame, hello


def _refusal(answer) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    return answer.status_code, answer.json()["refusal"]["code"]


def _write(server: Server, bearer: str, project: str, path: str, data: bytes):  # type: ignore[no-untyped-def]
    args = {"project": project, "path": path, "content_b64": base64.b64encode(data).decode()}
    return server.execute(bearer, "file.write", args)


def _export(server: Server, bearer: str, project: str) -> zipfile.ZipFile:
    with server.channel(max_queue=None) as ws:
        ws.send(hello(bearer))
        ws.send(execute_frame("e", server.env_key, "project.export", {"project": project}))
        answer, data = answer_of(ws, "e", timeout=60)
    assert answer["type"] == "result", answer
    return zipfile.ZipFile(io.BytesIO(data))


def test_a_symlink_inside_a_project_is_never_followed(server: Server, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not read")
    bearer = server.pair()
    project = server.create_project(bearer)
    folder = server.root / "projects" / project
    (folder / "src").mkdir()
    (folder / "src" / "kept.txt").write_text("mine")
    (folder / "out").symlink_to(outside)
    (folder / "alias.txt").symlink_to(outside / "secret.txt")
    (folder / "src" / "inner").symlink_to(folder / "src")  # even a link that stays inside

    assert _refusal(_write(server, bearer, project, "out/new.txt", b"x")) == (
        403,
        "path-outside-root",
    )
    assert _refusal(_write(server, bearer, project, "alias.txt", b"x")) == (
        403,
        "path-outside-root",
    )
    assert _refusal(_write(server, bearer, project, "src/inner/x.txt", b"x")) == (
        403,
        "path-outside-root",
    )
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "do not read"
    assert (folder / "alias.txt").is_symlink()

    walked = server.execute(bearer, "file.walk", {"project": project}).json()["result"]
    assert [f["path"] for f in walked["files"]] == ["src/kept.txt"]
    archive = _export(server, bearer, project)
    names = [n for n in archive.namelist() if not n.startswith(".voicebox")]
    assert names == ["src/kept.txt"]
    assert b"do not read" not in b"".join(archive.read(n) for n in archive.namelist())


def test_a_project_folder_that_is_a_symlink_is_not_a_project(
    server: Server, tmp_path: Path
) -> None:
    bearer = server.pair()
    project = server.create_project(bearer)
    real = server.root / "projects" / project
    moved = tmp_path / "elsewhere"
    real.rename(moved)
    real.symlink_to(moved)
    answer = server.execute(bearer, "file.walk", {"project": project})
    assert _refusal(answer) == (404, "project-not-found")
    listed = server.execute(bearer, "projects.list", {}).json()["result"]["projects"]
    assert project not in [p["id"] for p in listed]


def test_writes_are_atomic_and_leave_no_temporary(server: Server) -> None:
    bearer = server.pair()
    project = server.create_project(bearer)
    for size in (10, 150_000, 0):
        data = bytes(range(256)) * (size // 256) + b"t" * (size % 256)
        answer = _write(server, bearer, project, "docs/a.bin", data)
        assert answer.status_code == 200, answer.text
        receipt = answer.json()["receipt"]
        assert receipt["size"] == len(data)
        on_disk = server.root / "projects" / project / "docs" / "a.bin"
        assert on_disk.read_bytes() == data
    leftovers = [p.name for p in (server.root / "projects" / project).rglob(".vbx-tmp-*")]
    assert leftovers == []


def test_a_name_differing_only_in_letter_case_is_refused(server: Server) -> None:
    bearer = server.pair()
    project = server.create_project(bearer)
    assert _write(server, bearer, project, "README.md", b"one").status_code == 200
    assert _refusal(_write(server, bearer, project, "readme.md", b"two")) == (
        409,
        "path-case-collision",
    )
    assert _write(server, bearer, project, "README.md", b"three").status_code == 200


def test_host_dir_is_0700_and_every_file_in_it_0600(server: Server) -> None:
    bearer = server.pair()
    project = server.create_project(bearer)
    _write(server, bearer, project, "a.txt", b"a")
    server.revoke()
    assert stat.S_IMODE(server.host_dir.stat().st_mode) == 0o700
    files = sorted(server.host_dir.iterdir())
    names = {p.name for p in files}
    assert {".host-token", "environments.json", "pairings.json", "audit.sqlite3"} <= names
    assert {"audit-key", "audit-anchor.json"} <= names
    for path in files:
        try:
            mode = stat.S_IMODE(path.lstat().st_mode)
        except FileNotFoundError:  # an atomic write's temporary, renamed since it was listed
            assert path.name.startswith(".vbx-tmp-"), path.name
            continue
        assert mode == 0o600, path.name
    assert stat.S_IMODE((server.root / "exec-home").stat().st_mode) == 0o700


def test_a_peer_projects_archive_carries_its_memory_and_no_host_local_record(
    server: Server,
) -> None:
    """Issue 33 item 3: the environment server exports through the host's own
    ``project.export``, so a peer project's archive carries its block store and letters —
    verified — and never its manifest, mailbox index or trash."""
    import json

    from core.archive.manifest import MANIFEST_NAME
    from core.missions.blocks import Block, SkeletonStore, store_bytes

    bearer = server.pair()
    project = server.create_project(bearer)
    assert _write(server, bearer, project, "src/a.txt", b"a").status_code == 200
    meta = server.root / "projects" / project / ".voicebox"
    store = SkeletonStore(
        skeleton_id="sk_peer", store_version=1, blocks=[Block(id="sb_000000000001", name="Core")]
    )
    (meta / "skeleton.json").write_bytes(store_bytes(store))
    (meta / "mailbox.index").write_bytes(b"a cache of this host")
    (meta / "trash").mkdir()
    (meta / "trash" / "gone.txt").write_bytes(b"deleted")
    archive = _export(server, bearer, project)
    carried = {n for n in archive.namelist() if n.startswith(".voicebox/")}
    assert carried == {".voicebox/skeleton.json", MANIFEST_NAME}
    manifest = json.loads(archive.read(MANIFEST_NAME))
    assert manifest["schema"] == "voicebox-archive-v2"
    assert manifest["memory"]["blocks"] == 1 and manifest["memory"]["letters"] == 0
