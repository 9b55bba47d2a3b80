"""Remote environments from the browser (issue 15): ``python -m bench.remote_browser
[--calls N] [--export-mb M]`` (build ``dist/`` first; not part of any test run).

Starts a real ``voicebox-env serve`` on 127.0.0.1 holding one project of ``M`` MB (files of
random bytes written to its disk, as another program would), serves ``dist/`` on 127.0.0.1
with the server's origin in the worker CSP, opens the page in headless Chromium and measures
inside the page (``performance.now()``), in one run:

- **pairing**: ``env.add`` by URL + one-time code (the host worker's claim, identity, sealing
  the bearer, recording the environment);
- **round trip** of one ``projects.list`` ``tool.call`` page → host worker → loopback server →
  back, against the same call to an in-browser peer (an environment-server worker) and to the
  local environment: p50/p95 and the ratios;
- **export throughput** of the remote project as a ``.zip`` streamed over the channel into the
  page's Blob, against CPython's ``zipfile`` over the same files (the same machine, same run).

Prints one JSON report. The machine may be loaded by others: read the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.remote_export_bench import ROUND_TRIPS
from bench.stats import samples
from e2e.hostpage import HostPage
from tests.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.server.harness import Server, cli
from worker.sitebuild.serve import make_server

TIMED = """
async ([op, args]) => {
  const t0 = performance.now();
  const answer = await window.voicebox.host.call(op, args, { human: true });
  const ms = performance.now() - t0;
  return { ms, result: answer.result, size: answer.stream ? answer.stream.size : null };
}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _descriptor(host: HostPage, tool: str) -> str:
    local = host.ok("env.list")["result"]["environments"][0]["envKey"]
    tools = host.ok("tool.discover", {"envKey": local})["result"]["tools"]
    return next(t["descriptorId"] for t in tools if t["name"] == tool)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the report (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m bench.remote_browser")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--export-mb", type=int, default=200)
    parser.add_argument("--dist", type=Path, default=Path("dist"))
    args = parser.parse_args(argv)
    report: dict[str, object] = {"loadavg": os.getloadavg()[0]}
    port = _free_port()
    origin = f"http://127.0.0.1:{port}"
    site = make_server(args.dist, 0, peer_origins=(origin,))
    threading.Thread(target=site.serve_forever, daemon=True).start()
    site_url = f"http://127.0.0.1:{site.server_address[1]}/"
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(
            Path(tmp) / "env",
            name="bench-box",
            serve_args=("--port", str(port), "--allow-origin", site_url.rstrip("/")),
        )
        try:
            server.start()
            pid = server.create_project(server.pair(), "big")
            folder = server.root / "projects" / pid
            size = 4 << 20
            for i in range(max(1, (args.export_mb << 20) // size)):
                (folder / f"part-{i:03d}.bin").write_bytes(os.urandom(size))
            files = [p for p in folder.rglob("*") if p.is_file()]
            start = time.perf_counter()
            with zipfile.ZipFile(Path(tmp) / "ref.zip", "w", zipfile.ZIP_STORED) as ref:
                for p in files:
                    ref.write(p, p.relative_to(folder).as_posix())
            zip_s = time.perf_counter() - start
            total = sum(p.stat().st_size for p in files)
            code = next(
                line.split()[-1]
                for line in cli(server.root, "pair-code").stdout.splitlines()
                if line.startswith("pairing code")
            )
            with sync_playwright() as pw:
                browser = pw.chromium.launch(
                    executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
                )
                try:
                    host = HostPage(browser.new_context().new_page())
                    host.open(site_url)
                    page = host.page
                    added = page.evaluate(TIMED, ["env.add", {"url": origin, "code": code}])
                    remote = added["result"]["environment"]["envKey"]
                    report["pairing_ms"] = round(added["ms"], 1)
                    made = host.ok("env.create", {"name": "studio"}, human=True)
                    peer = made["result"]["environment"]["envKey"]
                    host.ok("env.pair", {"envKey": peer}, human=True)
                    local = host.ok("env.list")["result"]["environments"][0]["envKey"]
                    listing = _descriptor(host, "projects.list")
                    figures = {}
                    for label, key in (
                        ("remote", remote),
                        ("in_browser_peer", peer),
                        ("local", local),
                    ):
                        page.evaluate(ROUND_TRIPS, [key, listing, 3])  # warm: channel open
                        figures[label] = samples(
                            page.evaluate(ROUND_TRIPS, [key, listing, args.calls])
                        )
                    report["round_trip_ms"] = figures
                    report["round_trip_ratio_remote_vs_in_browser_peer_p50"] = round(
                        figures["remote"]["p50"] / figures["in_browser_peer"]["p50"], 2
                    )
                    exported = page.evaluate(
                        TIMED,
                        [
                            "tool.call",
                            {
                                "envKey": remote,
                                "tool": "project.export",
                                "descriptorId": _descriptor(host, "project.export"),
                                "args": {"project": pid},
                            },
                        ],
                    )
                    mb = total / (1 << 20)
                    report["export"] = {
                        "project_mb": round(mb, 1),
                        "zip_mb": round((exported["size"] or 0) / (1 << 20), 1),
                        "remote_to_page_mb_s": round(mb / (exported["ms"] / 1000), 1),
                        "cpython_zipfile_mb_s": round(mb / zip_s, 1),
                    }
                    report["export"]["ratio"] = round(  # type: ignore[index]
                        report["export"]["remote_to_page_mb_s"]  # type: ignore[index]
                        / report["export"]["cpython_zipfile_mb_s"],  # type: ignore[index]
                        2,
                    )
                finally:
                    browser.close()
        finally:
            server.stop()
            site.shutdown()
            site.server_close()
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
