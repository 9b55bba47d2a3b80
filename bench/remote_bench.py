"""The environment server's figures over loopback (issue 15): ``python -m bench.remote_bench
[--calls N] [--export-mb M]``.

Starts a real ``voicebox-env serve`` on 127.0.0.1 (the tests' harness) and prints one JSON
report: the round trip of one ``projects.list`` call over HTTP (keep-alive) and over an open
WebSocket channel, against the floor of an unauthenticated ``GET /api/identity``; the pairing
time (one ``POST /api/pair/claim``, then opening a channel and its first answered call); and
an export's throughput over the channel against CPython's ``zipfile`` over the same files.
No browser: the in-browser side of these figures belongs to ``python -m bench`` (phase B).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from bench.stats import samples
from tests.server.harness import Server, answer_of, cli, execute_frame, hello


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    """Measure and print the report (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m bench.remote_bench")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--export-mb", type=int, default=64)
    args = parser.parse_args(argv)
    report: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp, Server(Path(tmp) / "env") as server:
        minted = cli(server.root, "pair-code").stdout
        code = re.search(r"pairing code\s+(\S+)", minted).group(1)  # type: ignore[union-attr]
        with server.http() as client:
            client.get("/api/identity")  # a warm connection, as a host worker keeps one
            start = time.perf_counter()
            claimed = client.post("/api/pair/claim", json={"code": code}).json()
            claim_ms = _ms(start)
            bearer = claimed["bearer"]
            start = time.perf_counter()
            with server.channel() as ws:
                ws.send(hello(bearer))
                ws.send(execute_frame("first", server.env_key, "projects.list", {}))
                answer_of(ws, "first")
                first_ms = _ms(start)
            report["pairing_ms"] = {
                "claim": round(claim_ms, 1),
                "channel_open_to_first_answer": round(first_ms, 1),
            }
            headers = {"authorization": f"Bearer {bearer}"}
            floor, http = [], []
            for _ in range(args.calls):
                start = time.perf_counter()
                client.get("/api/identity")
                floor.append(_ms(start))
            body = json.loads(execute_frame("x", server.env_key, "projects.list", {}))
            envelope = {k: body[k] for k in ("envKey", "tool", "descriptorId", "args")}
            for _ in range(args.calls):
                start = time.perf_counter()
                assert client.post("/api/execute", json=envelope, headers=headers).is_success
                http.append(_ms(start))
        ws_times = []
        with server.channel() as ws:
            ws.send(hello(bearer))
            for i in range(args.calls):
                start = time.perf_counter()
                ws.send(execute_frame(f"c{i}", server.env_key, "projects.list", {}))
                answer_of(ws, f"c{i}")
                ws_times.append(_ms(start))
        report["call_ms"] = {
            "http_identity_floor": samples(floor),
            "http_execute": samples(http),
            "ws_execute": samples(ws_times),
        }
        project = server.create_project(bearer, "bench")
        folder = server.root / "projects" / project
        for i in range(args.export_mb):
            (folder / f"f{i:03d}.bin").write_bytes(os.urandom(1 << 20))
        with server.channel(max_queue=None) as ws:
            ws.send(hello(bearer))
            start = time.perf_counter()
            ws.send(execute_frame("e", server.env_key, "project.export", {"project": project}))
            answer, data = answer_of(ws, "e", timeout=600)
            export_s = time.perf_counter() - start
        assert answer["type"] == "result", answer
        start = time.perf_counter()
        with zipfile.ZipFile(Path(tmp) / "floor.zip", "w", zipfile.ZIP_STORED) as floor_zip:
            for path in sorted(folder.glob("*.bin")):
                floor_zip.write(path, path.name)
        floor_s = time.perf_counter() - start
        megabytes = args.export_mb
        report["export"] = {
            "mb": megabytes,
            "archive_bytes": len(data),
            "ws_mb_per_s": round(megabytes / export_s, 1),
            "cpython_zipfile_mb_per_s": round(megabytes / floor_s, 1),
            "ratio": round(floor_s / export_s, 2),
        }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
