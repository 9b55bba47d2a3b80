"""The second wall of fenced commands through the real page and a real ``voicebox-env`` (issue
29 item 7): whatever a command prints — here a file of the project that holds the server's host
token and audit key, raw, without the prefix, lower-cased, in base64, hex and percent-encoding,
and 3000 copies back to back, so that reads of the pipe end inside them — the page shows each
one as ``[redacted]`` and receives no part of them."""

from __future__ import annotations

import base64
from pathlib import Path

from playwright.sync_api import Browser

from e2e.hostpage import HostPage
from e2e.test_remote import UI_S, Rig, _add_remote, cli, rig

__all__ = ["rig"]  # the fixture, used by name


def _leaky_file(token: str, key: bytes) -> bytes:
    body = token[4:].encode()
    forms = [
        token.encode(),
        body.lower(),
        base64.b64encode(token.encode()),
        base64.urlsafe_b64encode(b"x" + body.lower()),
        token.encode().hex().encode(),
        "".join(f"%{b:02X}" for b in token.encode()).encode(),
        key.hex().encode(),
        base64.b64encode(key),
    ]
    copies = b"".join(b":" + token.encode() for _ in range(3000))
    return b"\n".join(b"<" + form + b">" for form in forms) + b"\n" + copies + b"\n"


def test_a_fenced_command_shows_no_secret_of_the_server_in_the_page(
    browser: Browser, rig: Rig
) -> None:
    server = rig.server
    bearer = server.pair()
    pid = server.create_project(bearer, "leaky")
    token = server.token
    key = (server.host_dir / "audit-key").read_bytes()
    folder: Path = server.root / "projects" / pid
    (folder / "leak.txt").write_bytes(_leaky_file(token, key))
    done = cli(server.root, "policy", "--exec", "on")
    assert done.returncode == 0, done.stderr
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        host = HostPage(context.new_page())
        host.open(rig.site_url)
        page = host.page
        _add_remote(host, rig)
        page.click("button.env-open:text-is('build-box')")
        page.wait_for_selector(f"#peer-projects tr[data-project='{pid}']", timeout=UI_S)
        page.click(f"tr[data-project='{pid}'] button:text-is('Command…')")
        page.fill("#command-argv", "cat\nleak.txt")
        page.click("#run-command")
        page.wait_for_selector("#command-output", timeout=UI_S)
        shown = page.text_content("#command-output") or ""
        lines = shown.split("\n")
        assert lines[:8] == [
            "<vbh_[redacted]>",  # the prefix is not secret: it stays, in every form
            "<[redacted]>",
            "<dmJoX[redacted]>",  # "vbh_" in base64, to the last character only its own
            "<e[redacted]>",  # "x"'s own base64 character
            "<7662685f[redacted]>",
            "<%76%62%68%5F[redacted]>",
            "<[redacted]>",
            "<[redacted]>",
        ], lines[:8]
        assert lines[8] == ":vbh_[redacted]" * 3000
        received = "\n".join(host.received()).lower()
        body = token[4:].lower()
        for whole in (body, body.encode().hex(), key.hex()):
            assert not any(whole[i : i + 12] in received for i in range(len(whole) - 11))
        assert base64.b64encode(key).decode()[2:-4].lower() not in received
    finally:
        context.close()
