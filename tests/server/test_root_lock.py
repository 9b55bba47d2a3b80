"""One server per environment root (issue 29 item 10): two ``voicebox-env serve`` on one root
both ran, and ``voicebox-env revoke`` then reached only one of them. Now the first holds the
root's lock for its life; the second refuses to start, naming the first's pid, without a
traceback; revoke reaches the one that serves; the lock dies with its process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from server_host.root_lock import RootBusy, lock_root
from tests.server.harness import ROOT, Server, cli, close_of, hello


def _second_serve(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "server_host", "serve", "--root", str(root), "--port", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_second_server_on_one_root_refuses_to_start_naming_the_first(server: Server) -> None:
    first_pid = server._process.pid if server._process else 0
    second = _second_serve(server.root)  # bounded: it must end by itself
    assert second.returncode == 1
    assert f"pid {first_pid}" in second.stderr and "already serves" in second.stderr
    assert "Traceback" not in second.stderr + second.stdout
    assert " on http" not in second.stdout  # it never listened
    # the one server still owns its admin socket: the operator's revoke reaches it
    bearer = server.pair()
    with server.channel() as ws:
        ws.send(hello(bearer))
        done = cli(server.root, "revoke", "--env-key", server.env_key)
        assert done.returncode == 0, done.stderr
        assert '"channelsClosed": 1' in done.stdout
        assert close_of(ws, timeout=10) == (1008, "pairing-revoked")


def test_the_lock_dies_with_its_server_however_it_ends(tmp_path: Path) -> None:
    server = Server(tmp_path / "env").start()
    try:
        assert server._process is not None
        os.kill(server._process.pid, signal.SIGKILL)  # no clean-up runs
        server._process.wait(15)
    finally:
        server.stop()
    again = Server(tmp_path / "env", init=False).start()  # the kernel dropped the lock
    try:
        assert again.pair().startswith("vbx_")
    finally:
        again.stop()


def test_a_serve_waits_for_an_on_disk_act_to_release_the_root(tmp_path: Path) -> None:
    server = Server(tmp_path / "env")
    held = lock_root(server.host_dir, "revoke")  # as `voicebox-env revoke` does with no server
    releaser = threading.Timer(3.0, held.release)  # the serve is at its lock by then
    releaser.start()
    try:
        server.start()  # waits for the act (bounded by WAIT_S) instead of refusing
        assert server.pair().startswith("vbx_")
        assert (
            f"{server._process.pid if server._process else 0} serve"
            in (server.host_dir / "serve.lock").read_text()
        )
    finally:
        releaser.join(5)
        server.stop()


def test_an_on_disk_act_holds_the_lock_a_serve_never_lets_go(tmp_path: Path) -> None:
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    held = lock_root(host_dir, "serve")
    try:
        try:
            lock_root(host_dir, "revoke", wait_s=0.2)
        except RootBusy as busy:
            assert (busy.pid, busy.role) == (os.getpid(), "serve")
        else:
            raise AssertionError("a second holder got the lock")
    finally:
        held.release()
    lock_root(host_dir, "revoke").release()  # free again once released


def test_an_operator_act_against_a_server_that_does_not_answer_says_so_in_a_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that holds the root but never answers its admin socket (stopped with SIGSTOP,
    hung): ``revoke``/``pair-code`` waited 30 s and then printed ``voicebox-env: `` and nothing
    else (asyncio's TimeoutError is an OSError with no strerror). The ask gives up after
    ``ANSWER_S`` and the act refuses with the sentence that names the server's pid."""
    import asyncio
    import socket

    from server_host import admin
    from server_host import cli as voicebox_cli
    from server_host.home import Home

    root = tmp_path / "env"
    assert cli(root, "init", "--name", "quiet").returncode == 0
    home = Home(root)
    held = lock_root(home.host_dir, "serve")  # the hung server's lock, held in this process
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(home.admin_socket))
    listener.listen(1)  # accepts the connection and never answers
    monkeypatch.setattr(admin, "ANSWER_S", 0.2)
    monkeypatch.setattr(voicebox_cli, "WAIT_S", 0.2)
    try:
        with pytest.raises(SystemExit) as ended:
            asyncio.run(voicebox_cli._admin_or_disk(home, {"op": "pair-code"}))
    finally:
        listener.close()
        held.release()
    said = str(ended.value)
    assert f"pid {os.getpid()}" in said and "did not answer" in said, said
