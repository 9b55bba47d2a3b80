"""Provider keys for one run (issue 31, "Granted per environment" and "Masking"): the server
keeps a spawn's keys in memory for that mission only, hands them to its runner once, the agent
— and only the agent — gets them in its environment, every form of them is redacted from the
mission log as it streams (a value split across two writes included), and nothing holds them
after the run."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from core.refusals import Code, Refused
from core.secret import REDACTED
from server_host.runner_run import _Log
from server_host.worktrees import git
from tests.runner.kit import DeskPoster, Env, environment
from tests.runner.test_desk import _opening, _spawn_body

VAR = "ANTHROPIC_API_KEY"
CANARY = "sk-ant-canary-5Xq8Lm2Pz7Rv4Tn9Wb1Kd6Hj3Fg0Yc"
GATE = Path(__file__).with_name("gate_env.py")


def _forms(value: str) -> list[str]:
    """Every form the scripted agent prints (tests/runner/agent.py ``keys``), as the log
    could hold it — the base64 ones without the characters that hold neighbouring bits."""
    raw = value.encode()
    forms = [value, raw.hex(), raw.hex().upper(), urllib.parse.quote(value, safe="")]
    forms.append("".join(f"%{b:02X}" for b in raw))
    forms.append("".join(f"\\u{ord(c):04x}" for c in value))
    for lead in (b"", b"a", b"ab"):
        whole = base64.b64encode(lead + raw + b"z").decode()
        forms.append(whole[len(lead) + 1 : len(lead) + len(raw) - 1])  # the value's own bits
        forms.append(base64.urlsafe_b64encode(lead + raw).decode()[len(lead) + 1 : -4])
    return forms


def _fragments(value: str, size: int = 12) -> set[str]:
    return {value[i : i + size] for i in range(len(value) - size + 1)}


def _clean(text: str) -> bool:
    return not any(f in text for f in _fragments(CANARY)) and not any(
        form in text for form in _forms(CANARY)
    )


def test_a_value_split_across_two_writes_is_redacted_in_the_log(tmp_path: Path) -> None:
    from core.redaction import Redactor

    log = _Log(tmp_path / "m.log", 1 << 20, Redactor([CANARY]))
    half = len(CANARY) // 2
    log.take(b"before " + CANARY[:half].encode())
    log.take(CANARY[half:].encode() + b" after\n")
    log.end_part()
    log.close()
    kept = (tmp_path / "m.log").read_text()
    assert kept == f"before {REDACTED} after\n"
    record = json.loads((tmp_path / "m.log.json").read_text())
    assert record["sha256"] == "sha256:" + hashlib.sha256(kept.encode()).hexdigest()


def test_the_agent_alone_gets_the_key_and_the_log_never_holds_it(tmp_path: Path) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            pin = env.pin(mode="keys", arg=VAR, gate=str(GATE))
            job = await env.open_mission()
            from core.secret import Secret

            job.keys = {VAR: Secret(CANARY)}
            poster = DeskPoster(env)
            done = asyncio.Event()
            scanner = asyncio.ensure_future(_argv_scan(done))
            try:
                outcome = await env.run(job, pin, poster)
            finally:
                done.set()
            scanned, leaked = await scanner
            assert scanned > 0 and leaked == []  # the agent's argv was seen; none held the key
            # nothing in the mission's branch holds it (the agent wrote its sha256 only)
            tree = git(
                env.folder, "grep", "-I", "-c", CANARY[:12], f"vbx/{job.mission_id}", check=False
            )
            assert tree.stdout == ""
            assert outcome.phase == "merge_wait", outcome
            # the agent saw the value: it wrote its sha256, committed on the mission's branch
            seen = git(env.folder, "show", f"vbx/{job.mission_id}:KEY.sha256").stdout.strip()
            assert seen == hashlib.sha256(CANARY.encode()).hexdigest()
            log = (env.root / "runner-logs" / f"{job.mission_id}.log").read_text()
            assert _clean(log), log
            assert log.count(REDACTED) >= len(_forms(CANARY)) + 1, log
            assert "split [redacted] end" in log
            # the gate's environment does not hold it
            gate_line = next(line for line in log.splitlines() if line.startswith("GATE-ENV "))
            assert VAR not in gate_line.split()
            # not in argv (the pin names the variable, never the value), letters, the audit
            assert CANARY not in json.dumps(pin.command)
            assert _clean(json.dumps(poster.letters))
            assert _clean(json.dumps(await _audit(env)))
            # forgotten when the run ended
            assert job.keys == {}
        finally:
            env.close()

    asyncio.run(main())


def _argvs() -> list[str]:
    """Every process's argv now, as ``ps`` would show it."""
    out = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            out.append(cmdline.read_bytes().decode("utf-8", "replace"))
        except OSError:
            continue
    return out


