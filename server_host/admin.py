"""The operator's local admin socket: how ``voicebox-env pair-code`` and ``revoke`` reach a
running server (seed 002 §3: a revocation closes live channels *at once*, which only the
process holding them can do).

While ``serve`` runs it listens on the Unix socket HOST_DIR ``admin.sock`` (HOST_DIR is
``0700``; the socket is made ``0600``). One request per connection, one JSON line each way:
``{"op": "pair-code", "hostToken", "envKey"?}``, ``{"op": "revoke", "hostToken",
"envKey"}`` or ``{"op": "keys", "hostToken"}`` (what provider keys the server holds now: per
mission, the variable names; issue 31); the answer is ``{"ok": true, ...}`` or ``{"ok":
false, "refusal": {...}}``. The host token is checked as on HTTP (constant time). When no
server runs, the CLI does ``pair-code`` and ``revoke`` on disk (:mod:`server_host.cli`); a
server that does not run holds no key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from core.json_bound import parse_json
from core.refusals import Code, Refused
from core.secret import Secret
from server_host.service import EnvironmentService, answer_json

__all__ = ["ANSWER_S", "ask", "start_admin"]

log = logging.getLogger("voicebox.admin")
MAX_LINE = 64 << 10


async def _answer(service: EnvironmentService, request: dict[str, Any]) -> dict[str, Any]:
    token = request.get("hostToken")
    secret = Secret(token) if isinstance(token, str) and token else None
    await service.pairing_token_check(secret)
    env_key = request.get("envKey")
    if env_key is not None and not isinstance(env_key, str):
        raise Refused(Code.MESSAGE_MALFORMED, "envKey is text.")
    if request.get("op") == "pair-code":
        return await service.mint_code(env_key)
    if request.get("op") == "revoke":
        return await service.pair_revoke(secret, env_key or "", actor="operator")
    if request.get("op") == "keys":
        return {"missions": await service.runners.held_keys()}
    raise Refused(Code.OPERATION_UNKNOWN, "The admin socket answers pair-code, revoke and keys.")


async def start_admin(service: EnvironmentService, path: Path) -> asyncio.Server | None:
    """Listen on ``path``; ``None`` (and a warning) when it cannot (a path too long for a
    Unix socket: the CLI then works on disk)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            request = parse_json(line[:MAX_LINE])
            if not isinstance(request, dict):
                raise Refused(Code.MESSAGE_MALFORMED)
            answer = {"ok": True, **await _answer(service, request)}
        except Refused as refusal:
            answer = {"ok": False, "refusal": refusal.body().model_dump(mode="json")}
        except (ValueError, TimeoutError):
            answer = {
                "ok": False,
                "refusal": Refused(Code.MESSAGE_MALFORMED).body().model_dump(mode="json"),
            }
        with contextlib.suppress(OSError):
            writer.write(answer_json(answer).encode() + b"\n")
            await writer.drain()
        writer.close()

    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    try:
        server = await asyncio.start_unix_server(handle, path=str(path))
    except OSError as exc:
        log.warning("no admin socket (%s): pair-code and revoke work on disk", exc.strerror)
        return None
    os.chmod(path, 0o600)
    return server


ANSWER_S = 30
"""How long ``ask`` waits for a running server's admin answer, in seconds."""


async def ask(path: Path, request: dict[str, Any]) -> dict[str, Any] | None:
    """Send one request to a running server's admin socket; ``None`` when none answers within
    ``ANSWER_S`` seconds (none listens, or a server that is stopped or hung: the caller then
    finds the root's lock held and says so — never an empty error)."""
    try:
        reader, writer = await asyncio.open_unix_connection(str(path))
    except OSError:
        return None
    try:
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), ANSWER_S)
    except (TimeoutError, OSError):  # in 3.11 asyncio's TimeoutError is an OSError
        return None
    finally:
        writer.close()
    return parse_json(line, what="The server's admin answer") if line else None
