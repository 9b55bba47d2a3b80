"""Two projects never share a display name (issue 17 item 7): one rule in core
(``core.projects.catalog.same_name_key``). A name a person types (create, rename) that another
project has is refused ``already-exists``; a name nobody typed (an archive's, a picked
folder's) becomes ``name (2)``, so no act fails on it and no two projects look the same."""

from __future__ import annotations

from core.projects.catalog import DUPLICATE_NAME, same_name_key
from tests.archive.kit import new_project, zip_of
from tests.support import HostHarness


def _names(h: HostHarness) -> list[str]:
    return [p["name"] for p in h.ok("project.list")["projects"]]


def test_a_name_is_the_same_whatever_its_case_width_or_end_spaces() -> None:
    assert same_name_key("Demo") == same_name_key("demo ") == same_name_key("ＤＥＭＯ")
    assert same_name_key("Demo") != same_name_key("Demo 2")


def test_creating_a_project_with_a_name_another_has_is_refused_and_makes_nothing() -> None:
    h = HostHarness()
    h.ok("project.create", name="Demo")
    for twin in ("Demo", "demo", "ＤＥＭＯ"):
        refusal = h.refused("project.create", name=twin)
        assert refusal["code"] == "already-exists" and refusal["field"] == "name"
        assert refusal["message"] == DUPLICATE_NAME
    # a typed name with outer spaces is refused for them first (issue 34, check_project_name)
    assert h.refused("project.create", name=" DEMO ")["code"] == "name-invalid"
    assert _names(h) == ["Demo"]


def test_renaming_onto_another_projects_name_is_refused_but_a_project_may_keep_its_own() -> None:
    h = HostHarness()
    h.ok("project.create", name="Alpha")
    beta = h.ok("project.create", name="Beta")["project"]["id"]
    assert h.refused("project.rename", project=beta, name="alpha")["code"] == "already-exists"
    assert h.ok("project.rename", project=beta, name="BETA")["project"]["name"] == "BETA"
    assert _names(h) == ["Alpha", "BETA"]


def test_an_import_under_a_name_nobody_typed_gets_the_first_free_number() -> None:
    h = HostHarness()
    new_project(h, "Copy", {"a": b"a"})
    archive = zip_of(("a", b"a"))
    body = _exported_as(h, "copy")
    assert h.ok("project.import", body)["project"]["name"] == "copy (2)"
    assert h.ok("project.import", body)["project"]["name"] == "copy (3)"
    assert sorted(map(same_name_key, _names(h))) == ["copy", "copy (2)", "copy (3)"]
    # a name a person typed that another project has is refused: the page asks for another
    refusal = h.refused("project.import", archive, name="Copy")
    assert refusal["code"] == "already-exists" and refusal["field"] == "name"


def _exported_as(h: HostHarness, name: str) -> bytes:
    """The archive of a project whose manifest names ``name`` (issue 33 item 3)."""
    pid = h.ok("project.list")["projects"][0]["id"]
    h.ok("project.rename", project=pid, name=name)
    answer, body = h.call("project.export", project=pid)
    assert answer["ok"] and body is not None
    return body


def test_a_typed_project_name_never_carries_a_secret_this_host_holds() -> None:
    """A provider key pasted as a project's name (create, rename, an import's typed name) is
    refused ``sanitizer_refused`` on ``name`` and changes nothing: the name is written to the
    manifest, the export's download name and its archive manifest, which leave this host
    (a remote environment's disk when imported there) — and the page would show the name as
    ``[redacted]`` with no word of why (the tryout of stop 46)."""
    h = HostHarness()
    secret = "sk-ant-api03-" + "Q7" * 24
    h.ctx.secrets.set_group("test-keys", [secret])
    pid = h.ok("project.create", name="Plain")["project"]["id"]
    archive = zip_of(("a", b"a"))
    for op, args in (
        ("project.create", {"name": f"try {secret}"}),
        ("project.rename", {"project": pid, "name": f"try {secret}"}),
    ):
        refusal = h.refused(op, **args)
        assert (refusal["code"], refusal["field"]) == ("sanitizer_refused", "name")
        assert secret not in refusal["message"]
    refusal = h.refused("project.import", archive, name=f"copy {secret}")
    assert (refusal["code"], refusal["field"]) == ("sanitizer_refused", "name")
    assert _names(h) == ["Plain"]
