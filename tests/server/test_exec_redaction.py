"""The second wall of fenced commands (issue 29 item 7): whatever a command prints, no secret the
server holds leaves in its output — host token, audit key, the bearers it issued or accepted —
in raw, prefix-less (any case), base64, URL-safe base64, hex, percent-encoded or JSON-escaped
form, nor when the value is split across two reads of the pipe; nor in the audit's argv."""

from __future__ import annotations

import base64
import json
import sqlite3

from tests.server.harness import Server

PRINTER = r"""
import base64, json, sys
token, bearer, key_hex = sys.argv[1:4]
key = bytes.fromhex(key_hex)
out = sys.stdout.buffer
for secret in (token.encode(), bearer.encode()):
    body = secret[4:]
    for form in (
        secret, body, body.lower(), body.upper(),
        base64.b64encode(secret), base64.urlsafe_b64encode(b"x" + body.lower()),
        base64.b64encode(b"yz" + body), secret.hex().encode(), body.hex().upper().encode(),
        "".join("%%%02X" % b for b in secret).encode(), json.dumps({"t": body.decode()}).encode(),
    ):
        out.write(b"<" + form + b">\n")
for form in (key, key.hex().encode(), base64.b64encode(key), base64.b64encode(b"q" + key)):
    out.write(b"<" + form + b">\n")
out.flush()
# 3000 copies back to back, one write: every read of the pipe (at most 64 KiB) that ends in
# this run ends inside a copy (47 of every 48 bytes are one), so copies are split across reads
out.write(b"".join(b":" + token.encode() for _ in range(3000)) + b"\n")
out.flush()
"""


def _disguises(secret: bytes) -> list[bytes]:
    """Every 12-byte window of the secret's body, of its lower-case copy and of its hex: none
    may be in the output (a window of the body is itself secret)."""
    body = secret[4:] if secret[:4] in (b"vbx_", b"vbh_") else secret
    windows = []
    for whole in (body, body.lower(), body.hex().encode()):
        windows += [whole[i : i + 12] for i in range(len(whole) - 11)]
    return windows


def test_no_secret_the_server_holds_leaves_in_a_commands_output(server: Server) -> None:
    server.policy("--exec", "on")
    bearer = server.pair()
    project = server.create_project(bearer)
    key = (server.host_dir / "audit-key").read_bytes()
    argv = ["python3", "-c", PRINTER, server.token, bearer, key.hex()]
    answer = server.fenced(bearer, "exec", {"project": project, "argv": argv})
    assert answer.status_code == 200, answer.text
    ran = answer.json()
    assert ran["exitStatus"] == 0
    output = base64.b64decode(ran["outputB64"])
    lines = output.split(b"\n")
    assert len(lines) == 2 * 11 + 4 + 2
    assert all(b"[redacted]" in line for line in lines[:-1]), output[:3000]
    assert lines[-2] == b":vbh_[redacted]" * 3000  # the prefix is not secret
    for secret in (server.token.encode(), bearer.encode(), key):
        for window in _disguises(secret):
            assert window not in output and window not in output.lower(), window
    echoed = [server.token, bearer[4:].lower(), key.hex()]
    answer = server.fenced(bearer, "exec", {"project": project, "argv": ["echo", *echoed]})
    assert base64.b64decode(answer.json()["outputB64"]) == b"vbh_[redacted] [redacted] [redacted]\n"
    with sqlite3.connect(server.host_dir / "audit.sqlite3") as db:
        rows = [json.loads(r[0]) for r in db.execute("SELECT record FROM records")]
    said = [r["details"]["argv"] for r in rows if r["op"] == "env.exec"]
    assert said[1] == "echo vbh_[redacted] [redacted] [redacted]"
    for secret in (server.token, bearer, key.hex()):
        assert secret[4:].lower() not in json.dumps(rows).lower()
