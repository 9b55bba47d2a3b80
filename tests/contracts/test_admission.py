"""Admission per call, on a fresh policy snapshot, in a fixed order (seed 003, SPEC §7)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.policy import Policy
from core.refusals import Code, Refused
from core.tools.admission import ADMISSION_ORDER, Admission, CallRequest, admit
from core.tools.registry import OperationRegistry
from tests.contracts.operations import EchoArgs, builtin, package_sha, plugin

NOTES = Policy(admitted_plugins={"notes": package_sha()})


def refusal(registry: OperationRegistry, policy: Policy, request: CallRequest) -> Code:
    with pytest.raises(Refused) as caught:
        admit(registry, policy, request)
    return caught.value.code


def call(registry: OperationRegistry, name: str, **changes: object) -> CallRequest:
    fields: dict[str, object] = {
        "tool": name,
        "descriptor_id": registry.get(name).descriptor_id,
        "args": {"text": "hi"},
    }
    return CallRequest(**{**fields, **changes})  # type: ignore[arg-type]


def registry_with(*entries: object) -> OperationRegistry:
    registry = OperationRegistry()
    for entry in entries:
        registry.register(entry)  # type: ignore[arg-type]
    return registry


def test_unknown_tool_is_refused() -> None:
    registry = registry_with(builtin())
    request = CallRequest("nope", "d_" + "0" * 24, {})
    assert refusal(registry, Policy(), request) == Code.TOOL_UNKNOWN


def test_disabled_tool_is_refused() -> None:
    registry = registry_with(builtin())
    assert refusal(registry, Policy(disabled_tools=("echo",)), call(registry, "echo")) == (
        Code.TOOL_DISABLED
    )


def test_dispatch_owner_change_is_refused() -> None:
    registry = registry_with(plugin("notes.save"))
    shown = registry.get("notes.save").descriptor_id
    registry.remove("notes.save", "plugin:notes")
    registry.register(plugin("notes.save", plugin_id="other"))
    request = call(registry, "notes.save", descriptor_id=shown)
    policy = Policy(admitted_plugins={"notes": package_sha(), "other": package_sha("other")})
    assert refusal(registry, policy, request) == Code.DISPATCH_OWNER_CHANGED


def test_read_only_mode_refuses_mutating_calls_only() -> None:
    registry = registry_with(builtin("echo"), plugin("notes.save"))
    safe = Policy(read_only=True, admitted_plugins={"notes": package_sha()})
    assert refusal(registry, safe, call(registry, "notes.save")) == Code.READ_ONLY_MODE
    assert admit(registry, safe, call(registry, "echo")).entry.name == "echo"


def test_plugin_release_must_be_the_admitted_one() -> None:
    registry = registry_with(plugin("notes.save", release="2.0.0"))
    request = call(registry, "notes.save")
    assert refusal(registry, NOTES, request) == Code.PLUGIN_NOT_ADMITTED
    assert refusal(registry, Policy(), request) == Code.PLUGIN_NOT_ADMITTED
    assert admit(
        registry, Policy(admitted_plugins={"notes": package_sha(release="2.0.0")}), request
    )


def test_withdrawn_plugin_operation_is_refused() -> None:
    registry = registry_with(plugin("notes.save"))
    registry.withdraw("notes.save", "plugin:notes")
    assert refusal(registry, NOTES, call(registry, "notes.save")) == Code.PLUGIN_WITHDRAWN


def test_arguments_must_match_the_schema() -> None:
    registry = registry_with(builtin())
    for args in ({}, {"text": 5}, {"text": "x" * 101}, {"text": "a", "more": 1}):
        assert refusal(registry, Policy(), call(registry, "echo", args=args)) == (Code.ARGS_INVALID)
    admitted = admit(registry, Policy(), call(registry, "echo"))
    assert admitted.args == EchoArgs(text="hi")


def test_confirmation_needs_a_person_in_the_page() -> None:
    registry = registry_with(builtin(needs_confirmation=True))
    assert refusal(registry, Policy(), call(registry, "echo")) == Code.CONFIRMATION_REQUIRED
    confirmed = call(registry, "echo", confirmed_by="human-ui")
    assert admit(registry, Policy(), confirmed).entry.name == "echo"


def test_admission_order_is_fixed() -> None:
    """Start from a call that breaks every check, mend one thing at a time in the documented
    order; each step must expose exactly the next code of ADMISSION_ORDER."""
    entry = plugin("notes.save", release="9", needs_confirmation=True)
    registry = registry_with(entry, builtin("decoy"))
    registry.withdraw("notes.save", "plugin:notes")
    policy = Policy(read_only=True, disabled_tools=("notes.save",))
    request = CallRequest("ghost", registry.get("decoy").descriptor_id, {"text": 1})
    seen = [refusal(registry, policy, request)]
    request = replace(request, tool="notes.save")
    seen.append(refusal(registry, policy, request))
    policy = policy.model_copy(update={"disabled_tools": ()})
    seen.append(refusal(registry, policy, request))
    request = replace(request, descriptor_id=registry.get("notes.save").descriptor_id)
    seen.append(refusal(registry, policy, request))
    policy = policy.model_copy(update={"read_only": False})
    seen.append(refusal(registry, policy, request))
    policy = policy.model_copy(update={"admitted_plugins": {"notes": package_sha(release="9")}})
    seen.append(refusal(registry, policy, request))
    registry.register(entry)  # re-registering by its holder restores it
    seen.append(refusal(registry, policy, request))
    request = replace(request, args={"text": "ok"})
    seen.append(refusal(registry, policy, request))
    request = replace(request, confirmed_by="human-ui")
    assert tuple(seen) == ADMISSION_ORDER
    assert admit(registry, policy, request).entry.name == "notes.save"


def test_policy_snapshot_is_taken_for_every_call() -> None:
    registry = registry_with(builtin())
    current = {"policy": Policy()}
    admission = Admission(registry, lambda: current["policy"])
    request = call(registry, "echo")
    assert admission.admit(request).policy == Policy()
    current["policy"] = Policy(disabled_tools=("echo",))
    with pytest.raises(Refused) as caught:
        admission.admit(request)
    assert caught.value.code == Code.TOOL_DISABLED


def test_cached_description_is_not_an_entitlement() -> None:
    registry = registry_with(plugin("notes.save"))
    cached = registry.describe()[0]
    registry.withdraw("notes.save", "plugin:notes")
    request = CallRequest("notes.save", cached.descriptor_id, {"text": "hi"})
    assert refusal(registry, NOTES, request) == Code.PLUGIN_WITHDRAWN


def test_argument_errors_never_echo_argument_values_or_keys() -> None:
    registry = registry_with(builtin())
    secret = "vbx_" + "k" * 43
    for args in ({"text": secret * 3}, {secret: 1, "text": "a"}, {"text": [secret]}):
        with pytest.raises(Refused) as caught:
            admit(registry, Policy(), call(registry, "echo", args=args))
        assert secret not in caught.value.message
