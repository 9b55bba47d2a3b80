"""The coding-agent harness on the environment (issue 31 "Harness"): the runner probes each
pinned template's executable and ``--version`` in the sandbox, with the agent's scrubbed
environment and bounds, and says what it found or why not; the identity lists it by the pin's
labels and executable names (never a path); a spawn names the active template by label, the
server checks it is pinned and that the keys are exactly that template's, and the runner runs
that template; ``voicebox-env keys`` lists variable names per mission and nothing else; a gone
runner's run keys leave the server's memory."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.missions.harness import TemplateProbe
from core.missions.runner_pins import parse_pins
from core.refusals import Code, Refused
from core.secret import Secret
from server_host.harness_probe import probe_fence, probe_pin, probe_template
from server_host.runner_desk import LIVE_MS
from server_host.sandbox import Fence, NoSandbox
from tests.runner.kit import DeskPoster, Env, environment
from tests.runner.test_desk import _opening, _spawn_body

CLI = Path(__file__).with_name("bin") / "fake-agent-cli"
VAR = "ANTHROPIC_API_KEY"
CANARY = "sk-ant-harness-3Jq7Wd2Lm9Rx5Tb8Pk1Vn6Hc4Fz0Ga"


def templates_toml(project: str, *, gate: str = "check.py") -> str:
    """``build-1`` with two templates of the stand-in CLI: ``vendor-a`` (the agent's ``ok``
    mode, no key) and ``vendor-b`` (its ``keys`` mode: it prints the key in every form and
    writes its sha256; it needs ``ANTHROPIC_API_KEY``)."""
    return (
        "[[runner]]\n"
        'runner_id = "build-1"\n'
        'capability = "build-runner"\n'
        f'projects = ["{project}"]\n'
        f'gate_command = ["python3", "{gate}"]\n'
        "agent_time_limit_s = 30\n"
        "\n[[runner.template]]\n"
        'label = "vendor-a"\n'
        f'command = ["{CLI}", "ok", "{{packet_file}}"]\n'
        "\n[[runner.template]]\n"
        'label = "vendor-b"\n'
        f'command = ["{CLI}", "keys", "{{packet_file}}", "{VAR}"]\n'
        f'keys = ["{VAR}"]\n'
    )


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def test_the_runner_probes_each_templates_executable_in_the_sandbox_and_says_what_it_found(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        env = await environment(tmp_path, git_repo=False)
        try:
            text = templates_toml(env.project)
            text = text.replace(f'"{CLI}", "ok"', '"python3", "ok"')
            text += (
                '\n[[runner.template]]\nlabel = "gone"\ncommand = ["no-such-agent-cli-x9"]\n'
                '\n[[runner.template]]\nlabel = "local"\ncommand = ["./bin/agent"]\n'
            )
            (env.root / "runners.toml").write_text(text, encoding="utf-8")
            pin = parse_pins(text).runner[0]
            probes = {p.label: p for p in await probe_pin(env.home, pin, env.service.sandbox)}
            assert probes["vendor-a"].found and probes["vendor-a"].executable == "python3"
            assert (probes["vendor-a"].version or "").startswith("Python 3.")
            b = probes["vendor-b"]
            assert b.found and b.executable == "fake-agent-cli"
            assert b.version == "fake-agent-cli 9.4.1 (built in build)"  # its path cut
            assert probes["gone"] == TemplateProbe.of(
                "gone", "no-such-agent-cli-x9", found=False, reason="missing"
            )
            assert probes["local"].reason == "relative" and not probes["local"].found
            # an executable the agent could not see (under the environment's root) is missing
            hidden = _script(env.root / "agent-in-root", "echo 1\n")
            text2 = text.replace('"./bin/agent"', f'"{hidden}"')
            pin2 = parse_pins(text2).runner[0]
            probes2 = {p.label: p for p in await probe_pin(env.home, pin2, env.service.sandbox)}
            assert probes2["local"].reason == "missing"
            assert str(env.root) not in json.dumps([p.model_dump() for p in probes2.values()])
        finally:
            env.close()

    asyncio.run(main())


def test_a_probe_is_bounded_in_time_and_output_and_runs_without_keys(tmp_path: Path) -> None:
    async def main() -> None:
        from core.missions.runner_pins import RunnerTemplate

        fence = Fence(writable=(), scratch=())
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # the runner_env shape
        hang = RunnerTemplate(label="hang", command=[_script(tmp_path / "hang", "sleep 60\n")])
        started = time.monotonic()
        probe = await probe_template(
            hang, sandbox=NoSandbox(), fence=fence, env=env, cwd=tmp_path, limit_s=0.5
        )
        assert probe.found and probe.reason == "timed-out", probe
        assert time.monotonic() - started < 5
        fails = RunnerTemplate(
            label="fails",
            command=[_script(tmp_path / "fails", "echo 'boom /opt/x/lib/tool.so'; exit 3\n")],
        )
        probe = await probe_template(fails, sandbox=NoSandbox(), fence=fence, env=env, cwd=tmp_path)
        assert probe.found and probe.reason == "failed" and probe.version == "boom tool.so"
        names = "v $(env | cut -d= -f1 | sort | tr '\\n' ' ')"
        noisy = _script(tmp_path / "loud", f'echo "{names}"\nyes | head -c 10000000\n')
        loud = RunnerTemplate(label="loud", command=[noisy])
        os.environ["VOICEBOX_PROBE_CANARY"] = CANARY
        try:
            probe = await probe_template(
                loud, sandbox=NoSandbox(), fence=fence, env=env, cwd=tmp_path
            )
        finally:
            del os.environ["VOICEBOX_PROBE_CANARY"]
        assert probe.found and probe.reason is None
        names = set((probe.version or "").split()[1:])
        assert names <= {"PATH", "HOME", "PWD", "SHLVL", "_"}, names  # the env given, no more
        assert len(probe.version or "") <= 120
        # the fence the runner gives a probe: no worktree, the root hidden, no network
        from server_host.home import Home

        made = probe_fence(Home(tmp_path / "root"))
        assert made.writable == () and not made.network
        assert (tmp_path / "root") in made.hidden

    asyncio.run(main())


def _templates(env: Env) -> None:
    (env.root / "runners.toml").write_text(templates_toml(env.project), encoding="utf-8")


def test_an_announced_probe_is_listed_by_the_pins_labels_never_a_path(tmp_path: Path) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            _templates(env)
            poster = DeskPoster(env)
            reported = [
                {"label": "vendor-b", "executable": "liar", "found": True, "version": "/x/b 1"},
                {"label": "unpinned", "executable": "x", "found": True, "version": "1"},
            ]
            await poster.announce(probes=reported)
            (row,) = (await env.service.identity())["runners"]
            assert [t["label"] for t in row["templates"]] == ["vendor-a", "vendor-b"]
            b = row["templates"][1]
            assert b["executable"] == "fake-agent-cli" and b["version"] == "b 1"
            assert b["keys"] == [VAR] and row["keys"] == []  # the first template's
            assert str(CLI.parent) not in json.dumps(row)
            with pytest.raises(ValueError, match="executable"):  # a path is not a name
                await poster.announce(
                    probes=[{"label": "vendor-a", "executable": "/usr/bin/x", "found": True}]
                )
        finally:
            env.close()

    asyncio.run(main())


def test_a_spawn_runs_the_template_it_names_with_exactly_that_templates_keys(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            _templates(env)
            desk = env.service.runners
            poster = DeskPoster(env)
            await poster.announce()
            packet = "# a packet\n"
            letter = _opening(env, "msn_00000000dd01", packet)
            body = _spawn_body(env, letter, packet)
            refusals = {}
            for template, keys in (
                ("vendor-c", {}),  # not pinned
                ("vendor-b", {}),  # its keys missing
                ("vendor-a", {VAR: Secret(CANARY)}),  # a key its template does not need
                (None, {VAR: Secret(CANARY)}),  # the first template is vendor-a
            ):
                with pytest.raises(Refused) as caught:
                    await desk.spawn(
                        "peer:t", body.model_copy(update={"template": template, "keys": keys})
                    )
                refusals[template] = caught.value
            assert refusals["vendor-c"].code == Code.PERMISSION_DENIED
            assert "Settings → Harness" in refusals["vendor-c"].body().message
            assert {refusals[t].code for t in ("vendor-b", "vendor-a", None)} == {Code.ARGS_INVALID}
            assert [j for q in desk.queues.values() for j in q.jobs] == []  # nothing queued
            good = body.model_copy(update={"template": "vendor-b", "keys": {VAR: Secret(CANARY)}})
            await desk.spawn("peer:t", good)
            (work,) = (await poster.announce())["work"]
            assert work["template"] == "vendor-b" and work["keys"] == {VAR: CANARY}
            assert "vendor-b" not in json.dumps(letter) and "fake-agent" not in json.dumps(letter)

            # the runner runs the template the job names: vendor-b's agent prints its variables
            pin = parse_pins((env.root / "runners.toml").read_text()).runner[0]
            made = await env.open_mission()
            made.template = "vendor-b"
            made.keys = {VAR: Secret(CANARY)}
            outcome = await env.run(made, pin, DeskPoster(env))
            log = (env.root / "runner-logs" / f"{made.mission_id}.log").read_text()
            assert outcome.phase == "merge_wait", (outcome, log)
            assert "agent keys: packet of" in log and "agent ok" not in log
            assert "leak [redacted] end" in log and CANARY not in log
            # a label the pin no longer has fails the run, saying so
            gone = await env.open_mission()
            gone.template = "vendor-z"
            outcome = await env.run(gone, pin, DeskPoster(env))
            assert outcome.phase == "failed"
            assert outcome.reason == "this runner no longer pins the agent template vendor-z"
        finally:
            env.close()

    asyncio.run(main())


def test_a_gone_runners_run_keys_leave_the_servers_memory(tmp_path: Path) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            _templates(env)
            desk = env.service.runners
            poster = DeskPoster(env)
            await poster.announce()
            keyed = {"template": "vendor-b", "keys": {VAR: Secret(CANARY)}}
            running, queued = "msn_00000000ee01", "msn_00000000ee02"
            for mission in (running, queued):
                packet = f"# {mission}\n"
                body = _spawn_body(env, _opening(env, mission, packet), packet)
                await desk.spawn("peer:t", body.model_copy(update=keyed))
            (work,) = (await poster.announce())["work"]  # max_parallel 1: one handed out
            assert work["mission_id"] == running
            await poster.announce(running=[running])
            held = await desk.held_keys()
            assert [(r["missionId"], r["state"]) for r in held] == [
                (running, "running"),
                (queued, "queued"),
            ]
            redactor = env.service.secrets.redactor
            assert CANARY not in redactor().redact(CANARY)
            # the runner dies: no announce past its liveness window
            desk.live["build-1"].seen_ms -= LIVE_MS + 1
            forgotten = await desk.forget_gone()
            assert sorted(forgotten) == [running, queued]
            assert redactor().redact(CANARY) == CANARY  # no group holds it any more
            assert desk.run_keys == {} and await desk.held_keys() == []
            assert "keys" not in json.dumps([j for q in desk.queues.values() for j in q.jobs])
            assert [j for q in desk.queues.values() for j in q.jobs] == []
            heads = await env.heads()
            assert heads[queued]["letter"]["phase"] == "failed"
            assert "went away" in heads[queued]["letter"]["verdict"]["gist"]
            # forgetting is not a one-shot: the watcher does it by itself
            assert desk._watching is not None
        finally:
            env.close()

    asyncio.run(main())


def test_voicebox_env_keys_lists_variable_names_per_mission_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def main() -> None:
        from server_host.admin import start_admin
        from server_host.cli import _keys

        env = await environment(tmp_path)
        admin = None
        try:
            _templates(env)
            args = argparse.Namespace(root=str(env.root))
            assert await _keys(args) == 0  # no server runs: nothing is held
            assert "no server runs" in capsys.readouterr().out
            admin = await start_admin(env.service, env.home.admin_socket)
            assert await _keys(args) == 0
            assert capsys.readouterr().out == "the server holds no provider key now\n"
            await DeskPoster(env).announce()
            packet = "# keys\n"
            body = _spawn_body(env, _opening(env, "msn_00000000ff01", packet), packet)
            keyed = {"template": "vendor-b", "keys": {VAR: Secret(CANARY)}}
            await env.service.runners.spawn("peer:t", body.model_copy(update=keyed))
            assert await _keys(args) == 0
            out = capsys.readouterr().out
            assert out == f"msn_00000000ff01  build-1  queued  {VAR}\n"
            fingerprint = __import__("hashlib").sha256(CANARY.encode()).hexdigest()[:8]
            assert fingerprint not in out and CANARY[:12] not in out
        finally:
            if admin is not None:
                admin.close()
                await admin.wait_closed()
            env.close()

    asyncio.run(main())


def test_the_runner_probes_again_when_its_pins_change_or_the_probe_ages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import server_host.harness_probe as module

    made: list[str] = []

    async def counted(home: Any, pin: Any, sandbox: Any) -> list[TemplateProbe]:
        made.append(pin.templates()[0].command[0])
        return []

    monkeypatch.setattr(module, "probe_pin", counted)
    probes = module.Probes(None, NoSandbox())  # type: ignore[arg-type]
    text = templates_toml("p_0123456789abcdef")
    pin = parse_pins(text).runner[0]

    async def main() -> None:
        await probes.of(pin)
        await probes.of(pin)  # unchanged: the probe made is kept
        assert len(made) == 1
        changed = parse_pins(text.replace(f'["{CLI}", "ok"', '["other-cli", "ok"')).runner[0]
        await probes.of(changed)  # changed: made again in the background, the last ones kept
        await asyncio.gather(*probes.pending.values())
        assert made[-1] == "other-cli" and probes.pending == {}
        key, _, kept = probes._made["build-1"]
        probes._made["build-1"] = (key, time.monotonic() - module.PROBE_AGAIN_S - 1, kept)
        await probes.of(changed)  # aged: made again
        await asyncio.gather(*probes.pending.values())
        assert len(made) == 3
        await probes.of(changed)  # fresh again: kept
        assert len(made) == 3 and probes.pending == {}

    asyncio.run(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
