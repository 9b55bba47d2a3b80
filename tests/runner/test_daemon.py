"""``voicebox-env runner`` beside ``voicebox-env serve``, both real processes on 127.0.0.1:
a malformed pin file stops the runner at start; a live runner shows in the identity answer,
runs a mission spawned with a bearer to ``merge_wait``, and stops a hanging one a person
cancels (issue 30, the runner)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from core.missions.posting import packet_ref
from server_host.runner_desk import read_runner_secret
from server_host.worktrees import git
from tests.runner.kit import GATE, pins_toml
from tests.server.harness import ROOT, Server, cli


def _runner(root: Path) -> tuple[subprocess.Popen[str], list[str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "server_host", "runner", "--root", str(root)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    return process, lines


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _phases(folder: Path, mission_id: str) -> list[str]:
    phases = []
    for segment in sorted((folder / ".voicebox" / "mailbox").glob("*.jsonl")):
        for raw in segment.read_text().splitlines():
            line = json.loads(raw)
            if line.get("kind") == "mission" and line["mission"]["mission_id"] == mission_id:
                phases.append(line["mission"]["phase"])
    return phases


def _git_project(server: Server, root: Path, **pin: Any) -> tuple[str, str, Path]:
    """A git project with the gate script, pinned to ``build-1``: bearer, project, folder."""
    bearer = server.pair()
    project = server.create_project(bearer)
    folder = root / "projects" / project
    (folder / "check.py").write_text(GATE)
    (folder / "README.md").write_text("# demo\n")
    git(folder, "init", "--quiet")
    git(folder, "add", "-A")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@x.invalid", "commit", "-qm", "1")
    (root / "runners.toml").write_text(pins_toml(project, **pin))
    return bearer, project, folder


def _wait_live(server: Server, lines: list[str]) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        with server.http() as client:
            identity = client.get("/api/identity").json()
        if identity["runners"] and identity["runners"][0]["live"]:
            return identity
        assert time.monotonic() < deadline, "".join(lines)
        time.sleep(0.05)


def _opening(mission_id: str, packet: str) -> dict[str, Any]:
    now = "2026-01-01T00:00:00Z"
    return {
        "schema": "m1nd-mission-letter-v0",
        "mission_id": mission_id,
        "mission_seq": 1,
        "prev_letter_id": None,
        "block_id": "sb_demo",
        "brain_ref": "demo",
        "seat": "oracle",
        "capability": "build-runner",
        "phase": "judging",
        "packet_ref": packet_ref(packet),
        "started_at": now,
        "updated_at": now,
    }


def _until(folder: Path, mission_id: str, phase: str, lines: list[str], bound_s: float) -> float:
    """Seconds until ``phase`` is in the mission's chain on disk (bounded)."""
    started = time.monotonic()
    while phase not in _phases(folder, mission_id):
        assert time.monotonic() - started < bound_s, (_phases(folder, mission_id), "".join(lines))
        time.sleep(0.01)
    return time.monotonic() - started


def _spawn(server: Server, bearer: str | None, project: str, mission_id: str) -> Any:
    packet = f"# Mission {mission_id}\n"
    body = {"project": project, "packet": packet, "letter": _opening(mission_id, packet)}
    headers = {} if bearer is None else {"authorization": f"Bearer {bearer}"}
    with server.http() as client:
        return client.post(
            f"/api/environments/{server.env_key}/missions/spawn", json=body, headers=headers
        )


def test_a_malformed_pin_file_stops_the_runner_at_start_naming_the_line(tmp_path: Path) -> None:
    root = tmp_path / "env"
    assert cli(root, "init", "--name", "r").returncode == 0
    (root / "runners.toml").write_text('[[runner]]\nrunner_id = "b"\ncapability = "loop-runner"\n')
    done = cli(root, "runner")
    assert done.returncode != 0
    assert "runners.toml, line 3:" in done.stderr
    assert "build-runner or naming-runner" in done.stderr
    assert not (root / "worktrees").exists()


def test_a_live_runner_shows_in_identity_and_runs_a_spawned_mission_to_merge_wait(
    tmp_path: Path,
) -> None:
    root = tmp_path / "env"
    with Server(root) as server:
        bearer, project, folder = _git_project(server, root, mode="ok")
        runner, lines = _runner(root)
        try:
            identity = _wait_live(server, lines)
            (template,) = identity["runners"][0].pop("templates")
            assert identity["runners"] == [
                {
                    "runnerId": "build-1",
                    "capability": "build-runner",
                    "live": True,
                    "busy": 0,
                    "keys": [],
                }
            ]
            # its probe came with its first announce (issue 31): python3 in the sandbox
            assert template["label"] == "default" and template["executable"] == "python3"
            assert template["found"] is True and template["version"].startswith("Python 3.")
            mission_id = "msn_00000000fe01"
            assert _spawn(server, None, project, mission_id).status_code == 401
            spawned = _spawn(server, bearer, project, mission_id)
            assert spawned.status_code == 200, spawned.text
            _until(folder, mission_id, "merge_wait", lines, 40)
            assert _phases(folder, mission_id) == ["judging", "executing", "gate", "merge_wait"]
            status = cli(root, "runner", "status")
            assert status.returncode == 0, status.stderr
            (row,) = [json.loads(line) for line in status.stdout.splitlines()]
            assert row["mission_id"] == mission_id and row["branch"] == f"vbx/{mission_id}"
            assert row["project"] == project and row["bytes"] > 0
            everything = spawned.text + json.dumps(identity)
            assert read_runner_secret(root / "host").reveal() not in everything
            assert str(root) not in everything
        finally:
            _stop(runner)
        assert runner.returncode == 0
        secret = read_runner_secret(root / "host").reveal()
        assert secret not in "".join(lines) and secret not in server.text()


def test_cancel_over_http_stops_a_hanging_agent_and_posts_failed_within_5_s(
    tmp_path: Path,
) -> None:
    root = tmp_path / "env"
    with Server(root) as server:
        bearer, project, folder = _git_project(server, root, mode="hang")
        runner, lines = _runner(root)
        try:
            _wait_live(server, lines)
            mission_id = "msn_00000000fe02"
            assert _spawn(server, bearer, project, mission_id).status_code == 200
            to_executing = _until(folder, mission_id, "executing", lines, 10)
            with server.http() as client:
                cancelled = client.post(
                    f"/api/environments/{server.env_key}/missions/cancel",
                    json={"project": project, "missionId": mission_id},
                    headers={"authorization": f"Bearer {bearer}"},
                )
            assert cancelled.json() == {"missionId": mission_id, "cancelled": "running"}
            to_failed = _until(folder, mission_id, "failed", lines, 5)
            shown = f"spawn->executing {to_executing * 1e3:.0f} ms"
            print(f"{shown}; cancel->failed {to_failed * 1e3:.0f} ms")
            assert _phases(folder, mission_id) == ["judging", "executing", "failed"]
        finally:
            _stop(runner)