async def _argv_scan(done: asyncio.Event) -> tuple[int, list[str]]:
    """Read every process's argv until ``done``: how many of them were the scripted agent's
    (``agent.py keys``), and those holding a fragment of the canary."""
    scanned, leaked = 0, []
    while not done.is_set():
        for text in await asyncio.to_thread(_argvs):
            scanned += "agent.py\0keys" in text
            if any(f in text for f in _fragments(CANARY)):
                leaked.append(text[:200])
        await asyncio.sleep(0.02)  # a poll while the run goes on, never a wait for it
    return scanned, leaked


async def _audit(env: Env) -> list[dict[str, Any]]:
    sink = env.service.composed.sink
    assert sink is not None
    last = await sink.last()
    return [] if last is None else [r.record for r in await sink.range(1, last.seq)]


def test_the_server_holds_a_runs_keys_only_until_its_runner_takes_them(tmp_path: Path) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            env.pin(mode="ok", keys=(VAR,))
            desk = env.service.runners
            poster = DeskPoster(env)
            await poster.announce()
            packet = "# a packet\n"
            letter = _opening(env, "msn_00000000cc01", packet)
            body = _spawn_body(env, letter, packet)
            from core.secret import Secret

            with pytest.raises(Refused) as caught:
                await desk.spawn(
                    "peer:test",
                    body.model_copy(update={"keys": {"LD_PRELOAD": Secret(CANARY)}}),
                )
            assert caught.value.code == Code.ARGS_INVALID
            assert caught.value.field == "keys.variable"
            assert _clean(caught.value.body().model_dump_json())
            body = body.model_copy(update={"keys": {VAR: Secret(CANARY)}})
            await desk.spawn("peer:test", body)
            # while queued and running, the server's redaction holds it
            assert CANARY not in env.service.secrets.redactor().redact(f"x {CANARY} y")
            work = (await poster.announce())["work"]
            assert [w["keys"] for w in work] == [{VAR: CANARY}]  # handed over once
            queued = [j for q in desk.queues.values() for j in q.jobs]
            assert queued == [] and "keys" not in json.dumps(queued)
            again = await poster.announce(running=["msn_00000000cc01"])
            assert again["work"] == []
            assert CANARY not in env.service.secrets.redactor().redact(CANARY)
            # the run ended (its runner no longer lists it): the server forgets the value
            await poster.announce(running=[])
            assert env.service.secrets.redactor().redact(CANARY) == CANARY
            assert _clean(json.dumps(await _audit(env)))
            logs = [p for p in env.root.rglob("*.log") if p.is_file()]
            assert all(_clean(p.read_text(errors="replace")) for p in logs)
        finally:
            env.close()

    asyncio.run(main())


def test_the_runner_takes_only_keys_core_allows_from_a_queued_job() -> None:
    from server_host.runner import _keys

    taken = _keys({VAR: CANARY, "LD_PRELOAD": CANARY, "SHORT_KEY": "tiny", "NUMBER": 7})
    assert list(taken) == [VAR] and taken[VAR].reveal() == CANARY
    assert repr(taken[VAR]) == f"Secret({REDACTED!r})"
    assert _keys(["not", "a", "map"]) == {}


def test_the_server_queues_a_spawn_only_with_exactly_the_keys_its_pin_declares(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            env.pin(mode="ok", keys=(VAR,))
            desk = env.service.runners
            poster = DeskPoster(env)
            await poster.announce()
            assert [r["keys"] for r in desk.runners()] == [[VAR]]  # names, never a value
            packet = "# a packet\n"
            body = _spawn_body(env, _opening(env, "msn_00000000cc02", packet), packet)
            from core.secret import Secret

            other = "OPENAI_API_KEY"
            for keys in ({}, {other: Secret(CANARY)}, {VAR: Secret(CANARY), other: Secret(CANARY)}):
                with pytest.raises(Refused) as caught:
                    await desk.spawn("peer:test", body.model_copy(update={"keys": keys}))
                assert caught.value.code == Code.ARGS_INVALID and caught.value.field == "keys"
                assert VAR in caught.value.message and _clean(caught.value.message)
            assert [j for q in desk.queues.values() for j in q.jobs] == []  # nothing queued
            assert env.service.secrets.redactor().redact(CANARY) == CANARY  # nothing held
            await desk.spawn("peer:test", body.model_copy(update={"keys": {VAR: Secret(CANARY)}}))
            assert [len(q.jobs) for q in desk.queues.values()] == [1]
        finally:
            env.close()

    asyncio.run(main())
