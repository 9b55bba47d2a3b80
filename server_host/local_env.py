"""One command to try missions that run: the site, an environment server and its runner, on
loopback (issue 30, "One command to try it"; README, docs/runner.md "Try it").

``nox -s serve -- --local-env DIR`` (``python -m worker.sitebuild.serve --local-env DIR``)
calls :func:`run_local`. It

1. initialises ``DIR`` when it holds no environment (:func:`prepare`): the environment
   (``voicebox-env init``), a **demo project** that already is a git repository with a first
   commit (``README.md``, its gate ``check.py`` and ``demo_agent.py``, a copy of the shipped
   demo agent :mod:`server_host.demo_agent`), and a commented ``runners.toml`` pinning the
   runner ``demo-1`` to run that agent (from the worktree: the sandbox hides the operator's
   home, where this repository may live) for that project — so a person spawns without a
   shell or a model service. An existing ``DIR`` is
   used as it is (its ``runners.toml`` is the owner's);
2. serves the site on ``127.0.0.1`` with the worker scripts' CSP naming the environment
   server's origin (the ``--peer-origin`` mechanism), and starts ``voicebox-env serve`` on
   ``127.0.0.1`` (``--env-port``, 8765 unless told: a fixed port keeps a pairing valid across
   restarts; 0 picks a free one) with ``--allow-origin`` the site's origin, then
   ``voicebox-env runner`` for ``DIR``;
3. prints the site's URL, the server's URL and a one-time pairing code
   (``voicebox-env pair-code``);
4. stops every process it started when it stops: Ctrl+C or SIGTERM, or when one of them ends
   (it says which, and stops the other). Each child runs in a session of its own and is ended
   SIGTERM, then SIGKILL after :data:`STOP_GRACE_S`; on Linux a child is also sent SIGTERM by
   the kernel if this process dies without stopping it (``PR_SET_PDEATHSIG``, even SIGKILL).

Loopback only: the environment server it starts is not reachable from another machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["DEMO_RUNNER", "STOP_GRACE_S", "prepare", "run_local", "runners_toml"]

DEMO_RUNNER = "demo-1"
"""The runner id the demo ``runners.toml`` pins."""
STOP_GRACE_S = 5.0
"""Seconds a child has after SIGTERM before SIGKILL."""
START_S = 30.0
"""Seconds the environment server has to say its URL before the command gives up."""

GATE = (
    "# The demo project's gate (runners.toml gate_command): exit 0 when the agent left\n"
    "# MISSION.md naming a mission. A real project's gate is its tests.\n"
    "import pathlib\nimport sys\n\n"
    "note = pathlib.Path('MISSION.md')\n"
    "ok = note.is_file() and note.read_text(encoding='utf-8').startswith('# msn_')\n"
    "print('gate: MISSION.md ' + ('names the mission' if ok else 'is missing'))\n"
    "sys.exit(0 if ok else 1)\n"
)
README = (
    "# demo\n\nA project made by `--local-env` to try missions that run. The demo agent\n"
    "(server_host/demo_agent.py) writes MISSION.md and adds a line here; `check.py` is the gate.\n"
)


def runners_toml(project: str) -> str:
    """The commented ``runners.toml`` of a new ``--local-env`` root: ``demo-1``, a
    ``build-runner`` for ``project`` running the demo agent the project carries (its
    ``demo_agent.py``, a copy of :mod:`server_host.demo_agent`; run in the worktree: the
    sandbox hides the operator's home, where this repository may live) (docs/runner.md)."""
    command = ["python3", "demo_agent.py", "{packet_file}"]
    return (
        '# Pins of this environment\'s runners (docs/runner.md, "Pins: runners.toml").\n'
        "# Written by --local-env: one runner, demo-1, for the demo project, running the\n"
        "# demo agent committed in the demo project (no model service). To try a real\n"
        "# agent, replace `command` with its CLI (examples in docs/runner.md) and restart;\n"
        "# add a project's id to `projects` to let the runner work there (it must be a git\n"
        "# repository with a commit).\n"
        "[[runner]]\n"
        f'runner_id = "{DEMO_RUNNER}"\n'
        'capability = "build-runner"          # build-runner | naming-runner\n'
        f'projects = ["{project}"]         # the demo project\n'
        f"command = {json.dumps(command)}\n"
        'gate_command = ["python3", "check.py"] # run in the worktree after the agent\n'
        "agent_time_limit_s = 120\n"
        "gate_time_limit_s = 60\n"
        "output_cap_bytes = 1048576\n"
        "max_parallel = 1\n"
    )


async def _make(root: Path) -> str:
    from core.json_bound import parse_json
    from server_host.home import compose, init_home
    from server_host.sandbox import detect
    from server_host.service import EnvironmentService
    from server_host.worktrees import git

    await init_home(root, "local-env")  # the browser's own environment is "local"
    composed = await compose(root)
    service = EnvironmentService(composed, sandbox=detect())

    async def call(op: str, origin: str | None = None, **args: Any) -> dict[str, Any]:
        msg: dict[str, Any] = {"v": 1, "id": "l" + op, "op": op, "args": args}
        if origin:
            msg["origin"] = origin
        answer, _ = await service.composed.host.handle(json.dumps(msg))
        out = parse_json(answer, what="The host's answer")
        if not out.get("ok"):
            raise RuntimeError(f"{op}: {out.get('error') or out}")
        result: dict[str, Any] = out["result"]
        return result

    try:
        project: str = (await call("project.create", name="demo"))["project"]["id"]
        await call(
            "blocks.candidate_edit",
            "human-ui",
            project=project,
            ops=[{"op": "add", "name": "Greeting", "purpose": "Says hello to a visitor."}],
        )
        folder = composed.roots.folder(project)
    finally:
        await service.ctx.audit.head_seq()
        if composed.sink is not None:
            composed.sink.close()
    (folder / "README.md").write_text(README, encoding="utf-8")
    (folder / "check.py").write_text(GATE, encoding="utf-8")
    agent = Path(__file__).with_name("demo_agent.py").read_text(encoding="utf-8")
    (folder / "demo_agent.py").write_text(agent, encoding="utf-8")
    git(folder, "init", "--quiet")
    git(folder, "add", "-A")
    git(folder, "commit", "--quiet", "-m", "demo project: README, its gate and the demo agent")
    return project


def prepare(root: Path) -> str | None:
    """Initialise ``root`` for ``--local-env`` when it holds no environment (module docstring,
    step 1): the demo project's id; ``None`` when ``root`` already held one (left as it is)."""
    from server_host.home import Home

    if Home(root).host_dir.is_dir():
        return None
    project = asyncio.run(_make(root))
    (root / "runners.toml").write_text(runners_toml(project), encoding="utf-8")
    return project


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "server_host", *args]


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGTERM it when this process dies, even by SIGKILL,
    so a killed ``--local-env`` leaves no server or runner behind; elsewhere nothing."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


