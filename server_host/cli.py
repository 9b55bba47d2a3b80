"""``voicebox-env``: run an environment server on this machine (docs/remote.md).

Commands (each has ``--help``):

- ``init --root DIR --name NAME`` — create the environment: its envKey, host token, audit;
- ``serve --root DIR [--host H] [--port P] [--allow-origin O ...] [--certfile F --keyfile F]
  [--no-audit] [--exec-unsandboxed]`` — serve it over HTTP(S) and WebSocket; one per root
  (:mod:`server_host.root_lock`); fenced commands in the process sandbox
  (:mod:`server_host.sandbox`) unless the operator opts out;
- ``pair-code --root DIR`` — mint a one-time pairing code (and show the envKey fingerprint);
- ``revoke --root DIR --env-key K`` — revoke every bearer issued for ``K`` (closing its live
  channels at once when the server runs);
- ``runner [status|sweep] --root DIR`` — the runner daemon of ``runners.toml``
  (:mod:`server_host.runner`, docs/runner.md);
- ``keys --root DIR`` — what provider keys the running server holds now: per mission, its
  runner and the variable names (never a value or fingerprint; issue 31);
- ``audit verify --root DIR`` — check the audit's chain, MACs and anchor;
- ``policy --root DIR [--exec on|off] [--git on|off] [--safe on|off] ...`` — the operator's
  switches: fenced commands, SAFE mode.

``pair-code`` and ``revoke`` talk to the running server through its admin socket
(:mod:`server_host.admin`) and work on disk, holding the root's lock, when none runs.
Nothing printed or logged holds a bearer or the host token (the host token stays in HOST_DIR
``.host-token``); the pairing code is printed once, to the operator who asked for it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import sqlite3
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.refusals import Refused
from core.secret import Secret, scrub_secrets
from server_host.home import Home, compose, init_home
from server_host.root_lock import WAIT_S, RootBusy, RootLock, lock_root
from server_host.sandbox import ProcessSandbox, Unavailable

__all__ = ["main"]

PROG = "voicebox-env"


def _say(text: str) -> None:
    print(text, flush=True)


def _fail(refusal: Refused) -> int:
    body = refusal.body()
    print(f"{PROG}: {body.code}: {body.message}", file=sys.stderr, flush=True)
    return 1


def _bounds(field: str) -> tuple[int, int]:
    """The (minimum, maximum) :class:`server_host.commands.CommandPolicy` declares for
    ``field``."""
    from server_host.commands import CommandPolicy

    info = CommandPolicy.model_fields[field]
    low = next(m.ge for m in info.metadata if getattr(m, "ge", None) is not None)
    high = next(m.le for m in info.metadata if getattr(m, "le", None) is not None)
    return int(low), int(high)


def _bounded(field: str, unit: str) -> Callable[[str], int]:
    """An argparse type for the ``commands.json`` field ``field``: a whole number within the
    bounds :class:`server_host.commands.CommandPolicy` declares (read from the model, the one
    place they live), else one sentence naming both bounds (issue 29 item 15e)."""
    low, high = _bounds(field)

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"must be a whole number of {unit} from {low:,} (the minimum) to {high:,} "
                f"(the maximum); {text!r} is not"
            )
        return value

    return parse


def _port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(
            f"must be a port from 0 (any free one) to 65535; {text!r} is not"
        )
    return int(text)


def _origin(text: str) -> str:
    """An argparse type: a browser origin, ``http(s)://host[:port]`` (core's reading of one,
    :func:`core.custody.remote.remote_origin`, which also lower-cases it as browsers send it)."""
    from core.custody.remote import remote_origin

    try:
        return remote_origin(text)
    except Refused as refusal:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an origin: {refusal.body().message}"
        ) from None


def _token(home: Home) -> str:
    return (home.host_dir / ".host-token").read_text(encoding="utf-8").strip()


def _expiry(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%H:%M:%S UTC")


async def _init(args: argparse.Namespace) -> int:
    env = await init_home(Path(args.root), args.name)
    from core.custody.pair_code import env_fingerprint

    home = Home(Path(args.root))
    _say(f"environment {env.name!r} created under {home.root}")
    _say(f"envKey       {env.key}")
    _say(f"fingerprint  {env_fingerprint(env.key)}")
    _say(f"host token   in {home.host_dir / '.host-token'} (mode 0600; it never leaves here)")
    return 0


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
    # and without it every answer waited ~40 ms for the client's delayed ACK (measured: HTTP
    # round trip p50 44 ms -> under 1 ms on loopback)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # connections wait in the backlog until uvicorn accepts them
    sock.set_inheritable(True)
    return sock


def _hello_bound() -> int | None:
    raw = os.environ.get("VOICEBOX_HELLO_BOUND_MS")
    if not raw:
        return None
    value = int(raw) if raw.isdigit() else 0
    if not 1 <= value <= 600_000:
        raise SystemExit(f"{PROG}: VOICEBOX_HELLO_BOUND_MS is 1..600000")
    return value


def _lock(home: Home, role: str) -> RootLock:
    """The root's lock for ``role`` (:mod:`server_host.root_lock`); a sentence and exit 1
    when another process holds it (issue 29 item 10)."""
    try:
        return lock_root(home.host_dir, role, wait_s=WAIT_S)
    except RootBusy as busy:
        if busy.role == "serve" and role == "serve":
            raise SystemExit(
                f"{PROG}: another voicebox-env serve (pid {busy.pid}) already serves "
                f"{home.root}; two servers on one root would split its revocations: stop that "
                "one first, or keep using it"
            ) from None
        if busy.role == "serve":
            raise SystemExit(
                f"{PROG}: the server of {home.root} (pid {busy.pid}) runs but its admin socket "
                f"did not answer; {role} needs it (or stop that server): revoke with "
                "DELETE /api/pair and the host token instead"
            ) from None
        raise SystemExit(
            f"{PROG}: {home.root} is busy: pid {busy.pid} ({busy.role}) holds its lock; try again"
        ) from None


def _sandbox_line(sandbox: ProcessSandbox) -> str:
    """What the operator reads at start about fenced commands' sandbox."""
    if isinstance(sandbox, Unavailable):
        return (
            f"no process sandbox ({sandbox.reason}): exec, git/init and git/config are refused "
            "sandbox-unavailable; install bubblewrap, or serve with --exec-unsandboxed"
        )
    if sandbox.name == "none":
        return (
            "WARNING --exec-unsandboxed: fenced commands run with this server's user and its "
            "full reach (HOST_DIR and its host token, every project, the network)"
        )
    return (
        "fenced commands run in a bubblewrap sandbox (their project read-write, the system "
        "read-only, nothing of this root else, no network)"
    )


