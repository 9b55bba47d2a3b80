"""Custody: no refusal, log line, audit record, close reason or repr ever holds a secret
(seed 002 §2 and §5; SPEC §4 and §6).

Real secrets (drawn from the system CSPRNG) are fed through every refusal path of the custody,
pairing and admission contracts; every text that comes out is collected and scanned.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core.custody.authorize import authorize_execute
from core.custody.bearer import new_bearer
from core.custody.channels import LiveChannels
from core.custody.hello_gate import HelloGate
from core.custody.route import route_call
from core.custody.wire import parse_call_envelope, parse_peer_message
from core.policy import Policy
from core.refusals import Refused
from core.runtime import SystemRandomness
from core.secret import Secret
from core.tools.admission import CallRequest, admit
from core.tools.broker import decide
from core.tools.receipts import decode_plugin_result
from core.tools.registry import OperationRegistry
from tests.contracts.operations import builtin, plugin
from tests.contracts.strategies import fuzz
from tests.contracts.world import World
from tests.support import run


class Collector(logging.Handler):
    """Keeps every formatted log line emitted while it is attached."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@contextmanager
def all_logs() -> Iterator[Collector]:
    root = logging.getLogger()
    collector = Collector()
    level = root.level
    root.addHandler(collector)
    root.setLevel(logging.DEBUG)
    try:
        yield collector
    finally:
        root.removeHandler(collector)
        root.setLevel(level)


