"""Peer environments end to end in one process: pairing, calls, revocation, refusals
(seed 002; SPEC §6). The browser journey is e2e/test_peers.py; these pin the laws fast."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import random
import re

from core.custody.environment import load_environments, save_environments
from core.custody.pairing import PAIRINGS_DOC, load_pairings
from core.host.operations import Call, Operation, Outcome
from core.model import Contract, NoArgs
from core.policy import Policy
from core.secret import Secret
from core.tools.builtin import BuiltinTool
from tests.peers.harness import World, run

SECRET = re.compile(r"vb[xh]_[A-Za-z0-9_-]{20,}")


class Slow(Contract):
    """Test result."""

    done: bool


async def _slow(call: Call) -> Outcome:  # type: ignore[no-untyped-def]
    await asyncio.sleep(2)
    return Outcome(Slow(done=True))


SLOW = Operation("test.slow", NoArgs, Slow, _slow, "test only: waits 2 s")
"""A test-only host operation that waits, exposed as a peer tool by the tests below."""


def add_slow_tool(world: World, name: str) -> None:
    tools = world.servers.servers[name].tools
    tools.add(BuiltinTool("test.slow", "test.slow", "test only"), SLOW)  # type: ignore[attr-defined]


async def paired_world() -> tuple[World, str]:
    world = World()
    await world.start()
    key = (await world.ok("env.create", name="studio"))["result"]["environment"]["envKey"]
    await world.ok("env.pair", envKey=key)
    return world, key


def no_secret_in(world: World) -> None:
    for answer in world.answers:
        assert not SECRET.search(answer), answer


def test_unknown_environment_is_refused_before_anything_else() -> None:
    async def go() -> None:
        world, _ = await paired_world()
        answer = await world.call(
            "tool.call",
            envKey="ek_" + "0" * 32,
            tool="projects.list",
            descriptorId="d_" + "0" * 24,
            args={},
        )
        assert answer["refusal"]["code"] == "unknown-environment"
        assert answer["refusal"]["status"] == 404

    run(go())


def test_a_peer_without_a_stored_bearer_is_environment_not_paired() -> None:
    async def go() -> None:
        world = World()
        await world.start()
        key = (await world.ok("env.create", name="studio"))["result"]["environment"]["envKey"]
        refusal = await world.refused("tool.discover", envKey=key)
        assert (refusal["code"], refusal["status"]) == ("environment-not-paired", 403)

    run(go())


def test_paired_calls_run_in_the_peer_and_writes_carry_a_host_receipt() -> None:
    async def go() -> None:
        world, key = await paired_world()
        made = await world.tool(key, "project.create", name="Проект-ü-📦")
        pid = made["result"]["result"]["project"]["id"]
        data = bytes(range(256))
        wrote = await world.tool(
            key,
            "file.write",
            project=pid,
            path="bin/blob.dat",
            content_b64=base64.b64encode(data).decode(),
        )
        receipt = wrote["result"]["receipt"]
        assert receipt["rung"] == "local-write" and receipt["env"] == key
        assert receipt["size"] == 256 and receipt["path"] == "bin/blob.dat"
        assert receipt["sha256"] == hashlib.sha256(data).hexdigest()
        # the peer's own storage has it; the local host's does not
        peer = world.servers.servers["studio"].ctx
        assert pid in await peer.roots.list_ids()
        assert pid not in await world.ctx.roots.list_ids()
        no_secret_in(world)

    run(go())


def test_revoke_answers_the_pending_call_closes_the_channel_and_stays_revoked() -> None:
    async def go() -> None:
        world, key = await paired_world()
        add_slow_tool(world, "studio")
        pending = asyncio.ensure_future(world.tool(key, "test.slow"))
        await asyncio.sleep(0.3)
        assert world.host.peers.calls.is_connected(key)
        revoked = await world.ok("env.revoke", envKey=key)
        answer = await pending
        assert answer["refusal"]["code"] == "pairing-revoked"
        assert answer["refusal"]["details"]["outcome"] == "unknown"
        assert revoked["result"]["channelsClosed"] == 1
        record = world.sink.records[revoked["logged"]]
        assert (record["rule"], record["op"]) == ("pairing-revoked", "env.revoke")
        peer_record = world.servers.servers["studio"].ctx.audit
        assert (await peer_record.page(limit=1))[0]["rule"] == "pairing-revoked"
        # the next call: still pairing-revoked (the peer kept the bearer in revokedBearers)
        again = await world.call_tool(key, "projects.list")
        assert again["refusal"]["code"] == "pairing-revoked"
        no_secret_in(world)

    run(go())


def test_a_revoked_peer_is_listed_revoked_not_paired_until_it_pairs_again() -> None:
    async def go() -> None:
        world, key = await paired_world()
        await world.ok("env.revoke", envKey=key)

        def standing(listed: dict) -> list[tuple[bool, bool]]:
            envs = listed["result"]["environments"]
            return [(e["paired"], e["revoked"]) for e in envs if e["envKey"] == key]

        assert standing(await world.ok("env.list")) == [(False, True)]
        assert (await world.ok("fleet.list"))["result"]["environments"] == []
        await world.ok("env.pair", envKey=key)
        assert standing(await world.ok("env.list")) == [(True, False)]
        assert (await world.call_tool(key, "projects.list")).get("refusal") is None

    run(go())


def test_a_silent_peer_is_environment_unreachable_with_the_outcome_unknown() -> None:
    async def go() -> None:
        world, key = await paired_world()
        world.ctx.policy = Policy(peer_deadline_ms=300)
        world.servers.silent.add("studio")
        refusal = (await world.call_tool(key, "project.create", name="x"))["refusal"]
        assert (refusal["code"], refusal["status"]) == ("environment-unreachable", 502)
        assert refusal["details"] == {"outcome": "unknown", "retry": "not-blindly"}

    run(go())


def test_a_channel_that_never_says_hello_is_closed_within_the_bound() -> None:
    async def go() -> None:
        world, key = await paired_world()
        server = world.servers.servers["studio"]
        server.ctx.policy = Policy(hello_bound_ms=200)
        closed: list[tuple[int, str]] = []
        heard = asyncio.Event()

        async def on_close(code: int, reason: str) -> None:
            closed.append((code, reason))
            heard.set()

        async def nothing(*_: object) -> None:
            return None

        started = asyncio.get_running_loop().time()
        await world.servers.connect("studio", nothing, nothing, on_close, env_key=key)
        await asyncio.wait_for(heard.wait(), 2)
        assert closed == [(1008, "unauthenticated-call")]
        assert asyncio.get_running_loop().time() - started < 0.2 + 0.5

    run(go())


def test_a_hello_with_a_bearer_the_peer_never_issued_is_bearer_refused() -> None:
    async def go() -> None:
        world, key = await paired_world()
        # replace the stored outbound bearer with a well-formed stranger
        pairings = await load_pairings(world.state)
        forged = pairings.with_outbound(key, Secret("vbx_" + "A" * 43), 0)
        await world.state.store(PAIRINGS_DOC, forged.to_json())
        refusal = (await world.call_tool(key, "projects.list"))["refusal"]
        assert (refusal["code"], refusal["status"]) == ("bearer-refused", 403)

    run(go())


async def rekey_peer(world: World, key: str) -> None:
    """The peer's operator re-keys the environment the host is paired with."""
    state = world.servers.servers["studio"].ctx.state
    await save_environments(state, (await load_environments(state)).rekeyed(key, "ek_" + "e" * 32))