async def _serve(args: argparse.Namespace) -> int:
    if bool(args.certfile) != bool(args.keyfile):
        raise SystemExit(f"{PROG}: --certfile and --keyfile go together")
    home = Home(Path(args.root))
    lock = _lock(home, "serve") if home.host_dir.is_dir() else None  # else compose refuses
    try:
        return await _serve_locked(args)
    finally:
        if lock is not None:
            lock.release()


async def _serve_locked(args: argparse.Namespace) -> int:
    import uvicorn

    from core.custody.pair_code import env_fingerprint
    from core.custody.wire import MAX_FRAME_BYTES
    from server_host.admin import start_admin
    from server_host.app import build_app
    from server_host.logs import log_config
    from server_host.sandbox import detect
    from server_host.service import EnvironmentService

    for flag, path in (("--certfile", args.certfile), ("--keyfile", args.keyfile)):
        if path and not os.access(path, os.R_OK):
            raise SystemExit(f"{PROG}: {flag} {path}: no readable file there")
    composed = await compose(Path(args.root), audit=not args.no_audit)
    sandbox = detect(opt_out=args.exec_unsandboxed)
    _say(f"{PROG}: {_sandbox_line(sandbox)}")
    private = tuple(Path(f) for f in (args.certfile, args.keyfile) if f)
    service = EnvironmentService(
        composed, hello_bound_ms=_hello_bound(), sandbox=sandbox, private_paths=private
    )
    await service.redactor()  # HOST_DIR's secrets held before the first log line
    app = build_app(service, allow_origins=tuple(args.allow_origin))
    try:
        sock = _bind(args.host, args.port)
    except OSError as exc:
        where = f"{args.host}:{args.port}"
        raise SystemExit(f"{PROG}: cannot listen on {where}: {exc.strerror}") from None
    config = uvicorn.Config(
        app,
        log_config=log_config(args.log_level, service.secrets),
        ws="websockets-sansio",
        ws_max_size=MAX_FRAME_BYTES + 1024,
        ws_per_message_deflate=False,  # archives do not compress: deflate made exports 11x slower
        ws_ping_interval=20,
        ws_ping_timeout=20,
        ssl_certfile=args.certfile,
        ssl_keyfile=args.keyfile,
        lifespan="off",
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=3,
    )
    server = uvicorn.Server(config)
    await composed.reload_policy()  # logging is configured: a damaged policy is said now
    admin = await start_admin(service, composed.home.admin_socket)
    scheme = "https" if args.certfile else "http"
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    env = composed.environment
    _say(
        f"{PROG}: serving {env.name!r} envKey {env.key} fingerprint "
        f"{env_fingerprint(env.key)} on {scheme}://{shown}:{port}"
    )
    from server_host.runner import write_endpoint

    loop_host = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(host, shown)
    write_endpoint(composed.home.host_dir, f"{scheme}://{loop_host}:{port}")
    try:
        await server.serve(sockets=[sock])
    finally:
        if admin is not None:
            admin.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(composed.home.admin_socket)
        if composed.sink is not None:
            composed.sink.close()
    return 0


