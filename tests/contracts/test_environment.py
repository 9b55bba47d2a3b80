"""Environment identity: envKey and environments.json (seed 002 §1, SPEC §6)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from pydantic import ValidationError

from core.custody.authorize import authorize_execute
from core.custody.environment import (
    ENVIRONMENTS_DOC,
    Environments,
    env_key_from_public_key,
    is_env_key,
    load_environments,
    new_env_key,
)
from core.memory.adapters import MemoryHostState, SeededRandomness
from core.refusals import Code, Refused
from core.runtime import SystemRandomness
from tests.contracts.world import World
from tests.support import run


class CountingRandomness:
    """A randomness port that records how many bytes it was asked for."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def token_bytes(self, n: int) -> bytes:
        self.asked.append(n)
        return bytes(range(n))


def test_env_key_is_self_issued_from_128_bits_of_csprng() -> None:
    source = CountingRandomness()
    key = new_env_key(source)
    assert source.asked == [16]
    assert key == "ek_" + bytes(range(16)).hex()
    assert re.fullmatch(r"ek_[0-9a-f]{32}", new_env_key(SystemRandomness()))
    assert new_env_key(SystemRandomness()) != new_env_key(SystemRandomness())


def test_env_key_may_be_a_public_key_hash() -> None:
    public = b"\x04" + bytes(64)
    assert env_key_from_public_key(public) == "ek_" + hashlib.sha256(public).hexdigest()[:32]
    assert is_env_key(env_key_from_public_key(public))


def test_environments_json_round_trips() -> None:
    envs = Environments().added(new_env_key(SeededRandomness()), "alpha", "local", 1)
    again = Environments.model_validate_json(envs.to_json())
    assert again == envs
    assert b'"envKey"' in envs.to_json()
    assert b'"schema":"voicebox-environments-v1"' in envs.to_json()


def test_environments_json_refuses_unknown_fields_and_duplicate_keys() -> None:
    key = "ek_" + "a" * 32
    entry = {"envKey": key, "name": "a", "kind": "local", "addedAt": 1}
    with pytest.raises(ValidationError):
        Environments.model_validate({"environments": [{**entry, "bearer": "x"}]})
    with pytest.raises(ValidationError):
        Environments.model_validate_json(json.dumps({"environments": [entry, entry]}))


def test_env_keys_are_unique_when_added() -> None:
    key = "ek_" + "b" * 32
    envs = Environments().added(key, "b", "local", 1)
    with pytest.raises(Refused) as caught:
        envs.added(key, "again", "peer", 2)
    assert caught.value.code == Code.ALREADY_EXISTS


def test_unparseable_environments_json_is_storage_failed() -> None:
    state = MemoryHostState()
    state.docs[ENVIRONMENTS_DOC] = b"{not json"
    with pytest.raises(Refused) as caught:
        run(load_environments(state))
    assert caught.value.code == Code.STORAGE_FAILED


def test_removed_environment_makes_its_bearers_fail_unknown_environment() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    authorize_execute(world.envs(), world.pairings(), world.alpha, bearer)
    world.set_envs(world.envs().removed(world.alpha))
    with pytest.raises(Refused) as caught:
        authorize_execute(world.envs(), world.pairings(), world.alpha, bearer)
    assert caught.value.code == Code.UNKNOWN_ENVIRONMENT
    assert caught.value.status == 404


def test_rekeyed_environment_makes_old_key_bearers_fail_closed() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    new_key = new_env_key(world.random)
    world.set_envs(world.envs().rekeyed(world.alpha, new_key))
    with pytest.raises(Refused) as old:
        authorize_execute(world.envs(), world.pairings(), world.alpha, bearer)
    assert old.value.code == Code.UNKNOWN_ENVIRONMENT
    # the old bearer does not reach the environment under its new identity either
    with pytest.raises(Refused) as new:
        authorize_execute(world.envs(), world.pairings(), new_key, bearer)
    assert new.value.code == Code.BEARER_REFUSED


def test_a_known_peer_is_not_an_environment_this_host_serves() -> None:
    world = World()
    with pytest.raises(Refused) as caught:
        world.envs().resolve_served(world.peer)
    assert caught.value.code == Code.UNKNOWN_ENVIRONMENT