def test_a_call_to_a_rekeyed_peer_is_unknown_environment_not_bearer_refused() -> None:
    """Seed 002 §1/§5: the peer resolves the envKey before it looks at the hello's bearer."""

    async def go() -> None:
        world, key = await paired_world()
        await rekey_peer(world, key)
        refusal = (await world.call_tool(key, "projects.list"))["refusal"]
        assert (refusal["code"], refusal["status"]) == ("unknown-environment", 404)

    run(go())


def test_a_fresh_channel_for_a_rekeyed_environment_closes_unknown_environment_whatever_bearer() -> (
    None
):
    async def go() -> None:
        world, key = await paired_world()
        valid = (await load_pairings(world.state)).outbound_for(key)
        assert valid is not None
        await rekey_peer(world, key)
        hellos = [
            {"type": "hello", "role": "environment", "bearer": valid.reveal()},
            {"type": "hello", "role": "environment", "bearer": "vbx_" + "A" * 43},
            {"type": "hello", "role": "environment", "bearer": ""},
            {"type": "hello", "role": "environment"},
        ]
        closed: list[tuple[int, str]] = []
        heard = asyncio.Event()

        async def on_close(code: int, reason: str) -> None:
            closed.append((code, reason))
            heard.set()

        async def nothing(*_: object) -> None:
            return None

        for frame in hellos:
            closed.clear()
            heard.clear()
            channel = await world.servers.connect("studio", nothing, nothing, on_close, env_key=key)
            await channel.send(json.dumps(frame))
            await asyncio.wait_for(heard.wait(), 2)
            assert closed == [(1008, "unknown-environment")]

    run(go())


