"""The catalog remembers the OPFS projects it opened (core/projects/catalog.py; SPEC §3, issue 9): a
file operation does not read the manifest on every call, yet a rename or a delete is seen at
once and a picked folder's permission is still checked on every open."""

from __future__ import annotations

from typing import Any

from core.memory.adapters import MemoryProjectFiles
from core.paths import ProjectPath
from core.projects.project import MANIFEST_PATH
from tests.support import HostHarness


def test_file_operations_read_the_manifest_once_not_per_call() -> None:
    h = HostHarness()
    pid = h.ok("project.create", name="memo")["project"]["id"]
    original = MemoryProjectFiles.read
    reads: list[Any] = []

    async def counting(self: MemoryProjectFiles, path: ProjectPath) -> bytes:
        if path == MANIFEST_PATH:
            reads.append(path)
        return await original(self, path)

    MemoryProjectFiles.read = counting  # type: ignore[method-assign]
    try:
        h.ok("file.write", b"x", project=pid, path="a.txt")
        for _ in range(5):
            h.ok("file.read", project=pid, path="a.txt")
            h.ok("file.list", project=pid)
    finally:
        MemoryProjectFiles.read = original  # type: ignore[method-assign]
    assert len(reads) == 1


def test_a_rename_is_seen_by_the_next_open() -> None:
    h = HostHarness()
    pid = h.ok("project.create", name="before")["project"]["id"]
    assert h.ok("project.open", project=pid)["project"]["name"] == "before"
    h.ok("project.rename", project=pid, name="after")
    assert h.ok("project.open", project=pid)["project"]["name"] == "after"


def test_a_deleted_project_is_not_found_although_it_was_open() -> None:
    h = HostHarness()
    pid = h.ok("project.create", name="gone soon")["project"]["id"]
    h.ok("file.write", b"x", project=pid, path="a.txt")
    h.ok("project.delete", project=pid)
    assert h.refused("project.open", project=pid)["code"] == "project-not-found"
    assert h.refused("file.read", project=pid, path="a.txt")["code"] == "project-not-found"


def test_a_picked_folder_is_asked_for_permission_on_every_open() -> None:
    h = HostHarness()
    answer = h.attach("project.add_folder", MemoryProjectFiles(), name="picked")
    pid = answer["result"]["project"]["id"]
    h.ok("file.list", project=pid)
    h.folders.permission[pid] = "prompt"
    assert h.refused("file.list", project=pid)["code"] == "permission-required"
