"""One-time pairing codes (seed 002 §3 extended by issue 15): bound, short-lived, single use,
burnt by failed claims, rate limited, stored only hashed — and the envKey fingerprint."""

from __future__ import annotations

import math

import pytest

from core.custody.environment import new_env_key
from core.custody.pair_code import (
    ALPHABET,
    CODE_CHARS,
    CODE_TTL_MS,
    MAX_CLAIMS_PER_WINDOW,
    MAX_FAILURES,
    PAIR_CODES_DOC,
    WINDOW_MS,
    PairCodeStore,
    env_fingerprint,
    new_code,
    normalize_code,
)
from core.memory.adapters import SeededRandomness
from core.refusals import Code, Refused
from core.secret import Secret
from tests.contracts.world import World
from tests.support import run


def refused(coro: object) -> Refused:
    with pytest.raises(Refused) as caught:
        run(coro)  # type: ignore[arg-type]
    return caught.value


def codes(world: World) -> PairCodeStore:
    return PairCodeStore(world.state, world.clock, world.random)


def wrong_code(right: Secret) -> Secret:
    """A well-formed code that differs from ``right`` in its last character."""
    text = right.reveal()
    last = ALPHABET[(ALPHABET.index(text[-1]) + 1) % len(ALPHABET)]
    return Secret(text[:-1] + last)


def test_a_code_carries_at_least_40_bits() -> None:
    assert CODE_CHARS * math.log2(len(ALPHABET)) >= 40
    drawn = {new_code(SeededRandomness(seed)).reveal() for seed in range(200)}
    assert len(drawn) == 200


def test_a_claimed_code_names_the_environment_it_was_minted_for() -> None:
    world = World()
    store = codes(world)
    minted = run(store.mint(world.beta))
    assert minted.env_key == world.beta
    assert run(store.claim(minted.code)) == world.beta


def test_a_code_is_single_use() -> None:
    world = World()
    store = codes(world)
    minted = run(store.mint(world.alpha))
    run(store.claim(minted.code))
    assert refused(store.claim(minted.code)).code == Code.PAIRING_CODE_REFUSED


def test_a_code_expires() -> None:
    world = World()
    store = codes(world)
    minted = run(store.mint(world.alpha))
    world.clock.advance(CODE_TTL_MS)
    assert refused(store.claim(minted.code)).code == Code.PAIRING_CODE_REFUSED


def test_a_code_still_claims_just_before_it_expires() -> None:
    world = World()
    store = codes(world)
    minted = run(store.mint(world.alpha))
    world.clock.advance(CODE_TTL_MS - 1)
    assert run(store.claim(minted.code)) == world.alpha


def test_failed_claims_burn_a_live_code() -> None:
    world = World()
    store = codes(world)
    minted = run(store.mint(world.alpha))
    for _ in range(MAX_FAILURES):
        world.clock.advance(WINDOW_MS)  # stay under the rate limit
        assert refused(store.claim(wrong_code(minted.code))).code == Code.PAIRING_CODE_REFUSED
    world.clock.advance(WINDOW_MS)
    assert refused(store.claim(minted.code)).code == Code.PAIRING_CODE_REFUSED


def test_fewer_failed_claims_than_the_limit_leave_the_code_alive() -> None:
    world = World()
    store = codes(world)
    minted = run(store.mint(world.alpha))
    for _ in range(MAX_FAILURES - 1):
        refused(store.claim(wrong_code(minted.code)))
    assert run(store.claim(minted.code)) == world.alpha


def test_claims_are_rate_limited_and_the_refused_one_is_not_a_failure() -> None:
    world = World()
    store = codes(world)
    minted = run(store.mint(world.alpha))
    failures = MAX_FAILURES - 1
    for _ in range(failures):
        refused(store.claim(wrong_code(minted.code)))
    for _ in range(MAX_CLAIMS_PER_WINDOW - failures):  # right claims fill the window
        assert run(store.claim(run(store.mint(world.beta)).code)) == world.beta
    assert refused(store.claim(minted.code)).code == Code.RATE_LIMITED
    world.clock.advance(WINDOW_MS)
    assert run(store.claim(minted.code)) == world.alpha  # the limited claim burnt nothing


def test_a_code_is_bound_to_an_environment_this_host_serves() -> None:
    world = World()
    store = codes(world)
    assert refused(store.mint(world.peer)).code == Code.UNKNOWN_ENVIRONMENT
    assert refused(store.mint(new_env_key(world.random))).code == Code.UNKNOWN_ENVIRONMENT


def test_a_code_for_a_removed_environment_claims_nothing() -> None:
    world = World()
    store = codes(world)
    minted = run(store.mint(world.alpha))
    world.set_envs(world.envs().removed(world.alpha))
    assert refused(store.claim(minted.code)).code == Code.PAIRING_CODE_REFUSED


def test_only_the_code_hash_is_stored() -> None:
    world = World()
    minted = run(codes(world).mint(world.alpha))
    stored = world.state.docs[PAIR_CODES_DOC]
    plain = minted.code.reveal()
    assert plain.encode() not in stored
    assert plain.replace("-", "").encode() not in stored
    assert plain not in repr(minted)


def test_a_typed_code_is_read_the_way_a_person_means_it() -> None:
    world = World()
    store = codes(world)
    minted = run(store.mint(world.alpha))
    typed = " " + minted.code.reveal().lower().replace("-", " ").replace("0", "o") + " "
    assert run(store.claim(Secret(typed))) == world.alpha
    assert normalize_code("ABCDE-FGHJU") is None  # U is not in the alphabet
    assert normalize_code("ABCD") is None


def test_the_fingerprint_depends_on_the_env_key_only() -> None:
    world = World()
    first = env_fingerprint(world.alpha)
    assert first == env_fingerprint(world.alpha)
    assert first != env_fingerprint(world.beta)
    groups = first.split("-")
    assert [len(g) for g in groups] == [4, 4, 4, 4]
    assert all(c in ALPHABET for c in "".join(groups))
