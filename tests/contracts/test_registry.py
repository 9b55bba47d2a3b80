"""The operation registry and discovery (seed 003 "discovery is not admission", SPEC §7)."""

from __future__ import annotations

import pytest

from core.policy import Policy
from core.refusals import Code, Refused
from core.tools.admission import CallRequest, admit
from core.tools.registry import MAX_OFFERED_SEATS, OperationRegistry, descriptor_id
from tests.contracts.operations import builtin, package_sha, plugin


def test_registration_cannot_replace_other_origin() -> None:
    registry = OperationRegistry()
    registry.register(builtin("echo"))
    registry.register(plugin("notes.save"))
    for entry in (
        plugin("echo"),
        builtin("notes.save", effect="write", receipt_rule="local-write"),
        plugin("notes.save", plugin_id="other"),
    ):
        with pytest.raises(Refused) as caught:
            registry.register(entry)
        assert (caught.value.code, caught.value.status) == (Code.REGISTRATION_CONFLICT, 409)
    assert registry.get("echo").origin == "builtin"
    assert registry.get("notes.save").origin == "plugin:notes"


def test_withdrawn_name_still_belongs_to_its_origin() -> None:
    registry = OperationRegistry()
    registry.register(plugin("notes.save"))
    registry.withdraw("notes.save", "plugin:notes")
    with pytest.raises(Refused) as caught:
        registry.register(plugin("notes.save", plugin_id="other"))
    assert caught.value.code == Code.REGISTRATION_CONFLICT
    with pytest.raises(Refused):
        registry.withdraw("notes.save", "plugin:other")


def test_the_holding_origin_may_register_a_new_release() -> None:
    registry = OperationRegistry()
    registry.register(plugin("notes.save"))
    registry.register(plugin("notes.save", release="2.0.0"))
    assert registry.get("notes.save").release == "2.0.0"


def test_entries_keep_their_origin_in_discovery() -> None:
    registry = OperationRegistry()
    registry.register(builtin("echo"))
    registry.register(plugin("notes.save"))
    assert {d.name: d.origin for d in registry.describe()} == {
        "echo": "builtin",
        "notes.save": "plugin:notes",
    }


def test_discovery_exposes_schema_effect_receipt_rule_and_confirmation() -> None:
    registry = OperationRegistry()
    described = registry.register(plugin("notes.save", needs_confirmation=True))
    shown = described.model_dump(mode="json")
    assert shown["argsSchema"]["properties"]["text"]["maxLength"] == 100
    assert shown["argsSchema"]["additionalProperties"] is False
    assert shown["effect"] == "write"
    assert shown["receiptRule"] == "local-write"
    assert shown["needsConfirmation"] is True
    assert shown["descriptorId"] == descriptor_id("plugin:notes", "notes.save")


def test_descriptor_id_changes_exactly_when_the_owner_does() -> None:
    assert descriptor_id("builtin", "x") == descriptor_id("builtin", "x")
    assert descriptor_id("builtin", "x") != descriptor_id("plugin:a", "x")
    assert descriptor_id("plugin:a", "x") != descriptor_id("plugin:b", "x")
    assert descriptor_id("builtin", "x") != descriptor_id("builtin", "y")


def test_offer_holds_at_most_eight_seats() -> None:
    registry = OperationRegistry()
    for i in range(12):
        registry.register(builtin(f"tool{i:02d}"))
    assert MAX_OFFERED_SEATS == 8
    assert len(registry.offer(Policy())) == 8
    assert len(registry.offer(Policy(), limit=50)) == 8
    assert registry.offer(Policy(), prefer=("tool11",))[0].name == "tool11"


def test_offered_seat_is_not_a_grant_and_no_seat_is_not_a_refusal() -> None:
    registry = OperationRegistry()
    for i in range(9):
        registry.register(builtin(f"tool{i}"))
    offered = {d.name for d in registry.offer(Policy())}
    (unseated,) = {f"tool{i}" for i in range(9)} - offered
    entry = registry.get(unseated)
    done = admit(registry, Policy(), CallRequest(unseated, entry.descriptor_id, {"text": "hi"}))
    assert done.entry.name == unseated
    seated = sorted(offered)[0]
    with pytest.raises(Refused) as caught:
        admit(
            registry,
            Policy(disabled_tools=(seated,)),
            CallRequest(seated, registry.get(seated).descriptor_id, {"text": "hi"}),
        )
    assert caught.value.code == Code.TOOL_DISABLED


def test_offer_leaves_out_what_policy_refuses_outright() -> None:
    registry = OperationRegistry()
    registry.register(builtin("on"))
    registry.register(builtin("off"))
    registry.register(plugin("notes.save"))
    registry.register(plugin("gone", plugin_id="notes"))
    registry.withdraw("gone", "plugin:notes")
    registry.register(plugin("stranger.save", plugin_id="stranger"))
    policy = Policy(disabled_tools=("off",), admitted_plugins={"notes": package_sha()})
    names = [d.name for d in registry.offer(policy)]
    assert names == ["on", "notes.save"]


@pytest.mark.parametrize(
    "changes",
    [
        {"origin": "plugin:"},
        {"origin": "Plugin:x"},
        {"release": None},
        {"effect": "read", "receipt_rule": "local-write"},
        {"effect": "network", "receipt_rule": "external-read"},
        {"capabilities": frozenset({"network"})},
        {"name": "Bad Name"},
    ],
)
def test_self_contradicting_registration_is_refused(changes: dict[str, object]) -> None:
    with pytest.raises(Refused) as caught:
        OperationRegistry().register(plugin(**changes))
    assert caught.value.code == Code.REGISTRATION_INVALID


def test_builtin_does_not_name_a_release() -> None:
    with pytest.raises(Refused) as caught:
        OperationRegistry().register(builtin(release="1"))
    assert caught.value.code == Code.REGISTRATION_INVALID


def test_a_plugin_cannot_take_any_name_or_namespace_of_the_host() -> None:
    """Issue 29 item 3: the reserved names are derived from the host protocol's operations and
    the built-in tools — every one of them, and every namespace they use, is refused to a
    plugin (``registration-conflict``); a name outside them is not."""
    from core.host.registry import OPERATIONS
    from core.tools.builtin import BUILTIN_TOOLS
    from core.tools.registry import ReservedNames

    names = [*OPERATIONS, *(t.name for t in BUILTIN_TOOLS)]
    reserved = ReservedNames(names)
    assert {"audit", "host", "plugin", "policy", "tool", "file", "project", "mission"} <= (
        reserved.namespaces
    )
    for name in [*names, *(f"{n.split('.')[0]}.x" for n in names if "." in n)]:
        with pytest.raises(Refused) as caught:
            OperationRegistry(reserved).register(plugin(name))
        assert caught.value.code == Code.REGISTRATION_CONFLICT, name
    assert OperationRegistry(reserved).register(plugin("notes.save")).name == "notes.save"
    assert OperationRegistry(reserved).register(builtin("audit.verify")).origin == "builtin"
