"""Plugins through the host (issue 16; seed 003): install is a gesture and keeps the origin, a
release runs only once admitted, the host reads and writes for the plugin through the broker,
the plugin's output cannot carry a receipt or a grant, withdrawal refuses even a call that
was discovered earlier, and every decision is audited. The modules run on the CPython host of
the same PDK ABI as the browser sandbox (tests/tool/pdk_host.py) behind the Sandbox port — the
host's own code only ever hands them to that port."""

from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from core.custody.env_server import ensure_identity
from core.host.pipeline import Host
from core.host.registry import OPERATIONS
from core.memory.servers import MemoryEnvironmentServers
from core.refusals import Code, Refused
from core.runtime import SystemClock
from core.tools.admission import CallRequest
from core.tools.receipts import no_receipt_note
from tests.support import HostHarness, run
from tests.tool.pdk_host import run as pdk_run

HUMAN = "human-ui"


class PdkSandbox:
    """:class:`core.ports.Sandbox` over the wasmtime PDK host; counts the calls it ran."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def run(self, module: bytes, args: bytes, *, time_ms: int, max_output: int) -> bytes:
        raise AssertionError("plugins use call()")

    async def call(
        self,
        module: bytes,
        entry: str,
        input_bytes: bytes,
        *,
        time_ms: int,
        max_output: int,
        max_memory: int | None = None,
        config: dict[str, str] | None = None,
    ) -> bytes:
        self.calls.append(entry)
        answer = pdk_run(
            module,
            entry,
            input_bytes,
            config=dict(config or {}),
            time_ms=time_ms,
            max_memory=max_memory or 16 << 20,
            max_output=max_output,
        )
        if not answer.ok:
            raise Refused(Code(answer.code), answer.message, details={"reason": answer.reason})
        return answer.output


class World:
    def __init__(self) -> None:
        self.h = HostHarness()
        self.h.ctx.services.servers = MemoryEnvironmentServers(SystemClock())
        self.h.host = Host(self.h.ctx, OPERATIONS)
        self.h.raw = self._raw  # type: ignore[method-assign]  # tool.call needs a running loop
        envs = run(ensure_identity(self.h.ctx, "local"))
        self.h.ctx.env_key = next(e.key for e in envs.environments if e.kind == "local")
        self.sandbox = PdkSandbox()
        self.h.ctx.services.sandbox = self.sandbox  # type: ignore[assignment]
        self.project = self.h.ok("project.create", name="notes")["project"]["id"]

    def _raw(self, text: str | bytes, body: bytes | None = None) -> tuple[dict, bytes | None]:
        answer, out = asyncio.run(self.h.host.handle(text, body))
        return json.loads(answer), out

    def install(self, package: Path, origin: str | None = HUMAN) -> dict[str, Any]:
        answer, _ = self.h.call("plugin.install", package.read_bytes(), origin=origin)
        return answer

    def grant(self, plugin: str, *, admit: bool = True, files: bool = False) -> dict[str, Any]:
        answer, _ = self.h.call("plugin.grant", origin=HUMAN, id=plugin, admit=admit, files=files)
        assert answer["ok"], answer
        return answer["result"]

    def tools(self) -> dict[str, dict[str, Any]]:
        listed = self.h.ok("tool.discover", envKey=self.h.ctx.env_key)["tools"]
        return {t["name"]: t for t in listed}

    def call(
        self, tool: str, descriptor: str | None = None, origin: str | None = None, **args: Any
    ) -> dict[str, Any]:
        descriptor = descriptor or self.tools()[tool]["descriptorId"]
        answer, _ = self.h.call(
            "tool.call",
            origin=origin,
            envKey=self.h.ctx.env_key,
            tool=tool,
            descriptorId=descriptor,
            args={"project": self.project, **args},
        )
        return answer

    def write(self, path: str, data: bytes) -> None:
        self.h.ok("file.write", data, project=self.project, path=path)

    def read(self, path: str) -> bytes | None:
        answer, body = self.h.call("file.read", project=self.project, path=path)
        return body if answer["ok"] else None

    def tree(self) -> dict[str, Any]:
        """Every byte of the project as stored (folders are dicts)."""
        return self.h.roots.roots[self.project].tree

    def audit(self) -> list[dict[str, Any]]:
        return self.h.ok("audit.list", limit=200)["records"]


@pytest.fixture
def world() -> World:
    return World()


def package(plugins_dir: Path, plugin: str) -> Path:
    return plugins_dir / f"{plugin}-1.0.0.zip"


def test_install_is_a_gesture_and_registers_with_the_plugins_origin(
    world: World, plugins_dir: Path
) -> None:
    refused = world.install(package(plugins_dir, "textstats"), origin=None)
    assert not refused["ok"] and "textstats.count" not in world.tools()
    installed = world.install(package(plugins_dir, "textstats"))
    assert installed["ok"], installed
    tools = world.tools()
    assert tools["textstats.count"]["origin"] == "plugin:textstats"
    assert tools["file.write"]["origin"] == "builtin"
    (listed,) = world.h.ok("plugin.list")["plugins"]
    assert (listed["id"], listed["admitted"], listed["filesGranted"]) == ("textstats", False, False)
    reasons = [c["reason"] for op in listed["operations"] for c in op["capabilities"]]
    assert reasons and all(reasons)


def test_an_installed_release_runs_only_once_admitted(world: World, plugins_dir: Path) -> None:
    world.install(package(plugins_dir, "textstats"))
    text = b"# Title\n\none two three\n"
    world.write("notes/a.md", text)
    refused = world.call("textstats.count", path="notes/a.md")
    assert refused["refusal"]["code"] == "plugin-not-admitted"
    world.grant("textstats", admit=True, files=False)
    refused = world.call("textstats.count", path="notes/a.md")
    assert refused["refusal"]["code"] == "files-grant-missing"
    assert world.sandbox.calls == []
    world.grant("textstats", admit=True, files=True)
    answer = world.call("textstats.count", path="notes/a.md")
    assert answer["ok"], answer
    result = answer["result"]
    assert result["result"]["result"]["words"] == len(text.split()) and result["receipt"] is None
    assert world.sandbox.calls == ["count"]


def test_a_result_without_a_receipt_says_it_is_the_plugins_account_worked_out_here(
    world: World, plugins_dir: Path
) -> None:
    """Issue 33 item 5: the sentence under a result with no receipt is core's, and for a call
    run in this host it speaks of this host's sandbox, never of an environment's account;
    a call with a receipt carries none."""
    world.install(package(plugins_dir, "textstats"))
    world.grant("textstats", admit=True, files=True)
    world.write("notes/a.md", b"one two\n")
    result = world.call("textstats.count", path="notes/a.md")["result"]
    assert result["receipt"] is None
    assert result["note"] == no_receipt_note(here=True)
    assert "this host's sandbox" in result["note"] and "environment" not in result["note"]
    assert "paired environment" in no_receipt_note(here=False)
    world.install(package(plugins_dir, "tidy"))
    world.grant("tidy", admit=True, files=True)
    args = {"path": "notes/a.md", "target": "notes/b.md"}
    written = world.call("tidy.text", origin=HUMAN, **args)["result"]
    assert written["receipt"] is not None and written["note"] is None


def test_a_writer_writes_through_the_broker_and_gets_the_hosts_receipt(
    world: World, plugins_dir: Path
) -> None:
    world.install(package(plugins_dir, "tidy"))
    world.grant("tidy", admit=True, files=True)
    world.write("notes/a.md", b"one  \r\n\r\n\r\ntwo")
    args = {"path": "notes/a.md", "target": "notes/b.md"}
    refused = world.call("tidy.text", **args)
    assert refused["refusal"]["code"] == "confirmation-required"
    answer = world.call("tidy.text", origin=HUMAN, **args)
    assert answer["ok"], answer
    written = world.read("notes/b.md")
    assert written == b"one\n\ntwo\n"
    receipt = answer["result"]["receipt"]
    assert receipt["rung"] == "local-write" and receipt["path"] == "notes/b.md"
    assert receipt["sha256"] == hashlib.sha256(written).hexdigest()
    assert receipt["size"] == len(written)


@pytest.mark.parametrize(
    ("target", "code"),
    [("../outside.md", "path-outside-root"), (".voicebox/policy.json", "path-reserved")],
)
def test_a_write_outside_the_root_or_into_voicebox_is_refused_and_nothing_is_written(
    world: World, test_packages: dict[str, Path], target: str, code: str
) -> None:
    assert world.install(test_packages["forge"])["ok"]
    world.grant("forge", admit=True, files=True)
    entry = "forge.escape" if target.startswith("..") else "forge.reserved"
    before = copy.deepcopy(world.tree())
    answer = world.call(entry, target=target)
    assert answer["refusal"]["code"] == code
    assert world.tree() == before


def test_a_write_without_the_files_grant_is_refused_and_nothing_is_written(
    world: World, plugins_dir: Path
) -> None:
    world.install(package(plugins_dir, "tidy"))
    world.grant("tidy", admit=True, files=False)
    world.write("notes/a.md", b"x  \n")
    answer = world.call("tidy.text", origin=HUMAN, path="notes/a.md", target="notes/b.md")
    assert answer["refusal"]["code"] == "files-grant-missing"
    assert world.read("notes/b.md") is None


@pytest.mark.parametrize(
    ("tool", "code"),
    [
        ("forge.receipt", "receipt-forgery-refused"),
        ("forge.receipttop", "receipt-forgery-refused"),
        ("forge.grant", "grant-field-refused"),
    ],
)
def test_plugin_output_claiming_a_receipt_or_a_grant_is_refused(
    world: World, test_packages: dict[str, Path], tool: str, code: str
) -> None:
    world.install(test_packages["forge"])
    world.grant("forge", admit=True, files=True)
    args = {"target": "notes/a.md"} if tool == "forge.grant" else {}
    answer = world.call(tool, **args)
    assert answer["refusal"]["code"] == code
    assert world.read("notes/a.md") is None


def test_withdrawal_refuses_a_call_discovered_before_it(world: World, plugins_dir: Path) -> None:
    world.install(package(plugins_dir, "textstats"))
    world.grant("textstats", admit=True, files=True)
    world.write("notes/a.md", b"words here\n")
    cached = world.tools()["textstats.count"]["descriptorId"]
    world.h.call("plugin.withdraw", origin=HUMAN, id="textstats")
    answer = world.call("textstats.count", descriptor=cached, path="notes/a.md")
    assert answer["refusal"]["code"] == "plugin-withdrawn"
    assert world.sandbox.calls == []


def test_discovery_offers_at_most_eight_live_seats_and_is_never_a_grant(
    world: World, plugins_dir: Path
) -> None:
    """Seed 003 discovery: ``tools.describe`` offers at most eight tools the policy would admit
    now, the preferred first; an unadmitted or withdrawn plugin operation is not offered even
    when preferred, and the Tools surface's own listing (``tool.discover``) still shows it."""

    def offered(*prefer: str) -> list[str]:
        answer, _ = world.h.call(
            "tool.call",
            envKey=world.h.ctx.env_key,
            tool="tools.describe",
            descriptorId=world.tools()["tools.describe"]["descriptorId"],
            args={"prefer": list(prefer)},
        )
        assert answer["ok"], answer
        return [t["name"] for t in answer["result"]["result"]["tools"]]

    world.install(package(plugins_dir, "textstats"))
    world.install(package(plugins_dir, "tidy"))
    listed = world.tools()
    assert len(listed) > 8 and {"textstats.count", "tidy.text"} <= set(listed)
    assert "textstats.count" not in offered("textstats.count")  # installed, not admitted
    world.grant("textstats", admit=True)
    world.grant("tidy", admit=True)
    assert offered("tidy.text", "textstats.count")[:2] == ["tidy.text", "textstats.count"]
    assert all(len(offered(*p)) == 8 for p in [(), ("tidy.text",), ("no.such.tool",)])
    assert {"textstats.count", "tidy.text"}.isdisjoint(offered())  # built-ins fill the seats
    world.h.call("plugin.withdraw", origin=HUMAN, id="tidy")
    assert "tidy.text" not in offered("tidy.text")
    assert "tidy.text" in world.tools()
    too_many, _ = world.h.call(
        "tool.call",
        envKey=world.h.ctx.env_key,
        tool="tools.describe",
        descriptorId=world.tools()["tools.describe"]["descriptorId"],
        args={"prefer": [f"t{i}" for i in range(9)]},
    )
    assert too_many["refusal"]["code"] == "args-invalid"


