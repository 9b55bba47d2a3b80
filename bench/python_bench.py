"""The person's Python runtime (issue 32; docs/python.md): cold start, warm run, Stop, beside
the host's own boot in the same profile.

One fresh profile loads the site; the host's boot (navigation → ``ready``, ms) is read from the
page's marks. A project with ``hello.py`` (prints one line) and ``spin.py`` (prints, then
``while True: pass``) is made. Then, in the page, through the page's own client
(``voicebox.host``, as a person's gesture):

- **cold** — as soon as the runtime's frame is connected (``python.warm`` answers), ``python.run``
  of ``hello.py``: ms from the call to the first ``python.output`` event of the run (the
  runtime's Pyodide boots on that call), and to the run's answer;
- **warm** — ``runs`` more runs of ``hello.py``: call → first output, call → answer (median);
- **stop** — ``runs`` times: ``python.run`` of ``spin.py``, wait for its first output (the loop
  is going), then ``python.stop``: ms from the stop call to the run's answer ``stopped``
  (terminate-and-restart: the site is not cross-origin isolated); then the next ``hello.py``
  run's call → first output (a restarted runtime; the compiled module is kept);
- **requirements** — on that restarted runtime (none of the offline set installed), a run of
  ``table.py`` in a project whose ``requirements.txt`` names ``tabulate`` and
  ``python-dateutil`` (three wheels with ``six``, installed before the code runs): call → answer
  of that first run and of the next one (already installed); the difference is what the
  requirements cost a first run.

Goals (issue 32): a warm run's first output ≤ 250 ms; Stop → stopped ≤ 2000 ms (the
acceptance's bound where the page is not isolated). The cold start has no goal; its ratio to
the host's boot in the same run is reported.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Playwright

from bench import host
from bench.browser import Profile
from bench.site import BenchSite
from bench.stats import ratio, runs

__all__ = ["measure"]

HELLO = b"print('hello from', __name__)\n"
SPIN = b"print('spinning', flush=True)\nwhile True:\n    pass\n"
TABLE = b"import dateutil, tabulate\nprint(tabulate.tabulate([[dateutil.__version__]]))\n"
REQUIREMENTS = b"tabulate\npython-dateutil\n"
CONNECT_TIMEOUT_MS = 60_000

RUN = """
async ([project, path, run]) => {
  const client = window.voicebox.host;
  const start = performance.now();
  let first = null;
  const onEvent = (event) => {
    const e = event.detail;
    const mine = e?.type === "python.output" && e.run === run;
    if (first === null && mine) first = performance.now() - start;
  };
  client.addEventListener("event", onEvent);
  try {
    const { result } = await client.call("python.run", { project, path, run }, { human: true });
    return { first_ms: first, answer_ms: performance.now() - start, exit_status: result.exit_status,
             stopped: result.stopped };
  } finally {
    client.removeEventListener("event", onEvent);
  }
}
"""

STOP = """
async ([project, path, run]) => {
  const client = window.voicebox.host;
  let going;
  const seen = new Promise((resolve) => { going = resolve; });
  const onEvent = (event) => {
    const e = event.detail;
    if (e?.type === "python.output" && e.run === run) going();
  };
  client.addEventListener("event", onEvent);
  try {
    const answer = client.call("python.run", { project, path, run }, { human: true });
    await seen;
    const start = performance.now();
    await client.call("python.stop");
    const { result } = await answer;
    return { stop_ms: performance.now() - start, stopped: result.stopped };
  } finally {
    client.removeEventListener("event", onEvent);
  }
}
"""

CONNECTED = """
async (deadline) => {
  const until = performance.now() + deadline;
  for (;;) {
    try {
      await window.voicebox.app.python(); // the runtime's frame is made on first need
      await window.voicebox.host.call("python.warm");
      return performance.now();
    }
    catch (err) {
      if (performance.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
"""


def _run(profile: Profile, pid: str, path: str, run: str) -> dict[str, Any]:
    out = profile.evaluate(RUN, [pid, path, run])
    if out["exit_status"] != 0 or out["first_ms"] is None:
        raise RuntimeError(f"run of {path} did not print and exit 0: {out}")
    return out


def measure(playwright: Playwright, site: BenchSite, run_count: int) -> dict:
    """Run the measurements (module docstring)."""
    count = max(run_count, 1)
    with Profile(playwright) as profile:
        profile.goto(site.url)
        profile.wait_status()
        host_ready_ms = profile.marks().get("ready")
        pid = host.ok(profile, "project.create", {"name": "python-bench"})["project"]["id"]
        files = (("hello.py", HELLO), ("spin.py", SPIN))
        files += (("reqs/table.py", TABLE), ("requirements.txt", REQUIREMENTS))
        for path, data in files:
            host.ok(profile, "file.write", {"project": pid, "path": path}, body=data)
        connected_at = profile.evaluate(CONNECTED, CONNECT_TIMEOUT_MS)
        cold = _run(profile, pid, "hello.py", "cold")
        warm = [_run(profile, pid, "hello.py", f"warm{i}") for i in range(count)]
        stops, after = [], []
        for i in range(count):
            stop = profile.evaluate(STOP, [pid, "spin.py", f"spin{i}"])
            if not stop["stopped"]:
                raise RuntimeError(f"the busy loop was not stopped: {stop}")
            stops.append(stop)
            after.append(_run(profile, pid, "hello.py", f"after{i}"))
        with_reqs = _run(profile, pid, "reqs/table.py", "reqs-first")
        reqs_again = _run(profile, pid, "reqs/table.py", "reqs-again")
        errors = list(profile.console_errors)
    warm_first = runs([w["first_ms"] for w in warm])
    stop_ms = runs([s["stop_ms"] for s in stops])
    figures: dict[str, Any] = {
        "host_ready_ms": None if host_ready_ms is None else round(host_ready_ms, 1),
        "runtime_connected_ms": round(connected_at, 1),
        "cold": {k: round(cold[k], 1) for k in ("first_ms", "answer_ms")},
        "warm": {"first_ms": warm_first, "answer_ms": runs([w["answer_ms"] for w in warm])},
        "stop_to_stopped_ms": stop_ms,
        "after_restart_first_ms": runs([a["first_ms"] for a in after]),
        "requirements_first_run": {k: round(with_reqs[k], 1) for k in ("first_ms", "answer_ms")},
        "requirements_next_run": {k: round(reqs_again[k], 1) for k in ("first_ms", "answer_ms")},
        "console_errors": errors[:10],
    }
    goals = {
        "python_cold_first_output_ms": {
            "value": round(cold["first_ms"], 1),
            "ratio": None if host_ready_ms is None else ratio(cold["first_ms"], host_ready_ms),
            "goal": "reported (ratio: cold first output / the host's boot to ready, same run)",
            "met": True,
        },
        "python_warm_first_output_ms": {
            "value": warm_first["median"],
            "goal": "<= 250 ms from Run to the first output of a warm run",
            "met": warm_first["median"] <= 250,
        },
        "python_stop_to_stopped_ms": {
            "value": stop_ms["median"],
            "goal": "<= 2000 ms from Stop to the run answered stopped (terminate and restart)",
            "met": stop_ms["median"] <= 2000,
        },
        "python_first_run_with_requirements_ms": {
            "value": round(with_reqs["answer_ms"], 1),
            "ratio": ratio(with_reqs["answer_ms"], reqs_again["answer_ms"]),
            "goal": "reported (ratio: the first run installing 3 offline-set wheels / the next)",
            "met": True,
        },
    }
    return {"figures": figures, "goals": goals}
