"""A lying peer gets nothing past the host (issue 13, finding 6; seed 002 §1, §4; seed 003
receipts; SPEC §6): everything a peer says is untrusted text. Its refusals are relayed by code
from the closed list with this host's own sentence, its ``field`` only when it names a field
our models declare; an answer outside the contract is refused at once; a receipt the called
environment did not issue for the called tool is refused; no token shape of any answer
reaches the page's answers or the local audit. The browser journey: e2e/test_peer_lies.py."""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from core.custody.pair_code import env_fingerprint
from core.custody.pairing import load_pairings
from core.custody.peer_admin import PEER_TOKENS_DOC
from core.policy import Policy
from tests.peers.harness import World, run

SECRET = re.compile(r"vb[xh]_[A-Za-z0-9_-]{20,}")


async def _lying_world() -> tuple[World, str, list[str]]:
    """A paired world and the real secrets a lying peer knows: the bearer it issued to this
    host and its own host token (which this host holds)."""
    world = World()
    await world.start()
    key = (await world.ok("env.create", name="studio"))["result"]["environment"]["envKey"]
    await world.ok("env.pair", envKey=key)
    bearer = (await load_pairings(world.state)).outbound_for(key)
    assert bearer is not None
    tokens = json.loads(world.state.docs[PEER_TOKENS_DOC])["tokens"]
    known = [bearer.reveal(), tokens[key]]
    assert all(SECRET.fullmatch(s) for s in known)
    return world, key, known


def _rewrite(change: Callable[[dict[str, Any]], None]) -> Callable[[str], str]:
    def lie(text: str) -> str:
        frame = json.loads(text)
        change(frame)
        return json.dumps(frame)

    return lie


def _nothing_leaked(world: World, secrets: list[str]) -> None:
    for text in [*world.answers, *(json.dumps(r) for r in world.sink.records.values())]:
        assert not any(s in text for s in secrets), text
        assert not SECRET.search(text), text


def test_a_peer_refusal_is_relayed_by_its_code_with_our_sentence_never_its_words() -> None:
    async def go() -> None:
        world, key, secrets = await _lying_world()

        def confess(frame: dict[str, Any]) -> None:
            if frame.get("type") == "refusal":
                frame["refusal"]["message"] = f"Paste this into your terminal: {' '.join(secrets)}"
                frame["refusal"]["field"] = secrets[0]
                frame["refusal"]["details"] = {secrets[1]: secrets[0]}

        world.servers.lying["studio"] = _rewrite(confess)
        answer = await world.call_tool(key, "file.walk", project="p_" + "0" * 16)
        refusal = answer["refusal"]
        assert refusal["code"] == "project-not-found"
        assert refusal["message"].startswith("The peer environment refused the call")
        assert "terminal" not in refusal["message"] and refusal.get("field") is None
        record = world.sink.records[answer["logged"]]
        assert (record["decision"], record["rule"]) == ("refused", "project-not-found")
        _nothing_leaked(world, secrets)

    run(go())


def test_a_peer_field_is_relayed_only_when_it_names_a_field_our_models_declare() -> None:
    async def go() -> None:
        world, key, _ = await _lying_world()
        for said, kept in (
            ("project", "project"),
            ("ops[2].name", "ops[2].name"),
            ("letter.gate.exit_status", "letter.gate.exit_status"),
            ("zz_not_a_field", None),
            ("project.(field)", None),
            ("x" * 150, None),
        ):

            def field(frame: dict[str, Any], said: str = said) -> None:
                if frame.get("type") == "refusal":
                    frame["refusal"]["field"] = said

            world.servers.lying["studio"] = _rewrite(field)
            refusal = (await world.call_tool(key, "file.walk", project="p_" + "0" * 16))["refusal"]
            assert refusal.get("field") == kept, said

    run(go())


def test_a_peer_receipt_for_a_write_here_is_refused_as_forgery_and_nothing_lands_here() -> None:
    async def go() -> None:
        world, key, secrets = await _lying_world()
        local = (await world.ok("project.create", name="mine"))["result"]["project"]["id"]
        made = await world.tool(key, "project.create", name="theirs")
        theirs = made["result"]["result"]["project"]["id"]

        def forge(frame: dict[str, Any]) -> None:
            receipt = frame.get("receipt")
            if frame.get("type") == "result" and receipt:
                receipt.update(env=world.ctx.env_key, project=local, path="never-written.txt")

        world.servers.lying["studio"] = _rewrite(forge)
        data = base64.b64encode(b"forged").decode()
        answer = await world.tool(key, "file.write", project=theirs, path="a.txt", content_b64=data)
        refusal = answer["refusal"]
        assert (refusal["code"], refusal["field"]) == ("receipt-forgery-refused", "receipt")
        assert refusal["details"] == {"outcome": "unknown", "retry": "not-blindly"}
        assert "receipt" not in answer.get("result", {})
        record = world.sink.records[answer["logged"]]
        assert (record["decision"], record["rule"]) == ("refused", "receipt-forgery-refused")
        listed = (await world.ok("file.list", project=local))["result"]["entries"]
        assert listed == []
        # a receipt naming the environment called, for the tool called, is accepted
        del world.servers.lying["studio"]
        honest = await world.tool(key, "file.write", project=theirs, path="b.txt", content_b64=data)
        assert honest["result"]["receipt"]["env"] == key
        _nothing_leaked(world, secrets)

    run(go())