def test_an_upgrade_needs_its_own_admission_and_grant(
    world: World, plugins_dir: Path, tmp_path: Path
) -> None:
    import zipfile

    world.install(package(plugins_dir, "textstats"))
    world.grant("textstats", admit=True, files=True)
    source = zipfile.ZipFile(package(plugins_dir, "textstats"))
    manifest = json.loads(source.read("voicebox-plugin.json"))
    manifest["release"] = "1.0.1"
    upgraded = tmp_path / "textstats-1.0.1.zip"
    with zipfile.ZipFile(upgraded, "w") as out:
        out.writestr("voicebox-plugin.json", json.dumps(manifest))
        out.writestr("textstats.wasm", source.read("textstats.wasm"))
    assert world.install(upgraded)["ok"]
    (listed,) = world.h.ok("plugin.list")["plugins"]
    assert (listed["release"], listed["admitted"], listed["filesGranted"]) == (
        "1.0.1",
        False,
        False,
    )
    world.write("notes/a.md", b"x\n")
    assert world.call("textstats.count", path="notes/a.md")["refusal"]["code"] == (
        "plugin-not-admitted"
    )


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("builtin-name", "registration-conflict"),
        ("host-name", "registration-conflict"),
        ("bad-pin", "plugin-pin-mismatch"),
        ("unknown-field", "registration-invalid"),
        ("traversal", "archive-entry-traversal"),
    ],
)
def test_a_hostile_package_is_refused_and_nothing_is_registered(
    world: World, test_packages: dict[str, Path], name: str, code: str
) -> None:
    before = set(world.tools())
    answer = world.install(test_packages[name])
    assert answer["refusal"]["code"] == code
    assert set(world.tools()) == before
    assert world.h.ok("plugin.list")["plugins"] == []


