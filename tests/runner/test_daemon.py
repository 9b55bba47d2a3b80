"""``voicebox-env runner`` beside ``voicebox-env serve``, both real processes on 127.0.0.1:
a malformed pin file stops the runner at start; a live runner shows in the identity answer
and runs a mission spawned with a bearer to ``merge_wait`` (issue 30, the runner)."""

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
        bearer = server.pair()
        project = server.create_project(bearer)
        folder = root / "projects" / project
        (folder / "check.py").write_text(GATE)
        (folder / "README.md").write_text("# demo\n")
        git(folder, "init", "--quiet")
        git(folder, "add", "-A")
        git(folder, "-c", "user.name=t", "-c", "user.email=t@x.invalid", "commit", "-qm", "1")
        (root / "runners.toml").write_text(pins_toml(project, mode="ok"))
        runner, lines = _runner(root)
        try:
            deadline = time.monotonic() + 30
            while True:
                with server.http() as client:
                    identity = client.get("/api/identity").json()
                if identity["runners"] and identity["runners"][0]["live"]:
                    break
                assert time.monotonic() < deadline, "".join(lines)
                time.sleep(0.1)
            assert identity["runners"] == [
                {"runnerId": "build-1", "capability": "build-runner", "live": True, "busy": 0}
            ]
            mission_id = "msn_00000000fe01"
            packet = f"# Mission {mission_id}\n"
            now = "2026-01-01T00:00:00Z"
            letter: dict[str, Any] = {
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
            with server.http() as client:
                spawned = client.post(
                    f"/api/environments/{server.env_key}/missions/spawn",
                    json={"project": project, "packet": packet, "letter": letter},
                    headers={"authorization": f"Bearer {bearer}"},
                )
                unauthenticated = client.post(
                    f"/api/environments/{server.env_key}/missions/spawn",
                    json={"project": project, "packet": packet, "letter": letter},
                )
            assert spawned.status_code == 200, spawned.text
            assert unauthenticated.status_code == 401
            deadline = time.monotonic() + 40
            while "merge_wait" not in _phases(folder, mission_id):
                assert "failed" not in _phases(folder, mission_id), "".join(lines)
                assert time.monotonic() < deadline, "".join(lines)
                time.sleep(0.1)
            assert _phases(folder, mission_id) == ["judging", "executing", "gate", "merge_wait"]
            everything = spawned.text + json.dumps(identity)
            assert read_runner_secret(root / "host").reveal() not in everything
            assert str(root) not in everything
        finally:
            _stop(runner)
        assert runner.returncode == 0
        secret = read_runner_secret(root / "host").reveal()
        assert secret not in "".join(lines) and secret not in server.text()
