"""A fenced command cannot read the server's secrets into the page (issue 29 item 7, the first
wall): through the real page and a real ``voicebox-env serve`` with exec on,
``cat ../../host/.host-token`` (and the same file by its absolute path, and the audit key) is
answered "No such file or directory" — the command runs in the server's process sandbox, where
the root holds nothing but the project — so the host token appears nowhere in what the page
shows or received, and the custody scan of every page message finds no secret.

The rig (site + server, both stopped by the fixture) is :mod:`e2e.test_remote`'s."""

from __future__ import annotations

from playwright.sync_api import Browser

from e2e.hostpage import HostPage
from e2e.test_remote import UI_S, Rig, _add_remote, rig  # noqa: F401  (the fixture)
from tests.server.harness import cli


def test_a_fenced_command_cannot_show_the_host_token_or_audit_key_in_the_page(
    browser: Browser,
    rig: Rig,  # noqa: F811
) -> None:
    server = rig.server
    pid = server.create_project(server.pair(), "sandboxed")
    done = cli(server.root, "policy", "--exec", "on")
    assert done.returncode == 0, done.stderr
    token = server.token
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        host = HostPage(context.new_page())
        host.open(rig.site_url)
        page = host.page
        _add_remote(host, rig)
        page.click("button.env-open:text-is('build-box')")
        page.wait_for_selector(f"#peer-projects tr[data-project='{pid}']", timeout=UI_S)
        page.click(f"tr[data-project='{pid}'] button:text-is('Command…')")
        shown: list[str] = []
        for argv in (
            "cat\n../../host/.host-token",
            f"cat\n{server.root}/host/.host-token",
            f"cat\n{server.root}/host/audit-key",
            "sh\n-c\nls -A ../..; echo listed",
        ):
            page.fill("#command-argv", argv)
            page.evaluate("() => document.querySelector('#command-output')?.remove()")
            page.click("#run-command")
            page.wait_for_selector("#command-output", timeout=UI_S)
            shown.append(page.text_content("#command-output") or "")
        for output in shown[:3]:
            assert "No such file or directory" in output, output
        assert shown[3].split() == ["exec-home", "projects", "listed"]  # no host/ in the root
        body = page.text_content("body") or ""
        assert token not in body and token not in "\n".join(host.received())
        assert host.assert_custody() > 5
        host.assert_clean()
    finally:
        context.close()
