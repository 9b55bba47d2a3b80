"""``serve --local-env DIR``: one command to try missions that run (issue 30, "One command to
try it"; :mod:`server_host.local_env`), run as a person runs it, on free loopback ports."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from server_host.local_env import DEMO_RUNNER, GATE

REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 60.0


def _get(url: str) -> tuple[dict[str, str], bytes]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return dict(answer.headers.items()), answer.read()


def _descendants(pid: int) -> set[int]:
    """Every live process under ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(
    read: Callable[[], str], pattern: str, proc: subprocess.Popen[bytes]
) -> re.Match[str]:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        found = re.search(pattern, read())
        if found:
            return found
        assert proc.poll() is None, read()
        time.sleep(0.05)
    raise AssertionError(f"no {pattern!r} within {DEADLINE_S} s:\n{read()}")


def _start(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Callable[[], str]]:
    """``serve --local-env`` on free ports over a small site: the process and its output."""
    site = tmp_path / "dist"
    (site / "worker").mkdir(parents=True)
    (site / "index.html").write_text("<!doctype html><title>site</title>", encoding="utf-8")
    (site / "worker" / "host.mjs").write_text("export {};\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    argv = [sys.executable, "-m", "worker.sitebuild.serve", "--dir", str(site), "--port", "0"]
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [*argv, "--local-env", str(tmp_path / "env"), "--env-port", "0"],
            cwd=REPO,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def read() -> str:
        return out.read_text(encoding="utf-8", errors="replace")

    return proc, read


def _cleanup(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    for pid in _descendants(os.getpid()):
        if pid != proc.pid and _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_local_env_serves_the_site_a_server_and_a_live_demo_runner_and_stops_every_child(
    tmp_path: Path,
) -> None:
    proc, read = _start(tmp_path)
    env_dir = tmp_path / "env"
    try:
        _wait_for(read, r"Ctrl\+C stops everything", proc)
        text = read()
        site_url = re.search(r"Site +(http://127\.0\.0\.1:\d+)/", text).group(1)
        env_url = re.search(r"Environment +(http://127\.0\.0\.1:\d+)", text).group(1)
        assert re.search(r"pairing code +[0-9A-Z]{5}-[0-9A-Z]{5}", text), text
        # the site answers, and its worker's CSP names the server (the --peer-origin mechanism)
        _, page = _get(site_url + "/")
        assert b"<title>site</title>" in page
        headers, _ = _get(site_url + "/worker/host.mjs")
        ws = env_url.replace("http:", "ws:")
        assert f"connect-src 'self' {env_url} {ws};" in headers["Content-Security-Policy"]
        assert (
            _get(env_url + "/api/health")[1]
            and json.loads(_get(env_url + "/api/health")[1])["status"] == "ok"
        )
        # the server allows the site's origin (CORS) and the demo runner announces itself live
        with urllib.request.urlopen(
            urllib.request.Request(env_url + "/api/health", headers={"Origin": site_url}),
            timeout=10,
        ) as answer:
            assert answer.headers["access-control-allow-origin"] == site_url
        deadline = time.monotonic() + DEADLINE_S
        runners: list[dict[str, object]] = []
        while time.monotonic() < deadline:
            runners = json.loads(_get(env_url + "/api/identity")[1])["runners"]
            if runners and runners[0]["live"]:
                break
            time.sleep(0.1)
        (template,) = runners[0].pop("templates")  # its probe (issue 31): the demo's python3
        assert template["executable"] == "python3" and template["found"] is True
        assert runners == [
            {
                "runnerId": DEMO_RUNNER,
                "capability": "build-runner",
                "live": True,
                "busy": 0,
                "keys": [],  # the demo agent needs no provider key
            }
        ]
        # the demo project is a git repository with a commit, pinned in runners.toml
        project = re.search(r"the demo project (p_[0-9a-f]{16})", text).group(1)
        assert f'projects = ["{project}"]' in (env_dir / "runners.toml").read_text()
        folder = env_dir / "projects" / project
        tracked = subprocess.run(
            ["git", "-C", str(folder), "ls-files"], capture_output=True, text=True, timeout=30
        )
        assert {"README.md", "check.py", "demo_agent.py"} <= set(tracked.stdout.split()), tracked
        children = _descendants(proc.pid)
        assert len(children) >= 2, children  # the server and the runner
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, read()
        survivors = {pid for pid in children if _alive(pid)}
        assert not survivors, (survivors, read())
        assert "Stopped the site, the environment server and its runner." in read()
    finally:
        _cleanup(proc)


def test_local_env_stops_the_others_and_says_so_when_one_child_ends(tmp_path: Path) -> None:
    proc, read = _start(tmp_path)
    try:
        _wait_for(read, r"Ctrl\+C stops everything", proc)
        children = _descendants(proc.pid)
        argvs = {p: Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0") for p in children}
        runner = [p for p, argv in argvs.items() if argv[2:4] == [b"server_host", b"runner"]]
        assert len(runner) == 1, (children, read())
        os.kill(runner[0], signal.SIGKILL)
        assert proc.wait(timeout=30) == 1, read()
        assert "The runner process ended (status -9); stopping the others." in read()
        survivors = {pid for pid in children if _alive(pid)}
        assert not survivors, (survivors, read())
    finally:
        _cleanup(proc)


def test_the_demo_agent_makes_a_real_change_that_its_gate_passes(tmp_path: Path) -> None:
    """The shipped demo agent (server_host/demo_agent.py) writes ``MISSION.md`` and touches
    ``README.md``; the demo project's gate (``check.py``) passes after it and fails before."""
    (tmp_path / "README.md").write_text("# demo\n", encoding="utf-8")
    (tmp_path / "check.py").write_text(GATE, encoding="utf-8")
    packet = tmp_path / ".vbx-packet.md"
    packet.write_text("# Mission msn_0123456789ab\n\nSay hello.\n", encoding="utf-8")
    gate = [sys.executable, "check.py"]
    assert subprocess.run(gate, cwd=tmp_path, capture_output=True, timeout=30).returncode == 1
    agent = REPO / "server_host" / "demo_agent.py"
    run = subprocess.run(
        [sys.executable, str(agent), str(packet)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 0, run.stderr
    assert "demo agent: mission msn_0123456789ab" in run.stdout
    assert (tmp_path / "MISSION.md").read_text().startswith("# msn_0123456789ab\n")
    assert "msn_0123456789ab" in (tmp_path / "README.md").read_text()
    assert subprocess.run(gate, cwd=tmp_path, capture_output=True, timeout=30).returncode == 0


def test_local_env_killed_outright_leaves_no_server_or_runner_behind(tmp_path: Path) -> None:
    """SIGKILL gives the command no chance to stop anything (nox kills it 0.5 s after Ctrl+C
    unless told to wait): the kernel ends its children (``PR_SET_PDEATHSIG``)."""
    proc, read = _start(tmp_path)
    children: set[int] = set()
    try:
        _wait_for(read, r"Ctrl\+C stops everything", proc)
        children = _descendants(proc.pid)
        assert len(children) >= 2, (children, read())
        proc.kill()
        proc.wait(10)
        deadline = time.monotonic() + 20
        while {pid for pid in children if _alive(pid)} and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not {pid for pid in children if _alive(pid)}, read()
    finally:
        _cleanup(proc)
        for pid in children:  # orphans, were the kernel not to end them
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
