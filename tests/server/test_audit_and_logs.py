"""The server's audit (SPEC §5): SQLite, the browser's chain, MACs and anchor — it verifies,
and an edited or truncated database fails ``voicebox-env audit verify`` naming the finding.
And its log (seed 002 §2): across a whole journey no token, bearer or pairing code in it."""

from __future__ import annotations

import base64
import json
import re
import sqlite3
from pathlib import Path

from core.secret import SECRET_SHAPE
from tests.server.harness import Server, answer_of, cli, execute_frame, hello


def _journey(server: Server) -> dict[str, str]:
    """Pair, claim a code, call over HTTP and WS, run a command, revoke: every secret met."""
    bearer = server.pair()
    project = server.create_project(bearer)
    args = {"project": project, "path": "a.txt", "content_b64": base64.b64encode(b"hi").decode()}
    assert server.execute(bearer, "file.write", args).status_code == 200
    minted = cli(server.root, "pair-code").stdout
    code = re.search(r"pairing code\s+(\S+)", minted).group(1)  # type: ignore[union-attr]
    with server.http() as client:
        claimed = client.post("/api/pair/claim", json={"code": code}).json()["bearer"]
        client.post("/api/pair/claim", json={"code": code})  # refused: used
    with server.channel() as ws:
        ws.send(hello(claimed))
        ws.send(execute_frame("w", server.env_key, "file.walk", {"project": project}))
        answer_of(ws, "w")
    server.policy("--exec", "on")
    server.fenced(bearer, "exec", {"project": project, "argv": ["echo", bearer]})
    server.execute("vbx_" + "q" * 43, "projects.list", {})
    server.revoke()
    return {"host token": server.token, "bearer": bearer, "claimed": claimed, "code": code}


def _verify(root: Path) -> tuple[int, dict]:
    done = cli(root, "audit", "verify")
    return done.returncode, json.loads(done.stdout)


def test_the_audit_verifies_after_a_journey(server: Server) -> None:
    _journey(server)
    server.stop()
    code, result = _verify(server.root)
    assert (code, result["ok"]) == (0, True)
    with sqlite3.connect(server.host_dir / "audit.sqlite3") as db:
        rules = [json.loads(r[0])["rule"] for r in db.execute("SELECT record FROM records")]
    assert result["checked"] == len(rules)
    assert {"pairing-issued", "pairing-revoked", "command-ran", "bearer-refused"} <= set(rules)
    assert "pairing-code-refused" in rules


def test_an_edited_record_fails_verify_as_edited(server: Server) -> None:
    _journey(server)
    server.stop()
    with sqlite3.connect(server.host_dir / "audit.sqlite3") as db:
        seq, text = db.execute("SELECT seq, record FROM records WHERE seq = 3").fetchone()
        record = json.loads(text)
        record["actor"] = "someone else"
        db.execute("UPDATE records SET record = ? WHERE seq = ?", (json.dumps(record), seq))
    code, result = _verify(server.root)
    assert (code, result["ok"], result["finding"], result["broken_seq"]) == (1, False, "edited", 3)


def test_a_truncated_audit_fails_verify_as_truncated(server: Server) -> None:
    _journey(server)
    server.stop()
    with sqlite3.connect(server.host_dir / "audit.sqlite3") as db:
        (top,) = db.execute("SELECT MAX(seq) FROM records").fetchone()
        db.execute("DELETE FROM records WHERE seq > ?", (top - 2,))
    code, result = _verify(server.root)
    assert (code, result["finding"], result["broken_seq"]) == (1, "truncated", top - 1)


def test_no_token_bearer_or_code_reaches_the_log(server: Server) -> None:
    secrets = _journey(server)
    server.stop()
    log = server.text() + server.init_output
    for what, value in secrets.items():
        assert value not in log, what
    assert SECRET_SHAPE.search(log) is None
    assert "access" in log and "/api/pair/claim" in log  # the log was captured


def _windows(secret: str) -> list[str]:
    """Every 12-character window of ``secret``'s body, lower-cased: none may be logged."""
    body = secret[4:].lower()
    return [body[i : i + 12] for i in range(len(body) - 11)]


def test_a_percent_encoded_bearer_in_a_query_string_never_reaches_the_log(server: Server) -> None:
    bearer = server.pair()
    body = bearer[4:]
    asked = [
        "vbx%5F" + body,  # the prefix's "_" encoded
        "".join(f"%{b:02X}" for b in bearer.encode()),  # every byte encoded
        "".join(f"%25{b:02x}" for b in bearer.encode()),  # encoded twice, lower-case hex
        body.lower(),  # the body of a bearer this server issued, no prefix
        "%" + body.encode().hex(),  # hex of it, behind a lone percent sign
    ]
    with server.http() as client:
        for query in asked:
            assert client.get(f"/api/identity?t={query}&n=1").status_code == 200
        assert client.get(f"/api/nowhere?t={asked[1]}").status_code == 404
    server.stop()
    log = server.text().lower()
    assert log.count("/api/identity?t=[redacted]&n=1") == len(asked) - 1
    assert log.count("/api/identity?t=%[redacted]&n=1") == 1  # the hex was the secret
    for window in _windows(bearer):
        assert window not in log and window.encode().hex() not in log
    assert "%76%62%78%5f" not in log


def test_an_env_key_is_recorded_only_when_it_has_an_env_keys_shape(server: Server) -> None:
    bearer = server.pair()
    unknown = "ek_" + "0" * 32
    for env_key in (bearer[4:], bearer[4:].upper(), unknown, "x" * 41):
        answer = server.execute(bearer, "projects.list", {}, env_key=env_key)
        assert answer.json()["refusal"]["code"] == "unknown-environment"
    server.stop()
    with sqlite3.connect(server.host_dir / "audit.sqlite3") as db:
        rows = [json.loads(r[0]) for r in db.execute("SELECT record FROM records")]
    said = [r["details"]["envKey"] for r in rows if r["rule"] == "unknown-environment"]
    assert said == ["<43 chars, not an envKey>"] * 2 + [unknown, "<41 chars, not an envKey>"]
    text = json.dumps(rows).lower()
    assert not any(window in text for window in _windows(bearer))