def test_every_plugin_decision_is_audited(world: World, plugins_dir: Path) -> None:
    world.install(package(plugins_dir, "textstats"))
    world.grant("textstats", admit=True, files=True)
    world.write("notes/a.md", b"a b\n")
    world.call("textstats.count", path="notes/a.md")
    world.h.call("plugin.withdraw", origin=HUMAN, id="textstats")
    world.h.call("plugin.uninstall", origin=HUMAN, id="textstats")
    ops = [r["op"] for r in world.audit()]
    for op in ("plugin.install", "plugin.grant", "tool.call", "plugin.withdraw"):
        assert op in ops
    assert "plugin.uninstall" in ops
    assert "textstats.count" not in world.tools()


def test_installed_plugins_survive_a_restart_of_the_host(world: World, plugins_dir: Path) -> None:
    world.install(package(plugins_dir, "textstats"))
    again = Host(world.h.ctx)
    run(again.tools.plugins.load())
    assert again.tools.registry.get("textstats.count").origin == "plugin:textstats"


def test_the_envelope_carries_the_bytes_the_host_read(world: World, plugins_dir: Path) -> None:
    seen: list[bytes] = []
    original = world.sandbox.call

    async def spy(module: bytes, entry: str, input_bytes: bytes, **kw: Any) -> bytes:
        seen.append(input_bytes)
        return await original(module, entry, input_bytes, **kw)

    world.sandbox.call = spy  # type: ignore[method-assign]
    world.install(package(plugins_dir, "textstats"))
    world.grant("textstats", admit=True, files=True)
    world.write("notes/a.md", b"\xffbytes")
    world.call("textstats.count", path="notes/a.md")
    (sent,) = seen
    files = json.loads(sent)["files"]
    assert base64.b64decode(files[0]["base64"]) == b"\xffbytes"
    assert "project" not in json.loads(sent)["args"]