def test_admin_acts_need_the_peers_host_token() -> None:
    async def go() -> None:
        world, key = await paired_world()
        wrong = json.dumps({"op": "pair.issue", "hostToken": "vbh_" + "B" * 43, "envKey": key})
        answer = json.loads(await world.servers.admin("studio", wrong))
        assert answer["refusal"]["code"] == "host-token-required"
        claim_again = json.loads(await world.servers.admin("studio", '{"op": "claim"}'))
        assert claim_again["refusal"]["code"] == "host-token-required"

    run(go())


def test_unpair_forgets_the_bearer_and_the_next_call_is_environment_not_paired() -> None:
    async def go() -> None:
        world, key = await paired_world()
        await world.ok("env.unpair", envKey=key)
        listed = (await world.ok("env.list"))["result"]["environments"]
        assert [e["paired"] for e in listed if e["envKey"] == key] == [False]
        assert (await world.refused("tool.discover", envKey=key))[
            "code"
        ] == "environment-not-paired"

    run(go())


def test_env_list_shows_local_first_and_never_a_secret() -> None:
    async def go() -> None:
        world, key = await paired_world()
        envs = (await world.ok("env.list"))["result"]["environments"]
        assert [e["kind"] for e in envs] == ["local", "peer"]
        assert envs[1] == {
            "name": "studio",
            "envKey": key,
            "kind": "peer",
            "paired": True,
            "revoked": False,
            "running": True,
            "connected": False,
            "remote": None,
        }
        no_secret_in(world)

    run(go())


def test_contact_messages_route_by_environment_key_and_agent_id() -> None:
    async def go() -> None:
        world, key = await paired_world()
        here = await world.ok(
            "fleet.contact",
            environmentKey=world.ctx.env_key,
            agentId="scribe",
            text="hello locally",
        )
        there = await world.ok(
            "fleet.contact", environmentKey=key, agentId="builder-1", text="hello studio"
        )
        assert (here["result"]["route"], there["result"]["route"]) == ("local", "peer")
        local_inbox = (await world.ok("inbox.read"))["result"]["messages"]
        assert [(m["agent_id"], m["text"]) for m in local_inbox] == [("scribe", "hello locally")]
        peer = world.servers.servers["studio"]
        peer_inbox = json.loads(await peer.ctx.state.load("inbox.json"))["messages"]
        assert [(m["agent_id"], m["text"]) for m in peer_inbox] == [("builder-1", "hello studio")]
        assert peer_inbox[0]["from_env"].startswith("peer:")
        await world.ok("env.unpair", envKey=key)
        refusal = await world.refused("fleet.contact", environmentKey=key, agentId="x", text="y")
        assert refusal["code"] == "environment-not-paired"

    run(go())