class Outputs:
    """Every text a scenario produced."""

    def __init__(self, *, keep_values: bool = True) -> None:
        self.texts: list[str] = []
        self.codes: set[str] = set()
        self.keep_values = keep_values

    def refusal(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn``; keep every rendering of its refusal (and of its result, if kept)."""
        try:
            value = fn(*args, **kwargs)
        except Refused as exc:
            self.codes.add(str(exc.code))
            self.texts += [
                str(exc),
                repr(exc),
                exc.message,
                json.dumps(exc.details, default=str),
                exc.body().model_dump_json(),
            ]
            return exc
        if self.keep_values:
            self.value(value)
        return value

    def value(self, value: Any) -> None:
        """Keep ``repr``, ``str`` and, for models, both dumps of ``value``."""
        if hasattr(value, "reason"):
            self.codes.add(str(value.reason))
        self.texts += [repr(value), str(value)]
        if hasattr(value, "model_dump_json"):
            self.texts += [value.model_dump_json(), json.dumps(value.model_dump(), default=str)]


def test_no_refusal_log_audit_record_or_repr_holds_a_secret() -> None:
    world = World(SystemRandomness())
    out = Outputs()
    secrets = [world.token]
    with all_logs() as logs:
        revoked = world.issue(world.alpha)
        revocation = run(world.store.revoke(world.token, world.alpha, LiveChannels()))
        valid = world.issue(world.alpha)
        foreign = world.issue(world.beta)
        outbound = new_bearer(SystemRandomness())
        near_token = Secret(world.token.reveal()[:-1] + "x")
        stranger = new_bearer(SystemRandomness())
        secrets += [revoked, valid, foreign, outbound, near_token, stranger]
        out.value(revocation)
        out.refusal(route_call, world.envs(), world.pairings(), world.peer)  # not paired yet
        out.value(run(world.store.complete(world.token, world.peer, outbound)))
        out.value(run(world.store.issue(world.token, world.beta)))

        # pairing acts with wrong tokens and misplaced secrets
        for token in (None, near_token, valid, outbound):
            out.refusal(run, world.store.issue(token, world.alpha))
            out.refusal(run, world.store.complete(token, world.peer, outbound))
            out.refusal(run, world.store.revoke(token, world.alpha))
        out.refusal(run, world.store.complete(world.token, world.peer, world.token))
        out.refusal(run, world.store.revoke(world.token, valid.reveal()))
        out.refusal(run, world.store.issue(world.token, outbound.reveal()))

        # the execute decision order, every bearer, known and unknown environments
        envs, pairings = world.envs(), world.pairings()
        for env_key in (world.alpha, world.beta, world.peer, valid.reveal()):
            for bearer in (None, valid, revoked, foreign, stranger, world.token):
                out.refusal(authorize_execute, envs, pairings, env_key, bearer)
            out.refusal(route_call, envs, pairings, env_key)

        # the hello gate and its closes
        for bearer in (valid, revoked, stranger, world.token):
            frames = [
                {"type": "hello", "role": "environment", "bearer": bearer.reveal()},
                {"type": "hello", "role": bearer.reveal(), "bearer": bearer.reveal()},
                {"type": bearer.reveal()},
                {"type": "hello", "role": "environment", bearer.reveal(): 1},
                bearer.reveal(),
            ]
            for frame in frames:
                gate = HelloGate("c", purpose="executor", opened_at_ms=0)
                out.value(gate.on_frame(frame, environments=envs, pairings=pairings, now_ms=1))
            out.value(HelloGate("c", purpose="call", opened_at_ms=0).expired(10_000))

        # wire parsers, admission, broker and the plugin-result decoder
        registry = OperationRegistry()
        registry.register(builtin())
        registry.register(plugin())
        for secret in secrets:
            s = secret.reveal()
            for frame in (
                {"envKey": s, "tool": s, "descriptorId": s, "args": {s: s}},
                {"type": "execute", "id": s, "envKey": s, "bearer": s},
                {"type": "refusal", "id": "r", "refusal": {"code": s, "status": 1, "message": s}},
                {s: s},
                s,
            ):
                out.refusal(parse_call_envelope, frame)
                out.refusal(parse_peer_message, frame)
            for tool in ("echo", "notes.save", s):
                descriptor = registry.get("echo").descriptor_id
                out.refusal(admit, registry, Policy(), CallRequest(tool, descriptor, {s: s}))
                out.refusal(admit, registry, Policy(), CallRequest(tool, s, {"text": [s]}))
            for request in (
                {"kind": "files", "action": "write", "path": s, "grant": s},
                {"kind": "files", "action": "write", "path": "../" + s},
                {"kind": "files", "action": s, "path": s},
                {"kind": "network", "method": "GET", "url": "https://x/?t=" + s},
                {"kind": s, s: s},
            ):
                out.refusal(decide, plugin(), Policy(files_grants=()), request)
            out.refusal(decode_plugin_result, {"ok": True, "result": {"receipt": s}})
            out.refusal(decode_plugin_result, {"ok": s, s: s})

        # the stored models, as anything might print them
        out.value(world.pairings())
        out.value(world.envs())
    audit = [json.dumps(r) for r in world.sink.records.values()]
    texts = out.texts + logs.lines + audit
    assert len(world.sink.records) >= 4  # issue, revoke, complete, issue were audited
    assert out.codes >= CUSTODY_PATHS, CUSTODY_PATHS - out.codes
    assert leaks([f"planted {valid.reveal()[4:]}"], secrets)  # the scan does find a leak
    assert leaks(texts, secrets) == []


CUSTODY_PATHS = {
    "host-token-required",
    "unknown-environment",
    "environment-not-paired",
    "unauthenticated-call",
    "pairing-revoked",
    "bearer-refused",
    "executor-unauthenticated",
    "message-malformed",
    "tool-unknown",
    "dispatch-owner-changed",
    "args-invalid",
    "grant-field-refused",
    "files-grant-missing",
    "capability-undeclared",
    "receipt-forgery-refused",
}
"""Refusal codes the scenario must have gone through (so the scan covers them)."""


def leaks(texts: list[str], secrets: list[Secret]) -> list[str]:
    """Every text holding a secret, or the random part of one (without its prefix)."""
    found = []
    for secret in secrets:
        value = secret.reveal()
        found += [t for t in texts if value in t or value[4:] in t]
    return found


def test_pairings_json_never_holds_an_issued_bearer_in_clear() -> None:
    world = World(SystemRandomness())
    bearers = [world.issue(world.alpha) for _ in range(3)]
    world.revoke(world.alpha)
    stored = b"".join(world.state.docs.values())
    for bearer in bearers:
        assert bearer.reveal().encode() not in stored


SECRET = "vbx_" + "S3cr3t" * 7 + "x"

secret_json = st.recursive(
    st.none() | st.integers() | st.booleans() | st.sampled_from([SECRET, "hello", "execute"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from([SECRET, "type", "role", "bearer", "envKey", "args", "receipt"]),
            inner,
            max_size=5,
        )
    ),
    max_leaves=15,
)


@fuzz(150)
@given(secret_json)
def test_refusals_never_echo_a_secret_wherever_it_sits_in_the_input(data: object) -> None:
    out = Outputs(keep_values=False)
    out.refusal(parse_call_envelope, data)
    out.refusal(parse_peer_message, data)
    out.refusal(decode_plugin_result, data)
    out.refusal(decide, plugin(), Policy(), data)
    assert all(SECRET not in text for text in out.texts)