def test_a_peer_receipt_for_another_tool_is_refused_as_forgery() -> None:
    async def go() -> None:
        world, key, _ = await _lying_world()
        made = await world.tool(key, "project.create", name="theirs")
        theirs = made["result"]["result"]["project"]["id"]

        def relabel(frame: dict[str, Any]) -> None:
            if frame.get("type") == "result" and frame.get("receipt"):
                frame["receipt"]["op"] = "create-asset"

        world.servers.lying["studio"] = _rewrite(relabel)
        data = base64.b64encode(b"x").decode()
        answer = await world.tool(key, "file.write", project=theirs, path="a.txt", content_b64=data)
        assert answer["refusal"]["code"] == "receipt-forgery-refused"

    run(go())


def test_a_peer_answer_outside_the_contract_is_refused_at_once_naming_nothing_it_said() -> None:
    async def go() -> None:
        world, key, secrets = await _lying_world()
        world.ctx.policy = Policy(peer_deadline_ms=20_000)

        def unknown_code(frame: dict[str, Any]) -> None:
            if frame.get("type") == "refusal":
                frame["refusal"]["code"] = secrets[0]

        world.servers.lying["studio"] = _rewrite(unknown_code)
        started = time.monotonic()
        refusal = (await world.call_tool(key, "file.walk", project="p_" + "0" * 16))["refusal"]
        assert time.monotonic() - started < 5, "answered at once, not after the deadline"
        assert (refusal["code"], refusal["status"]) == ("peer-answer-invalid", 502)
        assert refusal["details"] == {"outcome": "unknown", "retry": "safe"}
        _nothing_leaked(world, secrets)

    run(go())


def test_a_peer_cannot_speak_for_this_host() -> None:
    async def go() -> None:
        world, key, _ = await _lying_world()
        for code in ("host-restarted", "environment-not-paired", "host-active-elsewhere"):

            def claim(frame: dict[str, Any], code: str = code) -> None:
                if frame.get("type") == "refusal":
                    frame["refusal"]["code"] = code

            world.servers.lying["studio"] = _rewrite(claim)
            refusal = (await world.call_tool(key, "file.walk", project="p_" + "0" * 16))["refusal"]
            assert refusal["code"] == "peer-answer-invalid", code

    run(go())


def test_no_token_shape_of_a_peer_result_reaches_the_page() -> None:
    async def go() -> None:
        world, key, secrets = await _lying_world()

        def smuggle(frame: dict[str, Any]) -> None:
            if frame.get("type") == "result":
                frame["result"]["note"] = f"your bearer is {secrets[0]}"
                frame["result"][secrets[1]] = [secrets[0], {"deep": secrets[1]}]

        world.servers.lying["studio"] = _rewrite(smuggle)
        listed = await world.tool(key, "projects.list")
        assert listed["ok"], listed
        assert listed["result"]["result"]["note"] == "your bearer is [redacted]"
        _nothing_leaked(world, secrets)

    run(go())


def _disguises(secret: str) -> list[str]:
    """How a liar writes a secret of ours so that no shape scrub sees it (issue 29 item 8)."""
    body = secret[4:]
    return [
        body,
        body.lower(),
        body.upper(),
        base64.b64encode(body.encode()).decode(),
        base64.b64encode(body.lower().encode()).decode(),
        base64.urlsafe_b64encode(b"x" + secret.encode()).decode(),
        secret.encode().hex(),
        "".join(f"%{b:02X}" for b in secret.encode()),
    ]


def test_no_secret_this_host_holds_reaches_the_page_in_any_disguise() -> None:
    async def go() -> None:
        world, key, secrets = await _lying_world()
        bearer, token = secrets

        def disguise(frame: dict[str, Any]) -> None:
            if frame.get("type") == "result":
                frame["result"]["note"] = f"your bearer's body is {bearer[4:]}"
                frame["result"][bearer[4:].lower()] = _disguises(bearer) + _disguises(token)
            elif frame.get("type") == "refusal":
                frame["refusal"]["field"] = bearer[4:].lower()

        world.servers.lying["studio"] = _rewrite(disguise)
        listed = await world.tool(key, "projects.list")
        assert listed["ok"], listed
        result = listed["result"]["result"]
        assert result["note"] == "your bearer's body is [redacted]"
        shown_forms = result["[redacted]"]  # the prefix is not secret: it may stay
        assert len(shown_forms) == 16 and all(f.endswith("[redacted]") for f in shown_forms)
        await world.call_tool(key, "file.walk", project="p_" + "0" * 16)
        shown = "\n".join(world.answers)
        for secret in secrets:
            for form in _disguises(secret):
                assert form[2:-2] not in shown, form
                assert form[2:-2].lower() not in shown.lower() or form.startswith("%"), form

    run(go())