def test_inspecting_a_package_shows_what_install_would_register_and_changes_nothing(
    world: World, plugins_dir: Path, test_packages: dict[str, Path]
) -> None:
    before = set(world.tools())
    shown = world.h.ok("plugin.inspect", package(plugins_dir, "tidy").read_bytes())
    (op,) = shown["operations"]
    assert (op["name"], op["effect"], op["receipt"], op["confirm"]) == (
        "tidy.text",
        "write",
        "local-write",
        True,
    )
    assert [c["kind"] for c in op["capabilities"]] == ["read", "write"]
    assert set(world.tools()) == before and world.h.ok("plugin.list")["plugins"] == []
    refused = world.h.refused("plugin.inspect", test_packages["builtin-name"].read_bytes())
    assert refused["code"] == "registration-conflict"


def test_a_withdrawal_while_the_call_runs_refuses_it_and_nothing_is_written(
    world: World, plugins_dir: Path
) -> None:
    original = world.sandbox.call

    async def withdraw_meanwhile(module: bytes, entry: str, input_bytes: bytes, **kw: Any) -> bytes:
        out = await original(module, entry, input_bytes, **kw)
        world.h.host.tools.plugins.withdraw("tidy")  # the operator acts while it runs
        return out

    world.sandbox.call = withdraw_meanwhile  # type: ignore[method-assign]
    world.install(package(plugins_dir, "tidy"))
    world.grant("tidy", admit=True, files=True)
    world.write("notes/a.md", b"x  \n")
    answer = world.call("tidy.text", origin=HUMAN, path="notes/a.md", target="notes/b.md")
    assert answer["refusal"]["code"] == "plugin-withdrawn"
    assert world.sandbox.calls == ["text"] and world.read("notes/b.md") is None


