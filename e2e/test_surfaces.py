"""The surfaces around the tray (issue 7; SPEC §5, §11): blocks with colour and store version,
edited and ratified by a person's gesture and reached from a tray card; the audit filtered by
operation, decision and code and exported as JSON Lines that verify as a chain; settings that
change the policy as an audited gesture; every refusal shown with its code and a sentence."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from e2e.hostpage import HostPage
from e2e.tray_kit import (
    HUMAN,
    Missions,
    card,
    expand_tray,
    go,
    new_project,
    open_in_ui,
    shot,
)

BRAIN = "Repo-B1"


def test_blocks_are_edited_and_ratified_by_the_person_and_reached_from_a_tray_card(
    host: HostPage,
) -> None:
    pid, blocks = new_project(host, BRAIN, [("Receipt importer", "Imports receipts.")])
    page = host.page
    open_in_ui(host, pid, "blocks")
    page.wait_for_selector("#blocks-table")
    assert page.inner_text("#store-line").startswith("Store version 1")
    assert "not approved yet" in page.inner_text("#store-line")
    page.fill("#new-block-name", "Mailbox / letters")  # the owner types what they mean
    page.fill("#new-block-purpose", "Append-only letters.")
    page.click("#add-block")
    page.wait_for_selector("#blocks-table tr[data-block] bdi:text-is('Mailbox / letters')")
    assert page.inner_text("#store-line").startswith("Store version 2")
    row = page.locator("#blocks-table tr[data-block]").first
    assert row.locator(".colour-word").inner_text() == "grey"
    page.click("#ratify")
    page.wait_for_selector("dialog[open]")
    assert "changes no block and no colour" in page.inner_text("dialog[open]")
    page.click("dialog[open] .dialog-confirm")
    page.wait_for_selector("#store-line .ok")
    assert "approved at v2 ✓ current" in page.inner_text("#store-line")
    ratified = host.ok("audit.list", {"op": "blocks.ratify"})["result"]["records"][0]
    assert ratified["actor"] == HUMAN

    # a runner-seat edit of the same name is refused by the sanitizer, and the page says so
    refusal = host.call(
        "blocks.candidate_edit",
        {"project": pid, "ops": [{"op": "add", "name": "a/b", "purpose": ""}], "seat": "runner"},
    )["refusal"]
    assert refusal["code"] == "sanitizer_refused"

    # a refusal on the page: a name past 200 characters shows its code and sentence
    page.click(f"#block-row-{blocks[0]} button:has-text('Rename')")
    page.fill("dialog[open] input", "x" * 201)
    page.click("dialog[open] .primary")
    page.wait_for_selector("#alerts .alert-error")
    alert = page.inner_text("#alerts .alert-error")
    assert page.inner_text("#alerts .refusal-code") == "name-invalid"
    assert "200" in page.inner_text("#alerts .refusal-message")
    assert "Renaming the block" in alert

    m = Missions(host, pid, BRAIN, blocks[0])
    m.post("msn_0000000000b1", "judging")
    go(page, "projects")
    expand_tray(page)
    page.click(f"{card(page, 'msn_0000000000b1')} .block-link")
    page.wait_for_selector(f"#block-row-{blocks[0]}.focused")
    assert page.evaluate("() => document.activeElement.id") == f"block-row-{blocks[0]}"
    assert page.get_attribute("#surfaces button[data-surface='blocks']", "aria-current") == "page"
    host.assert_clean()


def test_audit_filters_and_exports_json_lines_that_verify(host: HostPage) -> None:
    pid, _ = new_project(host, BRAIN, [("Receipt importer", "Imports receipts.")])
    host.ok("file.write", {"project": pid, "path": "a.txt"}, b"a")
    host.call("file.write", {"project": pid, "path": "../escape"}, b"x")
    host.call("blocks.ratify", {"project": pid, "store_version": 1})  # no gesture: refused
    page = host.page
    go(page, "audit")
    page.wait_for_selector("#audit-rows tr[data-seq]")
    page.select_option("#audit-filter-decision", "refused")
    page.wait_for_function(
        "() => { const c = [...document.querySelectorAll('#audit-rows tr[data-seq] td:nth-child(5)')];"
        " return c.length === 2 && c.every(td => td.textContent === 'refused'); }"
    )
    page.fill("#audit-filter-rule", "human_gesture_required")
    page.press("#audit-filter-rule", "Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('#audit-rows tr[data-seq]').length === 1"
    )
    assert page.inner_text("#audit-rows tr[data-seq] td:nth-child(4)") == "blocks.ratify"
    page.select_option("#audit-filter-decision", "")
    page.fill("#audit-filter-rule", "")
    page.press("#audit-filter-rule", "Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('#audit-rows tr[data-seq]').length >= 5"
    )
    with page.expect_download() as download:
        page.click("#export-audit")
    saved = download.value
    assert saved.suggested_filename.startswith("voicebox-audit-")
    assert saved.suggested_filename.endswith(".jsonl")
    lines = Path(saved.path()).read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    head = host.ok("audit.list", {"limit": 1})["result"]["head"]
    assert [r["seq"] for r in records] == list(range(head, 0, -1))
    for newer, older in itertools.pairwise(records):
        assert newer["prev"] == older["hash"]  # the export is the chain, newest first
    assert {"project.create", "file.write", "blocks.ratify"} <= {r["op"] for r in records}
    page.wait_for_selector("#export-status:has-text('Exported')")
    page.click("#verify-audit")
    page.wait_for_selector("#verify-result.ok")
    shot(page, "surface-audit-filtered")
    host.assert_clean()


def test_settings_change_the_policy_as_an_audited_gesture(host: HostPage) -> None:
    page = host.page
    go(page, "settings")
    page.wait_for_selector("#setting-hello_bound_ms")
    page.fill("#setting-hello_bound_ms", "0")
    page.click("[data-setting='hello_bound_ms'] button")
    page.wait_for_selector("#alerts .refusal-code")
    assert page.inner_text("#alerts .refusal-code") == "args-invalid"
    said = page.inner_text("#alerts .refusal-message")
    assert "Hello bound (ms)" in said and "hello_bound_ms" not in said  # named by its label
    page.fill("#setting-hello_bound_ms", "7000")
    page.click("[data-setting='hello_bound_ms'] button")
    page.wait_for_selector("#settings-status:has-text('Saved: hello_bound_ms')")
    page.fill("#setting-disabled_tools", "create-asset")
    page.press("#setting-disabled_tools", "Enter")
    page.wait_for_selector("#setting-disabled_tools-summary:has-text('create-asset')")
    policy = host.ok("policy.get")["result"]["policy"]
    assert policy["hello_bound_ms"] == 7000 and policy["disabled_tools"] == ["create-asset"]
    records = host.ok("audit.list", {"op": "policy.set"})["result"]["records"]
    assert [(r["decision"], r["actor"]) for r in records] == [
        ("admitted", HUMAN),
        ("admitted", HUMAN),
        ("refused", HUMAN),
    ]
    assert records[0]["details"]["changed"] == "disabled_tools"
    # an agent (no gesture) cannot change it
    refused = host.call("policy.set", {"changes": {"read_only": True}})
    assert refused["refusal"]["code"] == "human_gesture_required"
    host.reload()
    go(page, "settings")
    page.wait_for_selector("#setting-disabled_tools-summary")
    assert page.input_value("#setting-hello_bound_ms") == "7000"
    # the local tools are switches that say what checked means; the one switched off is off
    tools = page.locator("[data-setting='disabled_tools']")
    assert tools.locator("h3").inner_text() == "Tools"
    assert "checked (on) means the tool may be called" in tools.inner_text()
    assert page.is_checked("#setting-disabled_tools-projects\\.list")
    assert not page.is_checked("#setting-disabled_tools-create-asset")
    assert page.inner_text("#setting-disabled_tools-summary") == (
        "Switched off: 1 tool (create-asset)."
    )
    assert tools.locator(".chip").count() == 0  # a described tool is a switch, not a chip
    page.check("#setting-disabled_tools-create-asset")
    page.wait_for_selector("#setting-disabled_tools-summary:has-text('none')")
    assert page.is_checked("#setting-disabled_tools-create-asset")
    assert host.ok("policy.get")["result"]["policy"]["disabled_tools"] == []
    host.assert_clean()