async def _runner(args: argparse.Namespace) -> int:
    from server_host.runner import run_daemon, run_status, run_sweep

    root = Path(args.root)
    if args.action == "status":
        return await run_status(root)
    if args.action == "sweep":
        return await run_sweep(root, args.idle_hours)
    return await run_daemon(
        root, server=args.server, unsandboxed=args.exec_unsandboxed, idle_hours=args.idle_hours
    )


async def _admin_or_disk(home: Home, request: dict[str, Any]) -> dict[str, Any]:
    from server_host.admin import ask
    from server_host.service import EnvironmentService

    answer = None
    if home.admin_socket.exists():
        answer = await ask(home.admin_socket, {**request, "hostToken": _token(home)})
    if answer is None:  # no server runs: the same act, on disk, holding the root's lock
        lock = _lock(home, request["op"]) if home.host_dir.is_dir() else None
        service = EnvironmentService(await compose(home.root))
        token = Secret(_token(home))
        try:
            if request["op"] == "pair-code":
                await service.pairing_token_check(token)
                return await service.mint_code(request.get("envKey"))
            return await service.pair_revoke(token, request["envKey"], actor="operator")
        finally:
            await service.ctx.audit.head_seq()  # let the background anchor settle
            if service.composed.sink is not None:
                service.composed.sink.close()
            if lock is not None:
                lock.release()
    if not answer.get("ok"):
        refusal = answer.get("refusal") or {}
        from core.refusals import Code

        raise Refused(Code(refusal.get("code", "internal-error")), refusal.get("message"))
    return {k: v for k, v in answer.items() if k != "ok"}


async def _pair_code(args: argparse.Namespace) -> int:
    home = Home(Path(args.root))
    minted = await _admin_or_disk(home, {"op": "pair-code"})
    _say(f"pairing code  {minted['code']}")
    _say(f"fingerprint   {minted['fingerprint']}  (compare it with the one the page shows)")
    _say(f"envKey        {minted['envKey']}")
    _say(f"expires       {_expiry(int(minted['expiresAt']))}; single use")
    return 0


async def _revoke(args: argparse.Namespace) -> int:
    home = Home(Path(args.root))
    done = await _admin_or_disk(home, {"op": "revoke", "envKey": args.env_key})
    _say(json.dumps(done))
    return 0