def test_a_files_grant_removed_while_the_call_runs_refuses_its_write(
    world: World, plugins_dir: Path
) -> None:
    original = world.sandbox.call

    async def revoke_meanwhile(module: bytes, entry: str, input_bytes: bytes, **kw: Any) -> bytes:
        out = await original(module, entry, input_bytes, **kw)
        ctx = world.h.ctx  # the operator removes the grant while it runs
        ctx.policy = ctx.policy.model_copy(update={"files_grants": ("builtin",)})
        return out

    world.sandbox.call = revoke_meanwhile  # type: ignore[method-assign]
    world.install(package(plugins_dir, "tidy"))
    world.grant("tidy", admit=True, files=True)
    world.write("notes/a.md", b"x  \n")
    answer = world.call("tidy.text", origin=HUMAN, path="notes/a.md", target="notes/b.md")
    assert answer["refusal"]["code"] == "files-grant-missing"
    assert world.read("notes/b.md") is None


def folder_message(folder: Path, top: str | None = None) -> tuple[list[dict[str, Any]], bytes]:
    """A folder as the page sends it: each file's ``<folder>/<name>`` and size, then the bytes."""
    files = sorted(p for p in folder.iterdir() if p.is_file())
    top = folder.name if top is None else top
    entries = [{"path": f"{top}/{p.name}", "size": p.stat().st_size} for p in files]
    return entries, b"".join(p.read_bytes() for p in files)


def test_a_folder_installs_exactly_as_its_zip(plugins_dir: Path) -> None:
    by_zip, by_folder = World(), World()
    zipped = by_zip.install(package(plugins_dir, "tidy"))
    entries, body = folder_message(plugins_dir / "tidy")
    shown = by_folder.h.ok("plugin.inspect", body, folder=entries)
    answer, _ = by_folder.h.call("plugin.install", body, origin=HUMAN, folder=entries)
    assert zipped["ok"] and answer["ok"], answer
    assert answer["result"] == zipped["result"]
    assert shown["manifestSha256"] == zipped["result"]["manifestSha256"]
    assert by_folder.h.ok("plugin.list") == by_zip.h.ok("plugin.list")
    assert by_folder.tools()["tidy.text"]["origin"] == "plugin:tidy"