class _Child:
    """A child process in a session of its own, its output echoed with a prefix."""

    def __init__(self, name: str, argv: list[str], on_line: Callable[[str], None] | None = None):
        self.name = name
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        self._on_line = on_line
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if self._on_line is not None:
                self._on_line(line)
            print(f"[{self.name}] {line.rstrip()}", flush=True)

    def stop(self) -> None:
        """SIGTERM to its process group, SIGKILL after :data:`STOP_GRACE_S`; waits."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # anything it left in its group
        self.reader.join(2)


def run_local(directory: Path, port: int, env_dir: Path, env_port: int = 0) -> int:
    """Serve the site in ``directory`` on ``127.0.0.1:port`` with an environment server and its
    runner for ``env_dir`` (module docstring); returns the exit status when it stops (0 after
    Ctrl+C or SIGTERM, 1 when a child ended by itself or the server did not start)."""
    from worker.sitebuild.serve import make_server

    env_dir = env_dir.expanduser().resolve()
    project = prepare(env_dir)
    if project is not None:
        print(
            f"Initialised {env_dir}: the demo project {project} (a git repository), "
            f"runners.toml pinning {DEMO_RUNNER} to the demo agent",
            flush=True,
        )
    site = make_server(directory, port)
    site_origin = f"http://127.0.0.1:{site.server_address[1]}"
    stopping = threading.Event()
    said: dict[str, str] = {}
    ready = threading.Event()

    def serve_line(line: str) -> None:
        found = re.search(r" on (https?://[^\s]+)", line)
        if found and "url" not in said:
            said["url"] = found.group(1).rstrip("/")
            ready.set()

    previous = {
        sig: signal.signal(sig, lambda *_: stopping.set())
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    children: list[_Child] = []
    status = 0
    thread = None
    try:
        env_args = ["--root", str(env_dir), "--host", "127.0.0.1", "--port", str(env_port)]
        env_args += ["--allow-origin", site_origin, "--log-level", "warning"]  # no announce lines
        server = _Child("env", _cli("serve", *env_args), serve_line)
        children.append(server)
        deadline = time.monotonic() + START_S
        while not ready.wait(0.1):
            if stopping.is_set():
                return 0
            if server.proc.poll() is not None or time.monotonic() > deadline:
                print("The environment server did not start (its output is above).", flush=True)
                return 1
        env_origin = said["url"]
        site.RequestHandlerClass.func.peer_origins = (env_origin,)  # type: ignore[attr-defined]  # the handler is a functools.partial
        runner = _cli("runner", "--root", str(env_dir), "--server", env_origin)
        children.append(_Child("runner", runner))
        code = subprocess.run(
            _cli("pair-code", "--root", str(env_dir)), capture_output=True, text=True, timeout=30
        )
        thread = threading.Thread(target=site.serve_forever, daemon=True)
        thread.start()
        print(
            f"\nSite          {site_origin}/\nEnvironment   {env_origin}  (runner {DEMO_RUNNER}"
            f" pinned in {env_dir / 'runners.toml'})\n"
            f"{code.stdout.strip() or code.stderr.strip()}\n"
            "Pair it in the page: Environments → Add a remote environment, the URL and the code.\n"
            f"A new code: voicebox-env pair-code --root {env_dir}   (Ctrl+C stops everything)\n",
            flush=True,
        )
        while not stopping.wait(0.2):
            for child in children:
                if child.proc.poll() is not None:
                    print(
                        f"The {child.name} process ended (status {child.proc.returncode}); "
                        "stopping the others.",
                        flush=True,
                    )
                    status = 1
                    stopping.set()
                    break
        return status
    finally:
        if thread is not None:
            site.shutdown()
        site.server_close()
        for child in reversed(children):  # the runner first, then the server
            child.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        print("Stopped the site, the environment server and its runner.", flush=True)
