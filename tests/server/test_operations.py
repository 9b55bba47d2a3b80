"""What an operator meets (issue 29 items 11, 15d–f): a damaged ``policy.json`` is SAFE mode,
said in the log and the audit and by ``voicebox-env policy``; ``GET /api/health`` for proxies
and monitors; bad option values are one sentence, never a traceback; ``GET /api/identity`` of
an environment the operator removed is ``unknown-environment``."""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from pathlib import Path

import pytest

from core.custody.environment import Environments
from server_host.commands import CommandPolicy
from tests.server.harness import Server, cli

DAMAGED = b'{"read_only": false, "disabled_tools": ['
DEADLINE_S = 10
POLICY_DAMAGE_RULE = "policy-unreadable"  # core.policy.POLICY_DAMAGE_RULE


def _rules(server: Server) -> list[dict]:
    with sqlite3.connect(server.host_dir / "audit.sqlite3") as db:
        return [json.loads(r[0]) for r in db.execute("SELECT record FROM records ORDER BY seq")]


def test_a_damaged_policy_makes_the_server_safe_and_says_why_in_log_and_audit(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path / "env")
    (server.host_dir / "policy.json").write_bytes(DAMAGED)
    with server:
        bearer = server.pair()
        answer = server.execute(bearer, "project.create", {"name": "new"})
        assert answer.status_code == 403
        assert answer.json()["refusal"]["code"] == "read-only-mode"
        deadline = time.monotonic() + DEADLINE_S
        while "SAFE mode" not in server.text() and time.monotonic() < deadline:
            time.sleep(0.05)
        said = [line for line in server.text().splitlines() if "policy.json" in line]
        assert len(said) == 1, server.text()  # once, not once per request
        assert "SAFE mode" in said[0] and "WARNING" in said[0]
    records = [r for r in _rules(server) if r["rule"] == POLICY_DAMAGE_RULE]
    assert len(records) == 1
    assert records[0]["op"] == "policy.load" and "SAFE mode" in records[0]["details"]["reason"]


def test_policy_command_reads_a_damaged_policy_as_safe_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "env"
    assert cli(root, "init", "--name", "x").returncode == 0
    (root / "host" / "policy.json").write_bytes(DAMAGED)
    shown = cli(root, "policy")
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    assert "policy.json is not valid JSON" in shown.stderr and "SAFE mode" in shown.stderr
    assert json.loads(shown.stdout)["safe"] is True
    repaired = cli(root, "policy", "--safe", "off")  # the way out the sentence names
    assert repaired.returncode == 0 and json.loads(repaired.stdout)["safe"] is False
    assert cli(root, "policy").stderr == ""


def test_health_answers_without_auth_and_without_secrets(server: Server) -> None:
    with server.http() as client:
        answer = client.get("/api/health")
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "ok" and isinstance(body["protocol"], int)
    assert set(body) == {"status", "protocol", "version"}  # no key, no count, no name
    text = answer.text
    assert server.token not in text and server.env_key not in text


def test_identity_of_a_removed_environment_is_unknown_environment(server: Server) -> None:
    key = server.env_key
    with server.http() as client:
        assert client.get("/api/identity").json()["envKey"] == key
        path = server.host_dir / "environments.json"
        envs = Environments.model_validate_json(path.read_bytes())
        path.write_bytes(envs.removed(key).to_json())
        answer = client.get("/api/identity")
    assert answer.status_code == 404
    assert answer.json()["refusal"]["code"] == "unknown-environment"
    assert key not in answer.text


def _bounds(field: str) -> tuple[int, int]:
    info = CommandPolicy.model_fields[field]
    ge = next(m.ge for m in info.metadata if getattr(m, "ge", None) is not None)
    le = next(m.le for m in info.metadata if getattr(m, "le", None) is not None)
    return ge, le


@pytest.mark.parametrize(
    ("option", "field"),
    [("--exec-output-cap-bytes", "output_cap_bytes"), ("--exec-time-limit-ms", "time_limit_ms")],
)
def test_an_out_of_bounds_policy_value_is_a_sentence_naming_its_bounds(
    tmp_path: Path, option: str, field: str
) -> None:
    root = tmp_path / "env"
    assert cli(root, "init", "--name", "x").returncode == 0
    low, high = _bounds(field)
    for value in (str(low - 1), str(high + 1), "-1", "lots"):
        done = cli(root, "policy", option, value)
        assert done.returncode != 0, value
        assert "Traceback" not in done.stderr, done.stderr
        assert option in done.stderr and f"{low:,}" in done.stderr and f"{high:,}" in done.stderr
    assert cli(root, "policy", option, str(low)).returncode == 0  # the bounds themselves hold
    assert json.loads(cli(root, "policy").stdout)["commands"][field] == low


def test_bad_option_values_of_every_command_are_a_sentence_not_a_traceback(
    tmp_path: Path,
) -> None:
    root = tmp_path / "env"
    assert cli(root, "init", "--name", "x").returncode == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = str(taken.getsockname()[1])
        cases = [
            ("serve", "--port", "70000"),
            ("serve", "--port", "-1"),
            ("serve", "--port", busy),
            ("serve", "--host", "999.1.1.1"),
            ("serve", "--allow-origin", "not an origin"),
            ("serve", "--allow-origin", "https://box.example/path"),
            ("serve", "--certfile", str(tmp_path / "none.pem"), "--keyfile", str(tmp_path / "k")),
            ("serve", "--log-level", "trace"),
            ("init", "--name", "again"),
        ]
        for args in cases:
            done = cli(root, *args)
            assert done.returncode != 0, args
            assert "Traceback" not in done.stderr, (args, done.stderr)
            assert done.stderr.startswith("voicebox-env") or "usage:" in done.stderr, args
    unwritable = cli(Path("/proc/voicebox-no-such-root"), "init", "--name", "x")
    assert unwritable.returncode != 0 and "Traceback" not in unwritable.stderr
    (root / "host" / "audit.sqlite3").write_bytes(b"not a database, and longer than a header")
    damaged = cli(root, "audit", "verify")
    assert damaged.returncode != 0 and "Traceback" not in damaged.stderr, damaged.stderr
    assert "audit database" in damaged.stderr
