"""Fenced commands run in a process sandbox (issue 29 item 7, the first wall): with exec on,
``cat ../../host/.host-token`` put the server's host token into the page. Now a command sees
its project read-write and the system read-only, and nothing of HOST_DIR, the other projects
or the root's files, wherever the root lives; a private ``/tmp`` and ``HOME``; no network;
every process it starts dies at its limit. Where no sandbox can run, commands are refused
``sandbox-unavailable`` unless the operator opted out (audited ``sandbox: none``).

The first tests go through a real ``voicebox-env serve``; the last ones ask
:mod:`server_host.sandbox` directly (the API a runner will reuse)."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import sqlite3
import time
from pathlib import Path

import pytest

from core.custody.remote import refusal_from_answer
from server_host.sandbox import Bubblewrap, Fence, NoSandbox, Unavailable, detect, spawn
from tests.server.harness import ROOT, Server
from tests.server.test_commands import _exec, _ready, _refusal, _running

SECRET = "vbx_" + "q" * 43


def _out(ran: dict) -> str:
    return base64.b64decode(ran["outputB64"]).decode("utf-8", "replace")


def _sh(server: Server, bearer: str, project: str, script: str) -> dict:
    return _exec(server, bearer, project, "sh", "-c", script)


def _audit(server: Server) -> list[dict]:
    with sqlite3.connect(server.host_dir / "audit.sqlite3") as db:
        return [json.loads(r[0]) for r in db.execute("SELECT record FROM records ORDER BY seq")]


def test_a_fenced_command_sees_nothing_of_host_dir_other_projects_or_the_root(
    tmp_path: Path,
) -> None:
    with Server(tmp_path / "env", env={"VOICEBOX_TEST_SECRET": SECRET}) as server:
        bearer, project = _ready(server, "--exec", "on")
        other = server.create_project(bearer, "other")
        (server.root / "projects" / other / "private.txt").write_text("other-project-secret")
        token, root = server.token, server.root
        audit_key = (server.host_dir / "audit-key").read_bytes()
        for argv in (
            ("cat", "../../host/.host-token"),
            ("cat", f"{root}/host/.host-token"),
            ("cat", f"{root}/host/audit-key"),
            ("cat", f"{root}/host/environments.json"),
            ("cat", f"../{other}/private.txt"),
            ("cat", f"{root}/projects/{other}/private.txt"),
        ):
            ran = _exec(server, bearer, project, *argv)
            output = base64.b64decode(ran["outputB64"])
            assert ran["exitStatus"] != 0, argv
            assert b"No such file or directory" in output, (argv, output)
            assert token.encode() not in output and audit_key not in output
            assert b"other-project-secret" not in output
        # the root holds only the mount points of what the command was given back
        listed = _sh(server, bearer, project, f"ls -A {root}; ls -A {root}/projects")
        assert _out(listed).split() == ["exec-home", "projects", project]
        # no process of the server (nor its environment) is visible from inside
        seen = _sh(server, bearer, project, "cat /proc/[0-9]*/environ; ls /proc")
        assert SECRET not in _out(seen) and "VOICEBOX_TEST_SECRET" not in _out(seen)
        assert token not in server.text()


def test_a_fenced_command_reads_and_writes_its_project_and_keeps_nothing_elsewhere(
    server: Server,
) -> None:
    bearer, project = _ready(server, "--exec", "on")
    folder = server.root / "projects" / project
    (folder / "in.txt").write_text("given")
    outside = ROOT / f".sandbox-probe-{secrets.token_hex(4)}"  # the machine, outside the root
    try:
        ran = _sh(
            server,
            bearer,
            project,
            'cat in.txt; echo made > out.txt; echo t > /tmp/t; echo h > "$HOME/h"; '
            f"touch {outside} 2>&1 || true",
        )
        assert not outside.exists()
    finally:
        outside.unlink(missing_ok=True)
    assert _out(ran).startswith("given")
    assert "Read-only file system" in _out(ran)
    assert (folder / "out.txt").read_text() == "made\n"
    kept = 'test -e /tmp/t && echo tmp-kept; test -e "$HOME/h" && echo home-kept; ls -A "$HOME"'
    assert _out(_sh(server, bearer, project, kept)) == ""
    assert not (server.root / "exec-home" / "h").exists()  # HOME was private to that run


def test_a_fenced_command_has_no_network(server: Server) -> None:
    bearer, project = _ready(server, "--exec", "on")
    port = int(server.url.rsplit(":", 1)[1])
    probe = (
        "import socket\n"
        f"for host in ('127.0.0.1', '1.1.1.1'):\n"
        "    try:\n"
        f"        socket.create_connection((host, {port}), timeout=3).close()\n"
        "        print('connected', host)\n"
        "    except OSError as e:\n"
        "        print('refused', host, e.errno)\n"
    )
    ran = _exec(server, bearer, project, "python3", "-c", probe)
    assert "connected" not in _out(ran), _out(ran)
    assert _out(ran).count("refused") == 2


def test_a_command_that_leaves_its_session_still_dies_at_the_time_limit(server: Server) -> None:
    bearer, project = _ready(server, "--exec", "on", "--exec-time-limit-ms", "800")
    marker = f"{70 + secrets.randbelow(10**6) / 10**7:.7f}"
    script = f"setsid sleep {marker} & setsid -f sleep {marker}; sleep {marker}"
    assert _sh(server, bearer, project, script)["timedOut"] is True
    deadline = time.monotonic() + 5
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _running(marker) == [], "a process in a session of its own outlived the limit"


def test_without_a_sandbox_commands_are_refused_unless_the_operator_opts_out(
    tmp_path: Path,
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    with Server(tmp_path / "env", env={"PATH": str(fake)}) as server:
        bearer, project = _ready(server, "--exec", "on")
        assert "no process sandbox" in server.text()
        for command, body in (
            ("exec", {"project": project, "argv": ["true"]}),
            ("git/init", {"project": project}),
            ("git/config", {"project": project, "key": "user.name", "value": "x"}),
        ):
            answer = server.fenced(bearer, command, body)
            assert _refusal(answer) == (503, "sandbox-unavailable")
            message = answer.json()["refusal"]["message"]
            assert "No permissions to create new namespace" in message
            assert "--exec-unsandboxed" in message
            relayed = refusal_from_answer(answer.status_code, answer.text)  # the browser host's
            assert relayed is not None and "bubblewrap" in relayed.body().message
        assert not (server.root / "projects" / project / ".git").exists()
        refused = [r for r in _audit(server) if r["op"] == "env.exec"]
        assert [r["rule"] for r in refused] == ["sandbox-unavailable"]
    opted = Server(
        tmp_path / "env",
        env={"PATH": str(tmp_path / "none")},
        init=False,
        serve_args=("--exec-unsandboxed",),
    )
    with opted as server:
        assert "WARNING --exec-unsandboxed" in server.text()
        bearer = server.pair()
        ran = _exec(server, bearer, project, "echo", "ran")
        assert (ran["exitStatus"], _out(ran)) == (0, "ran\n")
        record = [r for r in _audit(server) if r["op"] == "env.exec"][-1]
        assert (record["rule"], record["details"]["sandbox"]) == ("command-ran", "none")


# ---- the module's own API ----------------------------------------------------------------


def _run(sandbox: Bubblewrap, fence: Fence, cwd: Path, *argv: str) -> tuple[int, str]:
    async def go() -> tuple[int, str]:
        process = await spawn(argv, sandbox=sandbox, fence=fence, cwd=cwd, env={"PATH": "/bin"})
        assert process.stdout is not None
        out = await asyncio.wait_for(process.stdout.read(), 30)
        return await asyncio.wait_for(process.wait(), 30), out.decode()

    return asyncio.run(go())


@pytest.mark.parametrize("private_tmp", [True, False], ids=["private-tmp", "shared-tmp-view"])
def test_the_sandbox_hides_the_root_wherever_it_lives(tmp_path: Path, private_tmp: bool) -> None:
    sandbox = detect()
    assert isinstance(sandbox, Bubblewrap), sandbox  # this machine has bubblewrap (PLATFORM.md)
    root = tmp_path / "deep" / "env"
    work = root / "projects" / "p"
    work.mkdir(parents=True)
    (root / "host").mkdir()
    (root / "host" / ".host-token").write_text("vbh_root-token")
    (tmp_path / "beside.txt").write_text("beside")
    # without a private /tmp, only the fence's hiding of the root stands between them
    fence = Fence(writable=(work,), hidden=(root,), scratch=(Path("/tmp"),) if private_tmp else ())
    status, out = _run(
        sandbox, fence, work, "sh", "-c", f"cat {root}/host/.host-token; ls -A {root}; echo ok > f"
    )
    assert "vbh_root-token" not in out and "No such file" in out
    assert out.split()[-1] == "projects"
    assert (work / "f").read_text() == "ok\n"
    status, out = _run(sandbox, fence, work, "cat", str(tmp_path / "beside.txt"))
    assert (status == 0) == (not private_tmp)  # outside the root: hidden only by the private /tmp
    # a hidden file (the server's TLS key, wherever it is) cannot be read
    key = tmp_path / "key.pem"
    key.write_text("PRIVATE KEY")
    fenced = Fence(writable=(work,), hidden=(root, key), scratch=())
    status, out = _run(sandbox, fenced, work, "cat", str(key))
    assert status != 0 and "PRIVATE KEY" not in out


def test_detect_says_why_no_sandbox_runs_and_honours_the_opt_out(tmp_path: Path) -> None:
    missing = detect(path=str(tmp_path))
    assert isinstance(missing, Unavailable) and "not installed" in missing.reason
    refusal = missing.refusal().body()
    assert (refusal.code, refusal.status) == ("sandbox-unavailable", 503)
    assert isinstance(detect(opt_out=True, path=str(tmp_path)), NoSandbox)
    fence = Fence(writable=(tmp_path,))
    assert NoSandbox().command(["true"], fence, tmp_path) == ["true"]
