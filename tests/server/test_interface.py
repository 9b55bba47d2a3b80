"""The server's interface as a client meets it (docs/remote.md): CORS only for the origins
the operator named, the WebSocket Origin checked against them, an export streamed over the
channel as binary chunks whose bytes are the files on disk, the CLI's help, the wheel's
console script — and the browser side never importing the server."""

from __future__ import annotations

import ast
import hashlib
import io
import json
import tomllib
import zipfile
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus

from server_host.channel import chunk_message, parse_chunk_message
from tests.server.harness import ROOT, Server, answer_of, cli, close_of, execute_frame, hello

ALLOWED = "http://127.0.0.1:8000"
OTHER = "https://evil.example"


def test_cors_answers_only_the_named_origins(tmp_path: Path) -> None:
    with (
        Server(tmp_path / "env", serve_args=("--allow-origin", ALLOWED)) as server,
        server.http() as client,
    ):
        for origin, allowed in ((ALLOWED, True), (OTHER, False)):
            preflight = client.options(
                "/api/execute",
                headers={
                    "origin": origin,
                    "access-control-request-method": "POST",
                    "access-control-request-headers": "authorization,content-type",
                },
            )
            got = preflight.headers.get("access-control-allow-origin")
            assert (got == origin) is allowed, origin
            plain = client.get("/api/identity", headers={"origin": origin})
            assert (plain.headers.get("access-control-allow-origin") == origin) is allowed


def test_no_cors_at_all_without_allow_origin(server: Server) -> None:
    with server.http() as client:
        answer = client.get("/api/identity", headers={"origin": ALLOWED})
    assert "access-control-allow-origin" not in answer.headers


def test_the_websocket_origin_is_checked(tmp_path: Path) -> None:
    with Server(tmp_path / "env", serve_args=("--allow-origin", ALLOWED)) as server:
        bearer = server.pair()
        with pytest.raises(InvalidStatus) as refused:
            server.channel(origin=OTHER).close()
        assert refused.value.response.status_code == 403
        with server.channel(origin=ALLOWED) as ws:
            ws.send(hello(bearer))
            ws.send(execute_frame("p", server.env_key, "projects.list", {}))
            assert answer_of(ws, "p")[0]["type"] == "result"
        with server.channel() as ws:  # no Origin: not a browser; the hello decides
            ws.send(hello("vbx_" + "n" * 43))
            assert close_of(ws) == (1008, "bearer-refused")


def test_an_export_streams_the_files_on_disk(server: Server) -> None:
    bearer = server.pair()
    project = server.create_project(bearer)
    folder = server.root / "projects" / project
    files = {
        "README.md": b"# hello\n",
        "src/app.py": b"print('hi')\n" * 1000,
        "assets/blob.bin": bytes(range(256)) * 4096,
    }
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    with server.channel(max_queue=None) as ws:
        ws.send(hello(bearer))
        ws.send(execute_frame("e", server.env_key, "project.export", {"project": project}))
        answer, data = answer_of(ws, "e", timeout=60)
    assert answer["type"] == "result"
    archive = zipfile.ZipFile(io.BytesIO(data))
    for name, content in files.items():
        assert hashlib.sha256(archive.read(name)).hexdigest() == hashlib.sha256(content).hexdigest()


def test_the_chunk_framing_round_trips() -> None:
    message = chunk_message("x12", b"\x00\x01payload")
    assert message[0] == 3 and message[1:4] == b"x12"
    assert parse_chunk_message(message) == ("x12", b"\x00\x01payload")
    assert parse_chunk_message(b"") is None
    assert parse_chunk_message(bytes([10]) + b"abc") is None


def test_every_command_says_what_it_does() -> None:
    for command in ("init", "serve", "pair-code", "revoke", "policy"):
        done = cli(Path("/nonexistent"), command, "--help")
        assert done.returncode == 0 and len(done.stdout) > 80, command
    for args in (["audit", "verify", "--help"], ["--help"]):
        import subprocess
        import sys

        done = subprocess.run(
            [sys.executable, "-m", "server_host", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0 and "audit" in done.stdout, args


def test_the_wheel_declares_the_console_script_and_the_server_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["voicebox-env"] == "server_host.cli:main"
    pinned = {line.split("==")[0] for line in project["optional-dependencies"]["server"]}
    assert {"starlette", "uvicorn"} <= pinned
    assert all("==" in line for line in project["optional-dependencies"]["server"])


def test_core_and_browser_host_never_import_the_server() -> None:
    for package in ("core", "browser_host"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                for name in names:
                    assert not name.startswith(("server_host", "starlette", "uvicorn")), path
    worker = json.loads((ROOT / "worker" / "wheels.lock.json").read_text())
    assert "starlette" not in json.dumps(worker).lower()


def test_tls_serves_https_and_wss_with_the_given_certificate(tmp_path: Path) -> None:
    import ssl
    import subprocess

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    args = ("--certfile", str(cert), "--keyfile", str(key))
    with Server(tmp_path / "env", serve_args=args) as server:
        assert server.url.startswith("https://127.0.0.1:")
        import httpx

        context = ssl.create_default_context(cafile=str(cert))
        with httpx.Client(base_url=server.url, verify=context, timeout=30) as client:
            assert client.get("/api/identity").json()["envKey"] == server.env_key
            token = {"x-voicebox-host-token": server.token}
            bearer = client.post("/api/pair", json={"envKey": server.env_key}, headers=token)
        with server.channel(ssl=context) as ws:
            ws.send(hello(bearer.json()["bearer"]))
            ws.send(execute_frame("p", server.env_key, "projects.list", {}))
            assert answer_of(ws, "p")[0]["type"] == "result"