def test_a_message_holding_a_secret_this_host_keeps_is_never_delivered() -> None:
    """``fleet.contact`` (to this host's inbox or a peer's) and ``inbox.deliver`` refuse
    ``sanitizer_refused`` on ``text`` when it holds a held secret, in any form the redactor
    knows, and ``tool.call`` to a peer on ``args``; they name no value and store nothing in
    either inbox — agents read an inbox as they read
    a letter (``mailbox.send``'s law); the same message without it is delivered."""

    async def go() -> None:
        world, key = await paired_world()
        secret = "sk-live-" + "7" * 40
        world.ctx.secrets.set_group("test-keys", [secret])
        peer = world.servers.servers["studio"]
        for text in (f"use {secret}", base64.b64encode(secret.encode()).decode()):
            for env in (world.ctx.env_key, key):
                refusal = await world.refused(
                    "fleet.contact", environmentKey=env, agentId="scribe", text=text
                )
                assert (refusal["code"], refusal["field"]) == ("sanitizer_refused", "text")
                assert secret not in json.dumps(refusal)
            refusal = await world.refused("inbox.deliver", agent_id="scribe", text=text)
            assert (refusal["code"], refusal["field"]) == ("sanitizer_refused", "text")
            refusal = await world.refused(
                "tool.call",
                envKey=key,
                tool="contact.deliver",
                descriptorId=await world.descriptor("contact.deliver"),
                args={"agent_id": "scribe", "text": text},
            )
            assert (refusal["code"], refusal["field"]) == ("sanitizer_refused", "args")
        assert await world.state.load("inbox.json") is None
        assert await peer.ctx.state.load("inbox.json") is None
        await world.ok("fleet.contact", environmentKey=key, agentId="scribe", text="no key")
        assert json.loads(await peer.ctx.state.load("inbox.json"))["messages"][0]["text"] == (
            "no key"
        )

    run(go())


def test_contact_in_safe_mode_is_refused_read_only_mode_by_the_delivery() -> None:
    async def go() -> None:
        world, _ = await paired_world()
        world.ctx.policy = Policy(read_only=True)
        refusal = await world.refused(
            "fleet.contact", environmentKey=world.ctx.env_key, agentId="scribe", text="hi"
        )
        assert refusal["code"] == "read-only-mode"

    run(go())


def test_local_is_a_reserved_environment_name_refused_as_such() -> None:
    async def go() -> None:
        world = World()
        await world.start()
        refusal = await world.refused("env.create", name="local")
        assert refusal["code"] == "name-invalid"
        assert "'local' names this browser's own environment" in refusal["message"]
        listed = (await world.ok("env.list"))["result"]["environments"]
        assert [e["kind"] for e in listed] == ["local"]

    run(go())


def test_a_peers_stream_is_capped_and_nothing_past_the_cap_is_relayed() -> None:
    """Issue 13: a peer's streaming answer (an export) went chunk by chunk into the page's
    Blob with no bound. Past the cap the call is refused message-too-large, and the page
    was handed no byte beyond it; the channel still serves the next call."""

    async def go() -> None:
        world, key = await paired_world()
        made = await world.tool(key, "project.create", name="big")
        pid = made["result"]["result"]["project"]["id"]
        noise = random.Random(13)
        for i in range(8):  # 1.2 MB that does not compress: the archive streams in 2 chunks
            content = base64.b64encode(noise.randbytes(150_000)).decode()
            wrote = await world.tool(
                key, "file.write", project=pid, path=f"part{i}.bin", content_b64=content
            )
            assert wrote["ok"], wrote
        peers = world.host.peers.calls
        whole = await world.tool(key, "project.export", project=pid)
        assert whole["ok"], whole
        size = sum(len(c) for c in whole["chunks"])
        peers.max_stream_bytes = size - 1
        capped = await world.tool(key, "project.export", project=pid)
        assert (capped["ok"], capped["refusal"]["code"]) == (False, "message-too-large")
        assert 0 < sum(len(c) for c in capped["chunks"]) <= size - 1
        peers.max_stream_bytes = size
        assert (await world.tool(key, "project.export", project=pid))["ok"]

    run(go())
