"""The server's decision order where requests arrive (seed 002 §1, §5; issue 15): the envKey
is resolved before any bearer is looked at, on HTTP, on a fresh channel and on a channel
already open; then unauthenticated-call, pairing-revoked, bearer-refused."""

from __future__ import annotations

import contextlib
import json

from websockets.exceptions import ConnectionClosed

from core.custody.environment import Environments, new_env_key
from core.runtime import SystemRandomness
from tests.server.harness import Server, answer_of, close_of, execute_frame, hello

UNKNOWN = "ek_" + "0" * 32
GARBAGE = "vbx_" + "g" * 43


def _refusal(answer) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    return answer.status_code, answer.json()["refusal"]["code"]


def _environments(server: Server) -> Environments:
    return Environments.model_validate_json((server.host_dir / "environments.json").read_bytes())


def _store(server: Server, envs: Environments) -> None:
    (server.host_dir / "environments.json").write_bytes(envs.to_json())


def _second_environment(server: Server) -> str:
    key = new_env_key(SystemRandomness())
    _store(server, _environments(server).added(key, "second", "local", 0))
    return key


def test_unknown_env_key_is_404_whatever_bearer_on_http(server: Server) -> None:
    valid = server.pair()
    revoked = server.pair()
    server.revoke()
    fresh = server.pair()
    for bearer in (None, GARBAGE, revoked, valid, fresh):
        answer = server.execute(bearer, "projects.list", {}, env_key=UNKNOWN)
        assert _refusal(answer) == (404, "unknown-environment"), bearer


def test_then_missing_revoked_and_wrong_bearers_on_http(server: Server) -> None:
    revoked = server.pair()
    server.revoke()
    other = server.pair(_second_environment(server))
    assert _refusal(server.execute(None, "projects.list", {})) == (401, "unauthenticated-call")
    assert _refusal(server.execute(revoked, "projects.list", {})) == (403, "pairing-revoked")
    assert _refusal(server.execute(GARBAGE, "projects.list", {})) == (403, "bearer-refused")
    assert _refusal(server.execute(other, "projects.list", {})) == (403, "bearer-refused")
    valid = server.pair()
    assert server.execute(valid, "projects.list", {}).status_code == 200


def test_a_removed_or_rekeyed_environment_is_unknown_to_its_own_bearer(server: Server) -> None:
    second = _second_environment(server)
    bearer = server.pair(second)
    assert server.execute(bearer, "projects.list", {}, env_key=second).status_code == 200
    moved = new_env_key(SystemRandomness())
    _store(server, _environments(server).rekeyed(second, moved))
    for key in (second, moved):
        answer = server.execute(bearer, "projects.list", {}, env_key=key)
        assert _refusal(answer)[1] in ("unknown-environment", "bearer-refused"), key
    assert _refusal(server.execute(bearer, "projects.list", {}, env_key=second)) == (
        404,
        "unknown-environment",
    )
    _store(server, _environments(server).removed(moved))
    answer = server.execute(bearer, "projects.list", {}, env_key=moved)
    assert _refusal(answer) == (404, "unknown-environment")


def test_a_fresh_channel_for_an_unknown_env_key_closes_before_any_hello(server: Server) -> None:
    valid = server.pair()
    with server.channel(UNKNOWN) as ws:
        assert close_of(ws) == (1008, "unknown-environment")
    with server.channel(UNKNOWN) as ws:
        with contextlib.suppress(ConnectionClosed):  # the close may already be there
            ws.send(hello(valid))
        assert close_of(ws) == (1008, "unknown-environment")


def test_a_fresh_channel_refuses_missing_revoked_and_wrong_bearers(server: Server) -> None:
    revoked = server.pair()
    server.revoke()
    other = server.pair(_second_environment(server))
    cases = [
        (
            json.dumps({"type": "hello", "role": "environment", "bearer": ""}),
            "executor-unauthenticated",
        ),
        ('{"type": "execute"}', "executor-unauthenticated"),
        (hello(revoked), "pairing-revoked"),
        (hello(GARBAGE), "bearer-refused"),
        (hello(other), "bearer-refused"),
    ]
    for first, reason in cases:
        with server.channel() as ws:
            ws.send(first)
            assert close_of(ws) == (1008, reason), first


def test_a_channel_without_hello_is_closed_at_the_bound(server: Server) -> None:
    with server.channel() as ws:
        assert close_of(ws, timeout=10) == (1008, "executor-unauthenticated")


def test_an_open_channel_asks_the_env_key_first_on_every_frame(server: Server) -> None:
    second = _second_environment(server)
    bearer = server.pair(second)
    with server.channel(second) as ws:
        ws.send(hello(bearer))
        ws.send(execute_frame("a1", second, "projects.list", {}))
        answer, _ = answer_of(ws, "a1")
        assert answer["type"] == "result"
        ws.send(execute_frame("a2", UNKNOWN, "projects.list", {}))
        answer, _ = answer_of(ws, "a2")
        assert answer["refusal"]["code"] == "unknown-environment"
        _store(server, _environments(server).removed(second))
        ws.send(execute_frame("a3", second, "projects.list", {}))
        answer, _ = answer_of(ws, "a3")
        assert (answer["refusal"]["code"], answer["refusal"]["status"]) == (
            "unknown-environment",
            404,
        )