def test_a_peer_admin_refusal_is_relayed_with_our_sentence() -> None:
    async def go() -> None:
        world, key, secrets = await _lying_world()

        def confess(text: str) -> str:
            answer = json.loads(text)
            if not answer.get("ok"):
                answer["refusal"]["message"] = f"token: {secrets[1]}"
                answer["refusal"]["field"] = secrets[0]
            return json.dumps(answer)

        world.servers.lying["studio"] = confess
        await world.ok("env.unpair", envKey=key)
        await world.ok("env.pair", envKey=key)  # a fresh bearer: fine
        # the peer refuses a pair.issue whose host token is wrong: make ours wrong
        tokens = json.loads(world.state.docs[PEER_TOKENS_DOC])
        tokens["tokens"][key] = "vbh_" + "W" * 43
        await world.state.store(PEER_TOKENS_DOC, json.dumps(tokens).encode())
        refusal = await world.refused("env.pair", envKey=key)
        assert refusal["code"] == "host-token-required"
        assert refusal["message"].startswith("The peer environment refused the call")
        assert refusal.get("field") is None
        _nothing_leaked(world, [*secrets, "vbh_" + "W" * 43])

    run(go())


def test_a_relayed_peer_receipt_names_the_peer_as_its_issuer_never_this_host() -> None:
    """Issue 29 item 13: a receipt a peer issued about itself is its claim, relayed — marked
    ``peer:<envKey fingerprint>`` in the page's answer, never ``host``."""

    async def go() -> None:
        world, key, _ = await _lying_world()
        made = await world.tool(key, "project.create", name="theirs")
        theirs = made["result"]["result"]["project"]["id"]
        data = base64.b64encode(b"hi").decode()
        answer = await world.tool(key, "file.write", project=theirs, path="b.txt", content_b64=data)
        receipt = answer["result"]["receipt"]
        assert receipt["issuer"] == f"peer:{env_fingerprint(key)}"
        assert (receipt["env"], receipt["path"], receipt["size"]) == (key, "b.txt", 2)

    run(go())


def _set(**values: Any) -> Callable[[dict[str, Any]], None]:
    def change(frame: dict[str, Any]) -> None:
        if frame.get("type") == "result" and frame.get("receipt"):
            frame["receipt"].update(values)

    return change


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(_set(size=-1), id="negative-size"),
        pytest.param(_set(size=1.5), id="fractional-size"),
        pytest.param(_set(sha256="not-a-sha"), id="bad-sha256"),
        pytest.param(_set(sha256="AB" * 32), id="upper-case-sha256"),
        pytest.param(_set(store_version="3"), id="store-version-text"),
        pytest.param(_set(store_version=True), id="store-version-bool"),
        pytest.param(_set(store_version=-2), id="store-version-negative"),
        pytest.param(_set(path="../outside.txt"), id="path-climbs-out"),
        pytest.param(_set(path="/etc/passwd"), id="path-absolute"),
        pytest.param(_set(path="a\u0000b.txt"), id="path-nul"),
        pytest.param(_set(path="a//b.txt"), id="path-empty-segment"),
        pytest.param(_set(project="../p"), id="project-not-an-id"),
        pytest.param(_set(project=None), id="local-write-without-project"),
        pytest.param(_set(issuer="peer:AAAA-AAAA-AAAA-AAAA"), id="issuer-not-its-own"),
        pytest.param(_set(issuer="host "), id="issuer-unknown"),
        pytest.param(_set(at=-1), id="negative-time"),
        pytest.param(_set(rung="trusted-everything"), id="rung-unknown"),
    ],
)
def test_a_peer_receipt_with_impossible_values_is_refused_as_peer_answer_invalid(
    change: Callable[[dict[str, Any]], None],
) -> None:
    async def go() -> None:
        world, key, _ = await _lying_world()
        made = await world.tool(key, "project.create", name="theirs")
        theirs = made["result"]["result"]["project"]["id"]
        world.servers.lying["studio"] = _rewrite(change)
        data = base64.b64encode(b"hi").decode()
        answer = await world.tool(key, "file.write", project=theirs, path="b.txt", content_b64=data)
        assert answer["ok"] is False, answer
        assert answer["refusal"]["code"] == "peer-answer-invalid"
        assert answer["refusal"]["details"] == {"outcome": "unknown", "retry": "not-blindly"}
        record = world.sink.records[answer["logged"]]
        assert (record["decision"], record["rule"]) == ("refused", "peer-answer-invalid")

    run(go())
