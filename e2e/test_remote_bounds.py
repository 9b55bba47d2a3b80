"""A remote cannot freeze the host, and a request the site's own policy kept is said so (issue
29 items 6 and 15), through the real page from a site served on 127.0.0.1.

Three lying "servers" of our own on loopback (started and stopped by the tests; their bytes are
generated, never stored) answer every request: one with a 500 MB body (no ``content-length``:
the host must stop reading it), one trickling a byte every 50 ms forever, one that sends its
headers and the start of a body and then never sends more nor closes. While the page adds each
as a remote (``env.add``: the host reads ``GET /api/identity`` first), the page measures
``host.info`` again and again on a settled host: nine answers in ten come within 100 ms and
none takes 1 s (the stall found was 4–8 s; one slow answer on a loaded 2-core runner is the
machine, not a read), and the add ends with the right refusal — ``message-too-large`` for the flood, ``environment-unreachable`` saying the
deadline passed for the other two — instead of a stall and "could not be reached".

Then a site served *without* the remote's origin in its worker CSP: adding it is refused
``network-egress-refused`` with the sentence naming ``--peer-origin <origin>`` — the request
never left the browser.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from e2e.hostpage import HostPage
from tests.server.liars import CHANNEL_FLOOD, LiarServer
from worker.sitebuild.serve import make_server

DEADLINE_MS = 3_000  # the host's peer_deadline_ms for these tests (the policy's field)
INFO_BOUND_MS = 100  # nine host.info answers in ten while a remote misbehaves
STALL_MS = 1_000  # no answer at all this slow: the stall these tests exist for was 4-8 s


def assert_responsive(info: list[float], what: object) -> None:
    """The host kept answering while a remote misbehaved: p90 of the ``host.info`` round trips
    (ms) under ``INFO_BOUND_MS`` and none over ``STALL_MS``. A single bound on the max failed on
    a loaded CI runner once (132 ms among 46 answers under 22) without any read behind it."""
    ordered = sorted(info)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    shown = " ".join(str(round(x)) for x in info)
    assert p90 < INFO_BOUND_MS, (what, "p90", round(p90), shown)
    assert ordered[-1] < STALL_MS, (what, "max", round(ordered[-1]), shown)


@pytest.fixture
def liars() -> Iterator[dict[str, LiarServer]]:
    made = {mode: LiarServer(mode) for mode in ("flood", "trickle", "silent")}
    try:
        yield made
    finally:
        for server in made.values():
            server.stop()


class Site:
    """The built site served from 127.0.0.1 (loopback reaches loopback), its worker CSP naming
    ``peer_origins``."""

    def __init__(self, dist: Path, peer_origins: tuple[str, ...]) -> None:
        self.server = make_server(dist, 0, peer_origins=peer_origins)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


WHILE_ADDING = """
async ([url, rounds]) => {
  const host = window.voicebox.host;
  let settled = null;
  const started = performance.now();
  const adding = host.call("env.add", { url, code: "ABCDE-FGHJK" }, { human: true }).then(
    (answer) => { settled = { ok: true, result: answer.result }; },
    (err) => { settled = { ok: false, code: err.code, message: err.message }; },
  );
  const info = [];
  // host.info, one after another, for as long as the add is under way (and at least `rounds`)
  while (settled === null || info.length < rounds) {
    const t0 = performance.now();
    await host.call("host.info");
    info.push(performance.now() - t0);
    if (performance.now() - started > 120000) break;
  }
  await adding;
  return { settled, info, tookMs: performance.now() - started };
}
"""


def _add_while_measuring(host: HostPage, url: str) -> dict[str, Any]:
    return host.page.evaluate(WHILE_ADDING, [url, 5])


def test_a_remote_cannot_freeze_the_host_its_answer_is_bounded_and_ended_by_its_deadline(
    browser: Browser, dist: Path, liars: dict[str, LiarServer]
) -> None:
    site = Site(dist, tuple(s.origin for s in liars.values()))
    context = browser.new_context()
    try:
        host = HostPage(context.new_page())
        worker_log: list[str] = []
        host.page.on("worker", lambda w: w.on("console", lambda m: worker_log.append(m.text)))
        host.open(site.url)
        host.ok("policy.set", {"changes": {"peer_deadline_ms": DEADLINE_MS}}, human=True)
        host.wait_settled()  # the late imports done: what is measured is the remote's effect

        flood = _add_while_measuring(host, liars["flood"].origin)
        assert flood["settled"]["ok"] is False, (flood["settled"], "\n".join(worker_log[-40:]))
        assert flood["settled"]["code"] == "message-too-large", (
            flood["settled"],
            "\n".join(worker_log[-40:]),
        )
        assert liars["flood"].origin in flood["settled"]["message"]
        assert "stopped reading" in flood["settled"]["message"]
        # the host stopped reading near the bound: far from the 500 MB offered
        assert liars["flood"].sent < 64 * 1024 * 1024, liars["flood"].sent
        assert flood["tookMs"] < DEADLINE_MS, flood
        assert_responsive(flood["info"], "flood")
        print(
            f"flood: refused after {flood['tookMs']:.0f} ms, {liars['flood'].sent} bytes sent, "
            f"host.info x{len(flood['info'])} max {max(flood['info']):.1f} ms"
        )

        for mode in ("trickle", "silent"):
            got = _add_while_measuring(host, liars[mode].origin)
            assert got["settled"]["ok"] is False, (mode, got["settled"])
            assert got["settled"]["code"] == "environment-unreachable", (mode, got["settled"])
            assert f"within {DEADLINE_MS} ms" in got["settled"]["message"], (mode, got["settled"])
            assert DEADLINE_MS * 0.9 <= got["tookMs"] < DEADLINE_MS + 5_000, (mode, got)
            assert len(got["info"]) >= 10, (mode, got["info"])
            assert_responsive(got["info"], mode)
            print(
                f"{mode}: refused after {got['tookMs']:.0f} ms, host.info x{len(got['info'])} "
                f"max {max(got['info']):.1f} ms"
            )
            assert liars[mode].dropped.wait(10), f"the host kept the {mode} answer open"
        # each answer's connection was closed by the host when it gave up (the stream cancelled)
        assert liars["flood"].dropped.wait(10), "the host kept reading the flood"
        assert liars["trickle"].sent > 0

        envs = host.ok("env.list")["result"]["environments"]
        assert [e for e in envs if e.get("remote")] == [], "nothing was added"
        host.assert_clean()
    finally:
        context.close()
        site.stop()


def test_a_remote_the_sites_csp_does_not_list_is_refused_saying_how_to_serve_the_site(
    browser: Browser, dist: Path, liars: dict[str, LiarServer]
) -> None:
    site = Site(dist, ())  # the worker's connect-src: this site only
    context = browser.new_context()
    try:
        host = HostPage(context.new_page())
        host.open(site.url)
        origin = liars["silent"].origin
        refused = host.call("env.add", {"url": origin, "code": "ABCDE-FGHJK"}, human=True)
        assert refused["ok"] is False
        assert refused["refusal"]["code"] == "network-egress-refused", refused
        message = refused["refusal"]["message"]
        assert f"--peer-origin {origin}" in message, message
        assert "never left the browser" in message and "connect-src" in message
        assert liars["silent"].requests == [], "the request left the browser"
        # the page shows that sentence when the person adds it by the form
        host.page.click("nav >> text=Environments")
        host.page.wait_for_selector("#remote-form", timeout=60_000)
        host.page.fill("#remote-url", origin)
        host.page.fill("#remote-code", "ABCDE-FGHJK")
        host.page.click("#add-remote")
        host.page.wait_for_selector(".alert-error .refusal-code", timeout=60_000)
        assert host.page.text_content(".alert-error .refusal-code") == "network-egress-refused"
        assert f"--peer-origin {origin}" in (host.page.text_content(".alert-error") or "")
    finally:
        context.close()
        site.stop()


WHILE_CALLING = """
async ([envKey, rounds]) => {
  const host = window.voicebox.host;
  let settled = null;
  const started = performance.now();
  const args = { envKey, tool: "projects.list", descriptorId: "d_" + "0".repeat(24), args: {} };
  const calling = host.call("tool.call", args).then(
    (answer) => { settled = { ok: true, result: answer.result }; },
    (err) => { settled = { ok: false, code: err.code, message: err.message }; },
  );
  const info = [];
  while (settled === null || info.length < rounds) {
    const t0 = performance.now();
    await host.call("host.info");
    info.push(performance.now() - t0);
    if (performance.now() - started > 120000) break;
  }
  await calling;
  return { settled, info, tookMs: performance.now() - started };
}
"""


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_a_remote_channel_message_past_its_bound_closes_the_channel_unread(
    browser: Browser, dist: Path, binary: bool
) -> None:
    liar = LiarServer("channel-flood")
    liar.binary = binary
    site = Site(dist, (liar.origin,))
    context = browser.new_context()
    try:
        host = HostPage(context.new_page())
        host.open(site.url)
        host.wait_settled()
        added = host.ok("env.add", {"url": liar.origin, "code": "ABCDE-FGHJK"}, human=True)
        key = added["result"]["environment"]["envKey"]
        got = host.page.evaluate(WHILE_CALLING, [key, 5])
        assert got["settled"]["ok"] is False, got["settled"]
        assert got["settled"]["code"] == "message-too-large", got["settled"]
        assert_responsive(got["info"], "channel")
        print(
            f"channel {'binary' if binary else 'text'} message of {CHANNEL_FLOOD} bytes: refused "
            f"after {got['tookMs']:.0f} ms, host.info x{len(got['info'])} "
            f"max {max(got['info']):.1f} ms"
        )
        assert liar.dropped.wait(10), "the host kept the channel open"
        envs = host.ok("env.list")["result"]["environments"]
        assert [e["remote"]["state"] for e in envs if e.get("remote")] == ["unreachable"]
        # nothing reconnects to a remote that sent a message past its bound
        assert len([r for r in liar.requests if r.startswith("GET /channel")]) == 1
    finally:
        context.close()
        site.stop()
        liar.stop()
