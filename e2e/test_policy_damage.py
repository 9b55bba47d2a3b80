"""A damaged ``policy.json`` in OPFS ``host/`` is SAFE mode, shown with its reason (issue 29
item 11): the browser host used to fall back to a writable default. Text that is not a policy,
and a sealed document whose seal does not open, each put the reloaded host in SAFE mode: the
page shows the badge and the sentence, a write is refused ``read-only-mode``, reading works."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import BrowserContext, expect

from e2e.hostpage import HostPage

WRITE_POLICY = """
async ({ bytes, where }) => {
  let host = await navigator.storage.getDirectory();
  for (const part of where) host = await host.getDirectoryHandle(part);
  const file = await (await host.getFileHandle("policy.json", { create: true })).createWritable();
  await file.write(new Uint8Array(bytes));
  await file.close();
}
"""

DAMAGES = {
    "not-json": (b'{"read_only": false, "disabled_tools": [', "is not valid JSON"),
    "seal-altered": (b"VBX1" + bytes(range(64)), "could not be read"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_policy_in_opfs_reloads_into_safe_mode_saying_why(
    host: HostPage, damage: str
) -> None:
    raw, why = DAMAGES[damage]
    project = host.ok("project.create", {"name": "kept"})["result"]["project"]["id"]
    host.ok("file.write", {"project": project, "path": "a.txt"}, b"mine")
    expect(host.page.locator("#safe-badge")).to_be_hidden()
    host.page.evaluate(WRITE_POLICY, {"bytes": list(raw), "where": ["host"]})
    host.reload()

    expect(host.page.locator("#safe-badge")).to_be_visible()
    reason = host.page.locator("#safe-reason")
    expect(reason).to_be_visible()
    expect(reason).to_contain_text(f"policy.json {why}")
    expect(reason).to_contain_text("SAFE mode")
    info = host.ok("host.info")["result"]
    assert info["read_only"] is True and why in info["safe_reason"]
    refusal = host.refused("file.write", {"project": project, "path": "a.txt"}, b"theirs")
    assert refusal["code"] == "read-only-mode"
    assert host.call("file.read", {"project": project, "path": "a.txt"})["body"] == b"mine"
    assert host.page_errors == [] and host.dialogs == []


def _tool(host: HostPage, env_key: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    local = host.ok("env.list")["result"]["environments"][0]["envKey"]
    tools = host.ok("tool.discover", {"envKey": local})["result"]["tools"]
    descriptor = next(t["descriptorId"] for t in tools if t["name"] == tool)
    return host.call(
        "tool.call", {"envKey": env_key, "tool": tool, "descriptorId": descriptor, "args": args}
    )


def test_an_environment_workers_damaged_policy_is_safe_mode_too(
    served_context: BrowserContext, static_server: str
) -> None:
    """The environment worker (browser_host/env_main.py) used to raise on a damaged policy:
    the environment did not start. Now it starts in SAFE mode: reads answer, writes are
    refused ``read-only-mode``."""
    host = HostPage(served_context.new_page())
    host.open(static_server)
    key = host.ok("env.create", {"name": "studio"}, human=True)["result"]["environment"]["envKey"]
    host.ok("env.pair", {"envKey": key}, human=True)
    assert _tool(host, key, "project.create", {"name": "before"})["ok"]
    where = ["environments", "studio", "host"]
    host.page.evaluate(WRITE_POLICY, {"bytes": list(DAMAGES["not-json"][0]), "where": where})
    host.reload()
    refused = _tool(host, key, "project.create", {"name": "after"})
    assert not refused["ok"] and refused["refusal"]["code"] == "read-only-mode", refused
    listed = _tool(host, key, "projects.list", {})
    assert listed["ok"], listed
    assert host.page_errors == [] and host.dialogs == []
