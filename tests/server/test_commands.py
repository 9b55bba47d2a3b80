"""Fenced environment commands (seed 002 §4; issue 15): exec is off until the operator turns
it on, refused in SAFE mode, runs an argv in the project folder with a scrubbed environment,
stdin closed, killed with its process group at its time limit, output capped; every run is
audited; git/init and git/config use the real git."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sqlite3
import time
from pathlib import Path

from tests.server.harness import Server

SECRET = "vbx_" + "s" * 43


def _refusal(answer) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    return answer.status_code, answer.json()["refusal"]["code"]


def _ready(server: Server, *policy: str) -> tuple[str, str]:
    if policy:
        server.policy(*policy)
    bearer = server.pair()
    return bearer, server.create_project(bearer)


def _exec(server: Server, bearer: str, project: str, *argv: str, **extra: object) -> dict:
    answer = server.fenced(bearer, "exec", {"project": project, "argv": list(argv), **extra})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_exec_is_refused_until_the_operator_enables_it(server: Server) -> None:
    bearer, project = _ready(server)
    answer = server.fenced(bearer, "exec", {"project": project, "argv": ["true"]})
    assert _refusal(answer) == (403, "tool-disabled")
    server.policy("--exec", "on")
    assert _exec(server, bearer, project, "true")["exitStatus"] == 0


def test_exec_is_refused_in_safe_mode(server: Server) -> None:
    bearer, project = _ready(server, "--exec", "on")
    server.policy("--safe", "on")
    answer = server.fenced(bearer, "exec", {"project": project, "argv": ["true"]})
    assert _refusal(answer) == (403, "read-only-mode")
    bodies = {
        "git/init": {"project": project},
        "git/config": {"project": project, "key": "user.name", "value": "x"},
    }
    for command, body in bodies.items():
        assert _refusal(server.fenced(bearer, command, body)) == (403, "read-only-mode")


def test_exec_needs_a_paired_call_in_the_seed_order(server: Server) -> None:
    bearer, project = _ready(server, "--exec", "on")
    body = {"project": project, "argv": ["true"]}
    assert _refusal(server.fenced(None, "exec", body)) == (401, "unauthenticated-call")
    unknown = server.fenced(bearer, "exec", body, env_key="ek_" + "0" * 32)
    assert _refusal(unknown) == (404, "unknown-environment")
    assert _refusal(server.fenced("vbx_" + "g" * 43, "exec", body)) == (403, "bearer-refused")


def test_exec_runs_an_argv_in_the_project_with_a_scrubbed_environment(tmp_path: Path) -> None:
    env = {"VOICEBOX_TEST_SECRET": SECRET, "AWS_SECRET_ACCESS_KEY": "leak-me"}
    with Server(tmp_path / "env", env=env) as server:
        bearer, project = _ready(server, "--exec", "on")
        ran = _exec(server, bearer, project, "sh", "-c", 'pwd; env; read x && echo "stdin:$x"')
        output = base64.b64decode(ran["outputB64"]).decode()
        lines = output.splitlines()
        assert Path(lines[0]).resolve() == (server.root / "projects" / project).resolve()
        names = {line.split("=", 1)[0] for line in lines[1:] if "=" in line}
        assert names <= {"PATH", "HOME", "LANG", "LC_ALL", "TZ", "PWD", "SHLVL", "_", "OLDPWD"}
        assert "leak-me" not in output and SECRET not in output
        assert "stdin:" not in output  # stdin is closed: read fails
        shell = server.fenced(bearer, "exec", {"project": project, "argv": ["true; touch pwned"]})
        assert _refusal(shell) == (422, "args-invalid")  # a shell string is not a program
        assert not (server.root / "projects" / project / "pwned").exists()


def _running(marker: str) -> list[int]:
    """Pids of this machine's processes whose argv holds ``marker`` (read from /proc: the
    sandbox's own pid numbers mean nothing out here)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if marker.encode() in argv:
                found.append(int(entry.name))
    return found


def test_exec_is_killed_with_its_process_group_at_the_time_limit(server: Server) -> None:
    bearer, project = _ready(server, "--exec", "on", "--exec-time-limit-ms", "800")
    started = time.monotonic()
    marker = f"{60 + secrets.randbelow(10**6) / 10**7:.7f}"  # sleep's argument, unique here
    ran = _exec(server, bearer, project, "sh", "-c", f"sleep {marker} & sleep {marker}")
    assert ran["timedOut"] is True
    assert time.monotonic() - started < 30
    deadline = time.monotonic() + 5
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _running(marker) == [], "the command's child outlived its time limit"


def test_exec_output_is_capped_and_hashed_whole(server: Server) -> None:
    bearer, project = _ready(server, "--exec", "on", "--exec-output-cap-bytes", "4096")
    ran = _exec(server, bearer, project, "head", "-c", "300000", "/dev/zero")
    assert ran["truncated"] is True and ran["outputBytes"] == 300000
    assert base64.b64decode(ran["outputB64"]) == b"\0" * 4096
    assert ran["outputSha256"] == hashlib.sha256(b"\0" * 300000).hexdigest()


def test_every_run_is_audited_without_the_environment(tmp_path: Path) -> None:
    with Server(tmp_path / "env", env={"VOICEBOX_TEST_SECRET": SECRET}) as server:
        bearer, project = _ready(server, "--exec", "on")
        ran = _exec(server, bearer, project, "echo", "hello")
        with sqlite3.connect(server.host_dir / "audit.sqlite3") as db:
            rows = [json.loads(r[0]) for r in db.execute("SELECT record FROM records")]
        record = next(r for r in rows if r["op"] == "env.exec")
        assert record["seq"] == ran["logged"]
        assert record["details"]["argv"] == "echo hello"
        assert record["details"]["exitStatus"] == 0
        assert record["details"]["outputSha256"] == hashlib.sha256(b"hello\n").hexdigest()
        text = json.dumps(rows)
        assert SECRET not in text and "VOICEBOX_TEST_SECRET" not in text


def test_git_init_and_config_use_the_real_git(server: Server) -> None:
    bearer, project = _ready(server)
    folder = server.root / "projects" / project
    assert server.fenced(bearer, "git/init", {"project": project}).json()["exitStatus"] == 0
    assert (folder / ".git" / "HEAD").is_file()
    body = {"project": project, "key": "user.email", "value": "a@example.org"}
    assert server.fenced(bearer, "git/config", body).json()["exitStatus"] == 0
    assert "a@example.org" in (folder / ".git" / "config").read_text()
    hook = {"project": project, "key": "core.fsmonitor", "value": "touch /tmp/x"}
    assert _refusal(server.fenced(bearer, "git/config", hook)) == (422, "args-invalid")
    server.policy("--git", "off")
    assert _refusal(server.fenced(bearer, "git/init", {"project": project})) == (
        403,
        "tool-disabled",
    )