def test_the_folder_refusals_store_nothing(plugins_dir: Path) -> None:
    entries, body = folder_message(plugins_dir / "tidy")
    cases = [
        (
            "archive-entry-size-mismatch",
            [{**entries[0], "size": entries[0]["size"] + 1}, *entries[1:]],
        ),
        (
            "archive-entry-size-mismatch",
            [{**entries[0], "size": entries[0]["size"] - 1}, *entries[1:]],
        ),
        ("message-malformed", entries + [{"path": f"tidy/m{i}.wasm", "size": 0} for i in range(9)]),
        (
            "archive-entry-traversal",
            [{**entries[0], "path": "../" + entries[0]["path"]}, *entries[1:]],
        ),
        (
            "archive-entry-traversal",
            [{**e, "path": "../" + e["path"].split("/")[1]} for e in entries],
        ),
        ("archive-entry-absolute", [{**e, "path": "/" + e["path"]} for e in entries]),
        ("archive-entry-name-invalid", [{**e, "path": "a/" + e["path"]} for e in entries]),
        ("archive-entry-duplicate", [*entries, {**entries[0], "size": 0}]),
    ]
    for code, folder in cases:
        world = World()
        before = set(world.tools())
        for op in ("plugin.inspect", "plugin.install"):
            answer, _ = world.h.call(op, body, origin=HUMAN, folder=folder)
            assert answer["refusal"]["code"] == code, (folder, answer)
        stored = {n for n in world.h.state.docs if n.startswith(("plugin", "policy"))}
        assert set(world.tools()) == before and stored == set()
        assert world.h.ok("plugin.list")["plugins"] == []


def test_safe_mode_refuses_a_plugin_write_and_a_builtin_write_by_the_same_gate(
    world: World, plugins_dir: Path
) -> None:
    """Issue 35 item 2: SAFE mode is one check. Turned on after admission — while the plugin
    runs in the sandbox, between a built-in tool's admission and its run — it refuses both
    writes at the same place: the pipeline's gate of ``file.write`` (audited there), not a
    second check of the broker's; nothing is written. On from the start, both calls are
    refused by admission's early ask of that same check."""
    original = world.sandbox.call

    def safe(on: bool) -> None:
        world.h.ctx.policy = world.h.ctx.policy.model_copy(update={"read_only": on})

    async def safe_meanwhile(module: bytes, entry: str, input_bytes: bytes, **kw: Any) -> bytes:
        out = await original(module, entry, input_bytes, **kw)
        safe(True)  # the operator turns SAFE on while the plugin runs
        return out

    world.sandbox.call = safe_meanwhile  # type: ignore[method-assign]
    world.install(package(plugins_dir, "tidy"))
    world.grant("tidy", admit=True, files=True)
    world.write("notes/a.md", b"x  \n")
    args = {"path": "notes/a.md", "target": "notes/b.md"}
    answer = world.call("tidy.text", origin=HUMAN, **args)
    assert answer["refusal"]["code"] == "read-only-mode"

    safe(False)
    box = world.h.host.tools
    descriptor = box.registry.get("file.write").descriptor_id
    wrote = {"project": world.project, "path": "notes/c.md", "content_b64": "eA=="}
    admitted = box.admit(CallRequest("file.write", descriptor, wrote))
    safe(True)  # between admission and the run
    with pytest.raises(Refused) as refused:
        run(box.run(admitted, actor="agent"))
    assert refused.value.code == Code.READ_ONLY_MODE
    assert world.read("notes/b.md") is None and world.read("notes/c.md") is None

    records = world.audit()
    gated = [r for r in records if r["rule"] == "read-only-mode" and r["op"] == "file.write"]
    assert len(gated) == 2, records[:6]  # the plugin's write and the built-in one, one gate
    (plugin,) = [r for r in records if r["op"] == "tidy.text"]
    assert (plugin["decision"], plugin["rule"], plugin["details"]["check"]) == (
        "refused",
        "read-only-mode",
        "written",
    )

    world.sandbox.call = original  # type: ignore[method-assign]
    assert world.call("tidy.text", origin=HUMAN, **args)["refusal"]["code"] == "read-only-mode"
    builtin = world.call("file.write", path="notes/c.md", content_b64="eA==")
    assert builtin["refusal"]["code"] == "read-only-mode"
    assert world.sandbox.calls == ["text"]  # refused before the sandbox ran again
