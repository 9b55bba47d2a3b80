"""A damaged ``policy.json`` is SAFE mode, said with its reason (issue 29 item 11; seed 003).

Every placement reads the policy through :func:`core.policy.load_policy`; here it is driven
over the in-memory adapters the way the browser host composes itself (browser_host/main.py:
``load_policy`` → ``HostContext(policy, policy_damage)`` → ``say_policy_damage``), so the page's
``host.info`` and a write are what the page would meet. Runs inside Pyodide too.
"""

from __future__ import annotations

import pytest

from core.policy import POLICY_DAMAGE_RULE, POLICY_NAME, Policy, load_policy, say_policy_damage
from core.refusals import Code, Refused
from tests.support import HostHarness, run

DAMAGES = {
    "not JSON": b"{read_only: false",
    "empty": b"",
    "truncated": b'{"read_only": false, "disabled_tools": [',
    "out of bounds": b'{"hello_bound_ms": 0}',
    "wrong kind": b'{"read_only": "no"}',
    "unknown field": b'{"read_only": false, "everything_allowed": true}',
    "not an object": b"[]",
    "not UTF-8": b"\xff\xfe\x00{",
}


class _Unreadable:
    """HOST_DIR whose policy document cannot be read (a seal that does not open, an I/O error)."""

    async def load(self, name: str) -> bytes | None:
        raise Refused(Code.STORAGE_FAILED, f"{name} is sealed with another key or was altered.")

    async def store(self, name: str, data: bytes) -> None:
        raise AssertionError("nothing is stored")


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_policy_is_safe_mode_with_a_reason(damage: str) -> None:
    h = HostHarness()
    h.state.docs[POLICY_NAME] = DAMAGES[damage]
    loaded = run(load_policy(h.state))
    assert loaded.policy.read_only is True
    assert loaded.damage is not None
    assert loaded.damage.startswith(f"{POLICY_NAME} ") and "SAFE mode" in loaded.damage
    assert "everything_allowed" not in loaded.damage  # an unknown key is never echoed


def test_an_unreadable_policy_is_safe_mode_never_an_exception() -> None:
    loaded = run(load_policy(_Unreadable()))
    assert loaded.policy.read_only is True
    assert loaded.damage is not None and "could not be read" in loaded.damage


def test_an_absent_or_valid_policy_is_used_as_it_is() -> None:
    h = HostHarness()
    assert run(load_policy(h.state)).policy == Policy()
    assert run(load_policy(h.state)).damage is None
    h.state.docs[POLICY_NAME] = Policy(disabled_tools=("file.read",)).model_dump_json().encode()
    loaded = run(load_policy(h.state))
    assert loaded.damage is None and loaded.policy.disabled_tools == ("file.read",)
    assert loaded.policy.read_only is False


def test_a_damaged_policy_refuses_writes_and_the_host_says_why() -> None:
    """The browser host's composition, over memory: fails closed (it used to fall back to a
    writable default), ``host.info`` carries the reason, the audit records it."""
    h = HostHarness()
    pid = h.ok("project.create", name="kept")["project"]["id"]
    h.ok("file.write", b"mine", project=pid, path="a.txt")
    h.state.docs[POLICY_NAME] = DAMAGES["not JSON"]
    loaded = run(load_policy(h.state))
    h.ctx.policy, h.ctx.policy_damage = loaded.policy, loaded.damage
    run(say_policy_damage(h.ctx.audit, loaded))

    info = h.ok("host.info")
    assert info["read_only"] is True
    assert info["safe_reason"] == loaded.damage
    assert h.refused("file.write", b"x", project=pid, path="a.txt")["code"] == "read-only-mode"
    assert h.refused("project.create", name="new")["code"] == "read-only-mode"
    assert h.call("file.read", project=pid, path="a.txt")[1] == b"mine"  # reading still works
    said = [r for r in h.sink.records.values() if r["rule"] == POLICY_DAMAGE_RULE]
    assert len(said) == 1 and said[0]["details"] == {"reason": loaded.damage}


def test_saving_the_policy_again_ends_the_forced_safe_mode() -> None:
    h = HostHarness()
    h.state.docs[POLICY_NAME] = DAMAGES["empty"]
    loaded = run(load_policy(h.state))
    h.ctx.policy, h.ctx.policy_damage = loaded.policy, loaded.damage
    answer, _ = h.call("policy.set", origin="human-ui", changes={"read_only": False})
    assert answer["ok"], answer
    assert h.ok("host.info")["safe_reason"] is None
    assert run(load_policy(h.state)) == type(loaded)(Policy())  # a whole policy is stored