async def _keys(args: argparse.Namespace) -> int:
    """``voicebox-env keys``: one line per mission whose run's provider keys the running
    server holds — ``<missionId>  <runnerId>  <queued|running>  <VARIABLE, …>`` — names only
    (issue 31). With no server running nothing is held (keys live in its memory only)."""
    from server_host.admin import ask

    home = Home(Path(args.root))
    if not home.host_dir.is_dir():
        raise SystemExit(f"{PROG}: no environment under {home.root}: run init")
    answer = None
    if home.admin_socket.exists():
        answer = await ask(home.admin_socket, {"op": "keys", "hostToken": _token(home)})
    if answer is None:
        _say("no server runs for this root: it holds no provider key (keys live in its memory)")
        return 0
    if not answer.get("ok"):
        refusal = answer.get("refusal") or {}
        from core.refusals import Code

        raise Refused(Code(refusal.get("code", "internal-error")), refusal.get("message"))
    missions = answer.get("missions") or []
    if not missions:
        _say("the server holds no provider key now")
    for row in missions:
        names = ", ".join(str(v) for v in row.get("variables", []))
        _say(f"{row.get('missionId')}  {row.get('runnerId')}  {row.get('state')}  {names}")
    return 0


async def _verify(args: argparse.Namespace) -> int:
    composed = await compose(Path(args.root))
    try:
        result = await composed.ctx.audit.verify()
    finally:
        if composed.sink is not None:
            composed.sink.close()
    _say(result.model_dump_json())
    return 0 if result.ok else 1


