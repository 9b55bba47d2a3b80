"""A save over a file that changed since its editor opened it is refused ``file-changed``,
never a silent loss (issue 33 item 2; core/projects/edit_version.py)."""

from __future__ import annotations

import hashlib

import pytest

from tests.support import HostHarness


@pytest.fixture
def h() -> HostHarness:
    return HostHarness()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def project(h: HostHarness) -> str:
    return h.ok("project.create", name="p")["project"]["id"]


def test_a_save_over_a_file_changed_since_it_was_opened_is_refused_and_nothing_is_lost(
    h: HostHarness,
) -> None:
    pid = project(h)
    h.ok("file.write", b"A", project=pid, path="f.txt")
    # the second tab opened A; the first tab saves B
    h.ok("file.write", b"B", project=pid, path="f.txt", if_sha256=sha(b"A"))
    refusal = h.refused("file.write", b"C", project=pid, path="f.txt", if_sha256=sha(b"A"))
    assert refusal["code"] == "file-changed"
    assert refusal["status"] == 409
    assert refusal["field"] == "if_sha256"
    assert "changed since you opened it" in refusal["message"]
    assert "B" not in refusal["message"].replace("f.txt", "")
    assert h.call("file.read", project=pid, path="f.txt")[1] == b"B"
    # reload then save: the version now opened is B
    h.ok("file.write", b"C", project=pid, path="f.txt", if_sha256=sha(b"B"))
    assert h.call("file.read", project=pid, path="f.txt")[1] == b"C"
    # overwrite on purpose: a write that names no version
    h.ok("file.write", b"D", project=pid, path="f.txt")
    assert h.call("file.read", project=pid, path="f.txt")[1] == b"D"


def test_a_file_deleted_or_created_elsewhere_counts_as_changed(h: HostHarness) -> None:
    pid = project(h)
    h.ok("file.write", b"A", project=pid, path="gone.txt")
    h.ok("file.delete", project=pid, path="gone.txt")
    refusal = h.refused("file.write", b"mine", project=pid, path="gone.txt", if_sha256=sha(b"A"))
    assert refusal["code"] == "file-changed" and "deleted or moved" in refusal["message"]
    assert h.call("file.read", project=pid, path="gone.txt")[0]["ok"] is False
    # a file begun as new ('') that someone else created meanwhile
    h.ok("file.write", b"theirs", project=pid, path="new.txt")
    refusal = h.refused("file.write", b"mine", project=pid, path="new.txt", if_sha256="")
    assert refusal["code"] == "file-changed"
    assert h.call("file.read", project=pid, path="new.txt")[1] == b"theirs"
    h.ok("file.write", b"fresh", project=pid, path="fresh.txt", if_sha256="")
    assert h.call("file.read", project=pid, path="fresh.txt")[1] == b"fresh"


def test_a_version_that_is_not_a_sha256_is_invalid_input(h: HostHarness) -> None:
    pid = project(h)
    refusal = h.refused("file.write", b"x", project=pid, path="f.txt", if_sha256="ABC")
    assert refusal["code"] == "message-malformed"
