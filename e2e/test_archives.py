"""Hostile archives in the browser (issue 4; SPEC §10): every one of the corpus is refused by
the real host with its own code, and the storage — project list and an existing project's
files — is unchanged after each. The corpus is the one the CPython suite uses."""

from __future__ import annotations

from e2e.hostpage import HostPage
from tests.archive.test_hostile_corpus import CORPUS


def test_each_hostile_archive_is_refused_with_its_own_code_and_storage_is_unchanged(
    host: HostPage,
) -> None:
    assert len(CORPUS) >= 12
    keep = host.ok("project.create", {"name": "keep"})["result"]["project"]["id"]
    host.ok("file.write", {"project": keep, "path": "a/b.txt"}, b"keep me")
    projects_before = host.ok("project.list")["result"]["projects"]
    files_before = host.ok("file.walk", {"project": keep})["result"]["files"]
    codes = set()
    for label, (code, data) in CORPUS.items():
        refusal = host.refused("project.import", {"name": f"hostile {label}"}, data)
        assert refusal["code"] == str(code), (label, refusal)
        codes.add(refusal["code"])
        assert host.ok("project.list")["result"]["projects"] == projects_before, label
        assert host.ok("file.walk", {"project": keep})["result"]["files"] == files_before, label
    assert len(codes) >= 10
    host.assert_clean()
