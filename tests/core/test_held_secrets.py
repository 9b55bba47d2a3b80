"""The secrets a host holds (issue 29 items 7–9; core/custody/held_secrets.py): what HOST_DIR
holds in clear is held from the answer after it is stored; the placement's groups and the
secrets seen in process join them; the set seen in process is bounded."""

from __future__ import annotations

import json

from core.custody.held_secrets import MAX_REMEMBERED, HeldSecrets, WatchedState
from core.custody.host_token import HOST_TOKEN_DOC
from core.custody.pairing import PAIRINGS_DOC, Pairings
from core.custody.peer_admin import PEER_TOKENS_DOC
from core.memory.adapters import MemoryHostState
from core.secret import REDACTED, Secret
from tests.support import run

TOKEN = "vbh_" + "T" * 43
BEARER = "vbx_" + "b" * 20 + "C" * 23
PEER = "vbh_" + "p" * 43
KEY_HEX = "ab" * 32


def test_a_secret_stored_in_host_dir_is_held_from_the_next_answer() -> None:
    async def go() -> None:
        held = HeldSecrets()
        state = WatchedState(MemoryHostState(), held)
        said = f"{TOKEN[4:].lower()} {BEARER[4:]} {PEER}"
        assert (await held.current(state)).redact(said) == said  # nothing held yet
        await state.store(HOST_TOKEN_DOC, TOKEN.encode())
        assert held.stale
        pairings = Pairings().with_outbound("ek_" + "1" * 32, Secret(BEARER), 0)
        await state.store(PAIRINGS_DOC, pairings.to_json())
        tokens = json.dumps({"tokens": {"ek_" + "2" * 32: PEER}})
        await state.store(PEER_TOKENS_DOC, tokens.encode())
        shown = (await held.current(state)).redact(said)
        assert shown == f"{REDACTED} {REDACTED} vbh_{REDACTED}"
        assert not held.stale
        await state.store("policy.json", b"{}")  # not a secret document
        assert not held.stale

    run(go())


def test_a_placement_group_and_a_secret_seen_in_process_are_held() -> None:
    held = HeldSecrets()
    held.set_group("audit-key", [bytes.fromhex(KEY_HEX)])
    held.remember(Secret(BEARER))
    held.remember(None)
    held.remember("too short")  # left out: it would redact ordinary text
    out = held.redactor().redact(f"{KEY_HEX} {BEARER[4:].upper()} too short")
    assert out == f"{REDACTED} {REDACTED} too short"
    held.set_group("audit-key", [])
    assert held.redactor().redact(KEY_HEX) == KEY_HEX


def test_the_secrets_seen_in_process_are_bounded_oldest_first() -> None:
    held = HeldSecrets()
    first = "vbx_" + "0" * 43
    held.remember(first)
    for n in range(MAX_REMEMBERED):
        held.remember(f"vbx_{n:043d}x")
    assert held.redactor().redact(first) == first
    assert held.redactor().redact("vbx_" + f"{MAX_REMEMBERED - 1:043d}x") == f"vbx_{REDACTED}"
