"""A lying peer in the browser gets nothing past the host (issue 13, finding 6; SPEC §6).

The environment server here is the genuine one wrapped by ``e2e/liar_peer.mjs``, which the
test's static server sends as ``worker/peer.mjs``: it learns the real host token and bearer as
they pass and then lies with them — in every refusal's ``message``, ``field`` and details, in
a code outside the closed list, in a note in every result, and in a ``local-write`` receipt
rewritten to name THIS host's envKey and project for a write that never happened here, and
every secret it learnt disguised: without its prefix, lower-cased as a name, in base64 (issue
29 item 8). The
host's own code path (worker, Python, dispatcher, audit) is the real one. Nothing of the lies
may reach the page's messages or the local audit, and the receipt is refused; a receipt about
itself with impossible values (a path climbing out, a project that is no project id) is
``peer-answer-invalid``, and an honest one reaches the page marked ``peer:<envKey
fingerprint>``, never ``host`` (issue 29 item 13). The same laws, rule by rule:
``tests/peers/test_peer_lies.py``."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from core.custody.pair_code import env_fingerprint
from e2e.hostpage import SECRET_SHAPE, HostPage
from e2e.test_peers import _secrets, _tool
from worker.sitebuild.serve import _Handler, _Server

LIAR = Path(__file__).with_name("liar_peer.mjs")


@pytest.fixture
def liar_site(dist: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """``dist/`` on 127.0.0.1 (recommended headers) whose ``worker/peer.mjs`` is the liar;
    ``worker/peer.mjs?genuine`` is the real file. Yields ``(url, config)``: what the test puts
    in ``config`` before the environment starts is what the liar knows."""
    config: dict[str, str] = {}

    class LiarHandler(_Handler):
        def do_GET(self) -> None:
            if self.path.split("#")[0] != "/worker/peer.mjs":
                super().do_GET()
                return
            text = LIAR.read_text(encoding="utf-8").replace(
                "/*LIAR_CONFIG*/ {}", json.dumps(config)
            )
            data = text.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def handler(*args: Any, **kwargs: Any) -> LiarHandler:
        return LiarHandler(*args, directory=str(dist), **kwargs)

    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", config
    server.shutdown()
    server.server_close()


def test_a_lying_peer_gets_nothing_into_the_page_or_the_audit_and_its_receipt_is_refused(
    browser: Browser, liar_site: tuple[str, dict[str, str]]
) -> None:
    url, config = liar_site
    # no service worker: it would serve the genuine peer.mjs from its cache
    context = browser.new_context(service_workers="block")
    try:
        host = HostPage(context.new_page())
        host.open(url)
        local = host.ok("env.list")["result"]["environments"][0]["envKey"]
        mine = host.ok("project.create", {"name": "mine"})["result"]["project"]["id"]
        config.update(localEnvKey=local, localProject=mine)
        key = host.ok("env.create", {"name": "studio"}, human=True)["result"]["environment"][
            "envKey"
        ]
        host.ok("env.pair", {"envKey": key}, human=True)

        # a result: the note that carries the bearer arrives scrubbed
        made = _tool(host, key, "project.create", {"name": "theirs"})
        assert made["ok"], made
        assert made["result"]["result"]["note"] == "your bearer is [redacted]"
        disguised = made["result"]["result"]["disguised"]
        assert len(disguised) >= 2, "the liar knows the peer's host token and the bearer"
        assert all(d == {"body": "[redacted]", "[redacted]": ["[redacted]"] * 2} for d in disguised)
        theirs = made["result"]["result"]["project"]["id"]

        # a receipt naming this host's envKey and project: refused; nothing lands here
        data = base64.b64encode(b"forged?").decode()
        wrote = _tool(
            host, key, "file.write", {"project": theirs, "path": "a.txt", "content_b64": data}
        )
        assert not wrote["ok"], wrote
        assert (wrote["refusal"]["code"], wrote["refusal"]["field"]) == (
            "receipt-forgery-refused",
            "receipt",
        )
        assert host.ok("file.list", {"project": mine})["result"]["entries"] == []

        # a receipt about itself with impossible values: peer-answer-invalid (issue 29 item 13)
        odd = _tool(
            host,
            key,
            "file.write",
            {"project": theirs, "path": "impossible.txt", "content_b64": data},
        )
        assert odd["refusal"]["code"] == "peer-answer-invalid", odd
        # its honest receipt reaches the page as the peer's claim, never as this host's
        honest = _tool(
            host, key, "file.write", {"project": theirs, "path": "honest.txt", "content_b64": data}
        )
        assert honest["ok"], honest
        assert honest["result"]["receipt"]["issuer"] == f"peer:{env_fingerprint(key)}"

        # a refusal full of secrets: its code, our sentence, no field
        walked = _tool(host, key, "file.walk", {"project": "p_" + "0" * 16})
        refusal = walked["refusal"]
        assert refusal["code"] == "project-not-found"
        assert refusal["message"].startswith("The peer environment refused the call")
        assert refusal["field"] is None

        # a code outside the closed list: refused at once, naming nothing the peer said
        bad = _tool(
            host, key, "file.write", {"project": theirs, "path": "a\\b", "content_b64": data}
        )
        assert bad["refusal"]["code"] == "peer-answer-invalid"

        secrets = _secrets(host.page)
        assert len(secrets) >= 3, "the host's token, the peer's token and the bearer exist"
        records = host.ok("audit.list", {"limit": 1000})["result"]["records"]
        forged = [r for r in records if r["rule"] == "receipt-forgery-refused"]
        assert len(forged) == 1 and forged[0]["op"] == "tool.call"
        for what, text in (
            ("page messages", "\n".join(host.received())),
            ("local audit", json.dumps(records)),
        ):
            assert not SECRET_SHAPE.search(text), what
            for secret in secrets:
                assert not any(secret[i : i + 12] in text for i in range(len(secret) - 11)), what
                body = secret[4:].lower()  # prefix-less, any case, base64 (issue 29 item 8)
                assert not any(body[i : i + 12] in text.lower() for i in range(len(body) - 11))
                for said in (body, secret[4:]):
                    assert base64.b64encode(said.encode()).decode()[2:-4] not in text, what
        assert host.page_errors == [] and host.dialogs == []
    finally:
        context.close()
