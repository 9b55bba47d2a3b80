"""Pairing by a one-time code over the network (issue 15): minted by the operator's
``voicebox-env pair-code``, claimed on ``POST /api/pair/claim`` for a bearer; single use,
burnt by failed claims, rate limited; the fingerprint the same on both sides."""

from __future__ import annotations

from pathlib import Path

from core.custody.pair_code import MAX_CLAIMS_PER_WINDOW, MAX_FAILURES
from tests.server.harness import Server, cli


def _mint(server: Server) -> dict[str, str]:
    done = cli(server.root, "pair-code")
    assert done.returncode == 0, done.stderr
    fields = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition("  ")
        fields[key.strip()] = value.strip().split("  ")[0]
    return fields


def _claim(server: Server, code: str):  # type: ignore[no-untyped-def]
    with server.http() as client:
        return client.post("/api/pair/claim", json={"code": code})


def _other(code: str) -> str:
    last = "0" if code[-1] != "0" else "1"
    return code[:-1] + last


def test_a_claimed_code_gives_a_working_bearer_once(server: Server) -> None:
    minted = _mint(server)
    answer = _claim(server, minted["pairing code"])
    assert answer.status_code == 200, answer.text
    claimed = answer.json()
    assert claimed["envKey"] == server.env_key
    assert claimed["fingerprint"] == minted["fingerprint"]
    with server.http() as client:
        assert client.get("/api/identity").json()["fingerprint"] == minted["fingerprint"]
    assert server.execute(claimed["bearer"], "projects.list", {}).status_code == 200
    again = _claim(server, minted["pairing code"])
    assert (again.status_code, again.json()["refusal"]["code"]) == (403, "pairing-code-refused")


def test_repeated_failed_claims_burn_the_code(server: Server) -> None:
    code = _mint(server)["pairing code"]
    for _ in range(MAX_FAILURES):
        assert _claim(server, _other(code)).json()["refusal"]["code"] == "pairing-code-refused"
    assert _claim(server, code).json()["refusal"]["code"] == "pairing-code-refused"


def test_claims_are_rate_limited(server: Server) -> None:
    codes = [_mint(server)["pairing code"] for _ in range(MAX_CLAIMS_PER_WINDOW + 1)]
    for code in codes[:MAX_CLAIMS_PER_WINDOW]:
        assert _claim(server, code).status_code == 200
    limited = _claim(server, codes[-1])
    assert (limited.status_code, limited.json()["refusal"]["code"]) == (429, "rate-limited")


def test_a_code_minted_while_no_server_runs_claims_later(tmp_path: Path) -> None:
    server = Server(tmp_path / "env")
    code = _mint(server)["pairing code"]
    with server:
        assert _claim(server, code).status_code == 200


def test_the_host_token_routes_refuse_without_the_token(server: Server) -> None:
    with server.http() as client:
        for method, path, body in [
            ("POST", "/api/pair", {"envKey": server.env_key}),
            ("POST", "/api/pair/complete", {"envKey": server.env_key, "bearer": "x"}),
            ("DELETE", "/api/pair", {"envKey": server.env_key}),
            ("POST", "/api/pair/code", {}),
            ("POST", "/api/pair", {"envKey": "ek_" + "0" * 32}),  # the token before the key
        ]:
            for headers in ({}, {"x-voicebox-host-token": "vbh_" + "w" * 43}):
                answer = client.request(method, path, json=body, headers=headers)
                assert (answer.status_code, answer.json()["refusal"]["code"]) == (
                    403,
                    "host-token-required",
                ), (method, path)
        minted = client.post("/api/pair/code", headers={"x-voicebox-host-token": server.token})
        assert minted.status_code == 200
        assert client.post("/api/pair/claim", json={"code": minted.json()["code"]}).is_success