async def _policy(args: argparse.Namespace) -> int:
    from core.policy import POLICY_NAME, load_policy
    from server_host.commands import COMMANDS_DOC, load_command_policy
    from server_host.disk import DiskHostState

    home = Home(Path(args.root))
    if not home.host_dir.is_dir():
        raise SystemExit(f"{PROG}: no environment under {home.root}: run init")
    state = DiskHostState(home.host_dir)
    commands = load_command_policy(await state.load(COMMANDS_DOC))
    loaded = await load_policy(state)  # core's one reader: damaged is SAFE, said here
    policy = loaded.policy
    if loaded.damage is not None:
        print(f"{PROG}: {loaded.damage}", file=sys.stderr, flush=True)
    changes: dict[str, Any] = {}
    if args.exec is not None:
        changes["exec_enabled"] = args.exec == "on"
    if args.git is not None:
        changes["git_enabled"] = args.git == "on"
    if args.exec_time_limit_ms is not None:
        changes["time_limit_ms"] = args.exec_time_limit_ms
    if args.exec_output_cap_bytes is not None:
        changes["output_cap_bytes"] = args.exec_output_cap_bytes
    if changes:
        commands = type(commands).model_validate({**commands.model_dump(), **changes})
        await state.store(COMMANDS_DOC, commands.model_dump_json().encode())
    if args.safe is not None:
        policy = policy.model_copy(update={"read_only": args.safe == "on"})
        await state.store(POLICY_NAME, policy.model_dump_json().encode())
    _say(json.dumps({"commands": commands.model_dump(), "safe": policy.read_only}))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run a Voicebox environment server: the same core as the browser host, "
        "under CPython, paired from the browser by a one-time code (docs/remote.md).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        one = sub.add_parser(name, help=text, description=text)
        one.add_argument("--root", required=True, help="the environment's folder")
        return one

    init = command("init", "Create an environment: its envKey, host token and audit.")
    init.add_argument("--name", required=True, help="its display name")
    init.set_defaults(run=_init)

    serve = command("serve", "Serve the environment over HTTP(S) and WebSocket.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8765, help="port (8765; 0 picks a free one)")
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        type=_origin,
        metavar="ORIGIN",
        help="a browser origin allowed to call (CORS, WebSocket Origin); repeatable",
    )
    serve.add_argument("--certfile", help="TLS certificate (PEM): serve https/wss")
    serve.add_argument("--keyfile", help="TLS private key (PEM)")
    serve.add_argument(
        "--no-audit",
        action="store_true",
        help="declare no audit root: nothing is recorded (revocations say root-not-declared)",
    )
    serve.add_argument("--log-level", default="info", choices=("info", "warning", "error"))
    serve.add_argument(
        "--exec-unsandboxed",
        action="store_true",
        help="run fenced commands WITHOUT the process sandbox, with this server's user and its "
        "full reach (HOST_DIR, every project, the network); only where bubblewrap cannot run "
        "and every caller could have a shell here. Each run's audit record says sandbox none",
    )
    serve.set_defaults(run=_serve)

    runner = command(
        "runner",
        "Run the runner daemon of this root (runners.toml): agents in git worktrees, in the "
        "sandbox (docs/runner.md). 'runner status' lists worktrees; 'runner sweep' removes "
        "idle ones.",
    )
    runner.add_argument("action", nargs="?", default="run", choices=("run", "status", "sweep"))
    runner.add_argument("--server", help="the serve's URL (default: HOST_DIR serve-endpoint)")
    runner.add_argument(
        "--idle-hours", type=float, default=72.0, help="idle age of a worktree swept (72)"
    )
    runner.add_argument(
        "--exec-unsandboxed",
        action="store_true",
        help="run agents WITHOUT the process sandbox (the runner's full reach)",
    )
    runner.set_defaults(run=_runner)

    code = command("pair-code", "Mint a one-time pairing code (10 minutes, single use).")
    code.set_defaults(run=_pair_code)

    revoke = command("revoke", "Revoke every bearer issued for an envKey, closing its channels.")
    revoke.add_argument("--env-key", required=True, help="the envKey whose pairings to revoke")
    revoke.set_defaults(run=_revoke)

    keys = command(
        "keys",
        "List the provider keys the running server holds now: per mission, its runner and the "
        "variable names (never a value).",
    )
    keys.set_defaults(run=_keys)

    audit = sub.add_parser("audit", help="The audit.", description="The audit.")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True, metavar="COMMAND")
    verify = audit_sub.add_parser(
        "verify",
        help="Check the audit's hash chain, MACs and anchor; name what is wrong.",
        description="Check the audit's hash chain, MACs and anchor; exit 1 and name the "
        "finding (edited, truncated, gap, ...) when it does not hold.",
    )
    verify.add_argument("--root", required=True, help="the environment's folder")
    verify.set_defaults(run=_verify)

    policy = command("policy", "Show or set the operator's switches (fenced commands, SAFE).")
    policy.add_argument("--exec", choices=("on", "off"), help="allow exec (off by default)")
    policy.add_argument("--git", choices=("on", "off"), help="allow git/init and git/config")
    policy.add_argument("--safe", choices=("on", "off"), help="SAFE mode: refuse every write")
    policy.add_argument(
        "--exec-time-limit-ms",
        type=_bounded("time_limit_ms", "milliseconds"),
        help="a command's time limit in ms ({:,} to {:,})".format(*_bounds("time_limit_ms")),
    )
    policy.add_argument(
        "--exec-output-cap-bytes",
        type=_bounded("output_cap_bytes", "bytes"),
        help="output kept per command in bytes ({:,} to {:,})".format(*_bounds("output_cap_bytes")),
    )
    policy.set_defaults(run=_policy)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; the exit status is 0 on success, 1 on a refusal."""
    args = _parser().parse_args(argv)
    try:
        status: int = asyncio.run(args.run(args))
        return status
    except Refused as refusal:
        return _fail(refusal)
    except OSError as exc:  # a port taken, an unknown host, a certificate that does not load…
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"{PROG}: {exc.strerror or exc}{where}", file=sys.stderr, flush=True)
        return 1
    except sqlite3.Error as exc:  # an audit database that is not one (damaged, replaced)
        print(f"{PROG}: the audit database cannot be used: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last wall: a sentence, never a traceback (STYLE §5)
        text = scrub_secrets(f"{type(exc).__name__}: {exc}")[:500]
        print(f"{PROG}: internal error: {text}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
