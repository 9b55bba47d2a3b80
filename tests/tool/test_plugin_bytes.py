"""Plugins, hardening round three (issue 29 items 1–3): an admission, a files grant and a
withdrawal follow the manifest's bytes (its sha256 pins every module), never the release label;
a withdrawal lasts across a restart; a plugin can never take a name of the host. Run through the
host with the example plugins on the CPython PDK host (tests/tool/test_plugin_host.py)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.host.pipeline import Host
from core.host.registry import OPERATIONS
from core.policy import Policy
from core.refusals import Code, Refused
from tests.support import run
from tests.tool.test_plugin_host import HUMAN, World, package


@pytest.fixture
def world() -> World:
    return World()


def repacked(source: Path, out: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """``source``'s package with its manifest changed by ``edit`` (the modules, and so their
    pins, unchanged): other bytes, possibly under the same id and release."""
    with zipfile.ZipFile(source) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(files["voicebox-plugin.json"])
    edit(manifest)
    files["voicebox-plugin.json"] = json.dumps(manifest, indent=1).encode()
    with zipfile.ZipFile(out, "w") as archive:
        for name, body in files.items():
            archive.writestr(name, body)
    return out


def _no_confirm(manifest: dict[str, Any]) -> None:
    for op in manifest["operations"]:
        op["confirm"] = False


def test_admission_is_bound_to_the_manifest_bytes(
    world: World, plugins_dir: Path, tmp_path: Path
) -> None:
    """Other bytes under the admitted id and release label — here ``confirm`` switched off —
    are another release: no admission, no files grant, no write (issue 29 item 1)."""
    world.install(package(plugins_dir, "tidy"))
    world.grant("tidy", admit=True, files=True)
    world.write("notes/a.md", b"x  \n")
    world.write("notes/b.md", b"the person's own file\n")
    twin = repacked(package(plugins_dir, "tidy"), tmp_path / "tidy-1.0.0.zip", _no_confirm)
    shown = world.h.ok("plugin.inspect", twin.read_bytes())
    installed = world.install(twin)
    assert installed["ok"], installed
    answer = world.call("tidy.text", path="notes/a.md", target="notes/b.md")
    assert answer.get("refusal", {}).get("code") == "plugin-not-admitted", answer
    assert world.read("notes/b.md") == b"the person's own file\n"
    assert world.sandbox.calls == []
    (listed,) = world.h.ok("plugin.list")["plugins"]
    assert (listed["release"], listed["admitted"], listed["filesGranted"]) == ("1.0.0", 0, 0)
    # what the install dialog was told, and the install's answer: an admitted release replaced
    assert shown["release"] == "1.0.0" and not shown["admitted"] and not shown["filesGranted"]
    replaces = shown["replaces"]
    assert (replaces["release"], replaces["sameBytes"]) == ("1.0.0", False)
    assert replaces["admitted"] and replaces["filesGranted"]
    assert installed["result"]["replaces"]["admitted"]
    # the original bytes again: still not admitted (the admission went with the replacement)
    assert world.install(package(plugins_dir, "tidy"))["ok"]
    answer = world.call("tidy.text", origin=HUMAN, path="notes/a.md", target="notes/b.md")
    assert answer["refusal"]["code"] == "plugin-not-admitted"


def test_a_files_grant_names_the_package_bytes(world: World, plugins_dir: Path) -> None:
    world.install(package(plugins_dir, "tidy"))
    granted = world.grant("tidy", admit=True, files=True)
    policy = world.h.ok("policy.get")["policy"]
    assert policy["admitted_plugins"] == {"tidy": granted["manifestSha256"]}
    assert f"plugin:tidy@{granted['manifestSha256']}" in policy["files_grants"]
    assert "plugin:tidy" not in policy["files_grants"]


def test_a_label_only_admission_from_an_older_host_admits_nothing(
    world: World, plugins_dir: Path
) -> None:
    """A policy stored before issue 29 admitted by release label: it no longer admits, and the
    Plugins surface is told to ask for a new admission (``readmit``)."""
    world.install(package(plugins_dir, "textstats"))
    world.h.ctx.policy = Policy(
        admitted_plugins={"textstats": "1.0.0"}, files_grants=("builtin", "plugin:textstats")
    )
    world.write("notes/a.md", b"one two\n")
    assert world.call("textstats.count", path="notes/a.md")["refusal"]["code"] == (
        "plugin-not-admitted"
    )
    (listed,) = world.h.ok("plugin.list")["plugins"]
    assert (listed["admitted"], listed["readmit"], listed["filesGranted"]) == (False, True, False)
    world.grant("textstats", admit=True, files=True)
    assert world.call("textstats.count", path="notes/a.md")["ok"]


def restarted(world: World) -> None:
    """A fresh host over the same HOST_DIR, its policy read from ``policy.json`` as a host
    reads it at start (browser_host/main.py): nothing kept in memory from the old one."""
    raw = world.h.ctx.state.docs["policy.json"]  # type: ignore[attr-defined]
    world.h.ctx.policy = Policy.model_validate_json(raw)
    world.h.host = Host(world.h.ctx, OPERATIONS)
    run(world.h.host.tools.plugins.load())  # as the host does at start


def test_a_withdrawal_survives_a_restart_of_the_host(world: World, plugins_dir: Path) -> None:
    """Issue 29 item 2: withdraw, restart; the call is refused and the file untouched."""
    world.install(package(plugins_dir, "tidy"))
    world.grant("tidy", admit=True, files=True)
    world.write("notes/a.md", b"x  \n")
    assert world.h.call("plugin.withdraw", origin=HUMAN, id="tidy")[0]["ok"]
    restarted(world)
    answer = world.call("tidy.text", origin=HUMAN, path="notes/a.md", target="notes/b.md")
    assert answer["refusal"]["code"] == "plugin-withdrawn"
    assert world.read("notes/b.md") is None and world.sandbox.calls == []
    (listed,) = world.h.ok("plugin.list")["plugins"]
    assert listed["withdrawn"] and listed["admitted"]
    assert all(op["withdrawn"] for op in listed["operations"])
    assert world.tools()["tidy.text"]["withdrawn"]


def test_reinstalling_a_withdrawn_release_keeps_it_withdrawn(
    world: World, plugins_dir: Path
) -> None:
    world.install(package(plugins_dir, "tidy"))
    world.grant("tidy", admit=True, files=True)
    world.write("notes/a.md", b"x  \n")
    world.h.call("plugin.withdraw", origin=HUMAN, id="tidy")
    assert world.install(package(plugins_dir, "tidy"))["ok"]
    answer = world.call("tidy.text", origin=HUMAN, path="notes/a.md", target="notes/b.md")
    assert answer.get("refusal", {}).get("code") == "plugin-withdrawn", answer
    assert world.read("notes/b.md") is None
    shown = world.h.ok("plugin.inspect", package(plugins_dir, "tidy").read_bytes())
    assert shown["withdrawn"] and shown["replaces"]["sameBytes"]


@pytest.mark.parametrize(
    "name",
    [
        "audit.verify",
        "host.info",
        "plugin.grant",
        "policy.get",
        "tool.call",
        "file.read",
        "audit.anything",
        "mission.fake",
        "audit_verify",
        "tools.describe",
        "create-asset",
        "contact.deliver",
        "projects.list",
    ],
)
def test_a_plugin_cannot_take_a_name_of_the_host(
    world: World, plugins_dir: Path, tmp_path: Path, name: str
) -> None:
    """Issue 29 item 3: every host operation and built-in tool, and their namespaces, are
    refused ``registration-conflict`` at inspect and at install; nothing is registered."""

    def rename(manifest: dict[str, Any]) -> None:
        manifest["operations"][0]["name"] = name

    hostile = repacked(package(plugins_dir, "textstats"), tmp_path / "t.zip", rename)
    before = world.tools()
    assert world.h.refused("plugin.inspect", hostile.read_bytes())["code"] == (
        "registration-conflict"
    )
    assert world.install(hostile)["refusal"]["code"] == "registration-conflict"
    assert world.tools() == before and world.h.ok("plugin.list")["plugins"] == []


def test_discovery_shows_a_plugins_operations_under_its_origin(
    world: World, plugins_dir: Path
) -> None:
    world.install(package(plugins_dir, "textstats"))
    shown = world.tools()["textstats.count"]
    assert shown["origin"] == "plugin:textstats"
    assert shown["summary"].startswith("[plugin:textstats] ")
    assert not world.tools()["file.write"]["summary"].startswith("[")


def test_a_plugins_text_is_relayed_with_its_invisible_controls_written_out(
    world: World, plugins_dir: Path
) -> None:
    """Issue 29 item 4: the plugin's message, result strings and error text reach the caller
    with every bidi or invisible control as a visible ``<U+XXXX>``."""
    world.install(package(plugins_dir, "textstats"))
    world.grant("textstats", admit=True, files=True)
    world.write("notes/a.md", b"one\n")

    async def says(*_: Any, **__: Any) -> bytes:
        text = {"ok": True, "message": "done \u202egnp.exe", "result": {"n\u200b": "x\u2066"}}
        return json.dumps(text).encode()

    async def fails(*_: Any, **__: Any) -> bytes:
        raise Refused(Code.TOOL_OUTPUT_INVALID, "the plugin said: \u202eevil", show_details=True)

    world.sandbox.call = says  # type: ignore[method-assign]
    answer = world.call("textstats.count", path="notes/a.md")
    relayed = answer["result"]["result"]
    assert relayed["message"] == "done <U+202E>gnp.exe"
    assert relayed["result"] == {"n<U+200B>": "x<U+2066>"}
    world.sandbox.call = fails  # type: ignore[method-assign]
    refused = world.call("textstats.count", path="notes/a.md")["refusal"]
    assert "<U+202E>evil" in refused["message"]
    assert "\u202e" not in json.dumps(refused, ensure_ascii=False)


def test_a_stored_plugin_with_a_host_name_no_longer_registers(
    world: World, plugins_dir: Path, tmp_path: Path
) -> None:
    """A package an older host stored with an operation called ``audit.verify`` is skipped
    when the host starts, as any stored package that no longer registers (issue 29 item 3)."""

    def rename(manifest: dict[str, Any]) -> None:
        manifest["operations"][0]["name"] = "audit.verify"

    hostile = repacked(package(plugins_dir, "textstats"), tmp_path / "t.zip", rename)
    state = world.h.ctx.state
    run(state.store("plugin-textstats.zip", hostile.read_bytes()))
    run(state.store("plugins.json", b'{"textstats": "1.0.0"}'))
    restarted_policy = Policy(admitted_plugins={"textstats": "1.0.0"})
    world.h.ctx.policy = restarted_policy
    world.h.host = Host(world.h.ctx, OPERATIONS)
    run(world.h.host.tools.plugins.load())
    assert world.h.host.tools.registry.get("audit.verify") is None
    assert "audit.verify" not in world.tools()
    assert world.h.ok("plugin.list")["plugins"] == []
