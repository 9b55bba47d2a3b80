"""A new name sent in Unicode NFD is stored in NFC and the answer says so; only a collision in
NFC is refused (issue 33 item 4; core/paths.py rule d, core/projects/composed.py)."""

from __future__ import annotations

import pytest

from core.paths import parse_new_path, parse_path
from core.refusals import Code, Refused
from tests.support import HostHarness

NFC, NFD = "caf\u00e9.txt", "cafe\u0301.txt"


@pytest.fixture
def h() -> HostHarness:
    return HostHarness()


def project(h: HostHarness) -> str:
    return h.ok("project.create", name="p")["project"]["id"]


def test_a_new_name_in_nfd_is_composed_to_nfc_and_the_spelling_sent_is_said() -> None:
    path, sent = parse_new_path(f"R\u00e9sum\u00e9s/{NFD}".replace("\u00e9", "e\u0301"))
    assert str(path) == f"R\u00e9sum\u00e9s/{NFC}"
    assert sent == f"Re\u0301sume\u0301s/{NFD}"
    assert parse_new_path(NFC) == (parse_path(NFC), None)
    assert parse_new_path("plain/ascii.txt") == (parse_path("plain/ascii.txt"), None)
    # composing never lets another rule's name through
    with pytest.raises(Refused) as caught:
        parse_new_path("../cafe\u0301")
    assert caught.value.code == Code.PATH_OUTSIDE_ROOT
    with pytest.raises(Refused):
        parse_path(NFD)  # an existing name is never recomposed: read/delete refuse NFD


def test_an_nfd_upload_and_create_are_stored_in_nfc_not_refused(h: HostHarness) -> None:
    pid = project(h)
    written = h.ok("file.write", b"x", project=pid, path=NFD, if_absent=True)
    assert written["path"] == NFC and written["composed_from"] == NFD
    made = h.ok("file.mkdir", project=pid, path="Cre\u0300me")
    assert made == {"path": "Cr\u00e8me", "composed_from": "Cre\u0300me"}
    names = [e["name"] for e in h.ok("file.list", project=pid)["entries"]]
    assert names == ["Cr\u00e8me", NFC]
    assert h.call("file.read", project=pid, path=NFC)[1] == b"x"
    moved = h.ok("file.move", project=pid, src=NFC, dst="Cre\u0300me/na\u0308ive.txt")
    assert moved["path"] == "Cr\u00e8me/n\u00e4ive.txt"
    assert moved["composed_from"] == "Cre\u0300me/na\u0308ive.txt"


def test_an_nfd_name_whose_nfc_spelling_is_taken_is_refused_as_a_collision(
    h: HostHarness,
) -> None:
    pid = project(h)
    h.ok("file.write", b"first", project=pid, path=NFC)
    for args in ({"if_absent": True}, {}):  # create, and a plain replace: neither lands on it
        refusal = h.refused("file.write", b"second", project=pid, path=NFD, **args)
        assert refusal["code"] == "path-nfc-collision"
        assert refusal["status"] == 409
        assert "NFC" in refusal["message"]
    assert h.call("file.read", project=pid, path=NFC)[1] == b"first"
    assert h.refused("file.mkdir", project=pid, path=NFD)["code"] == "path-nfc-collision"
    h.ok("file.write", b"other", project=pid, path="other.txt")
    refusal = h.refused("file.move", project=pid, src="other.txt", dst=NFD, on_conflict="replace")
    assert refusal["code"] == "path-nfc-collision"
    # keep both is no collision: the bytes go beside it under a free name
    beside = h.ok("file.write", b"second", project=pid, path=NFD, keep_both=True)
    assert beside["path"] == "caf\u00e9 (2).txt"
    assert h.call("file.read", project=pid, path=NFC)[1] == b"first"


def test_a_twin_spelt_in_nfd_already_in_the_folder_collides(h: HostHarness) -> None:
    pid = project(h)
    h.ok("file.list", project=pid)
    # another program left an NFD name in the folder (the host itself never writes one)
    h.roots.roots[pid].tree[NFD] = b"theirs"
    refusal = h.refused("file.write", b"mine", project=pid, path="cafe\u0301.txt")
    assert refusal["code"] == "path-nfc-collision"
    assert h.roots.roots[pid].tree[NFD] == b"theirs" and NFC not in h.roots.roots[pid].tree
