"""The environment server's HTTP and WebSocket interface: a Starlette app (seed 002 §1, §3–§5).

Every route is listed here, in one place (STYLE §3c); each hands its request to
:class:`~server_host.service.EnvironmentService` and turns its answer — or its refusal — into
a response. A refusal is ``{"refusal": {code, status, message}}`` with the code's HTTP status
(seed 002 §5); a channel refusal is a WebSocket close 1008 with the code as its reason.
docs/remote.md is the client's reference for every route, body and frame.

Bodies are read up to :data:`~core.custody.wire.MAX_FRAME_BYTES` (else ``message-too-large``).
Host-token routes read ``x-voicebox-host-token`` (compared in constant time, before anything
else); bearer routes read ``Authorization: Bearer vbx_…``. CORS answers only the origins the
operator named (``--allow-origin``), and a WebSocket whose ``Origin`` is not one of them is
refused before it opens (a client that sends no ``Origin`` — not a browser — is let through
to the hello). No route ever answers a host token, and a bearer only to the one caller that
was issued it (``POST /api/pair``, ``POST /api/pair/claim``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ConfigDict, Field
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from core.custody.wire import MAX_FRAME_BYTES
from core.model import Contract
from core.refusals import Code, Refused
from core.secret import Secret
from server_host.channel import WebSocketChannel
from server_host.runner_desk import AnnounceBody, FinishedBody, PostBody, ScopeBody
from server_host.service import EnvironmentService, parse_body

__all__ = ["build_app"]

log = logging.getLogger("voicebox.server")
Handler = Callable[[Request], Awaitable[dict[str, Any]]]


class EnvKeyBody(Contract):
    """``{envKey}``."""

    env_key: str = Field(alias="envKey", max_length=128)


class MintBody(Contract):
    """``{envKey?}`` — the code's environment (default: this one)."""

    env_key: str | None = Field(default=None, alias="envKey", max_length=128)


class CompleteBody(Contract):
    """``{envKey, bearer}`` of ``POST /api/pair/complete``."""

    model_config = ConfigDict(hide_input_in_errors=True)

    env_key: str = Field(alias="envKey", max_length=128)
    bearer: Secret


class ClaimBody(Contract):
    """``{code}`` of ``POST /api/pair/claim``."""

    model_config = ConfigDict(hide_input_in_errors=True)

    code: Secret


def _refusal_response(refusal: Refused) -> JSONResponse:
    status = refusal.status if 400 <= refusal.status <= 599 else 403
    return JSONResponse({"refusal": refusal.body().model_dump(mode="json")}, status_code=status)


async def _body(request: Request) -> bytes:
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_FRAME_BYTES:
            raise Refused(
                Code.MESSAGE_TOO_LARGE, f"The body is larger than {MAX_FRAME_BYTES} bytes."
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _host_token(request: Request) -> Secret | None:
    value = request.headers.get("x-voicebox-host-token")
    return Secret(value) if value else None


def _bearer(request: Request) -> Secret | None:
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return Secret(token.strip())


def _answering(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await handler(request))
        except Refused as refusal:
            return _refusal_response(refusal)
        except Exception:
            log.exception("internal error on %s", request.url.path)
            return _refusal_response(Refused(Code.INTERNAL_ERROR))

    return endpoint


def build_app(service: EnvironmentService, *, allow_origins: tuple[str, ...] = ()) -> Starlette:
    """The Starlette app serving ``service`` (see the module docstring)."""
    origins = frozenset(allow_origins)

    async def identity(request: Request) -> dict[str, Any]:
        return await service.identity()

    async def health(request: Request) -> dict[str, Any]:
        return service.health()

    async def pair(request: Request) -> dict[str, Any]:
        token = _host_token(request)
        await service.pairing_token_check(token)
        body = parse_body(EnvKeyBody, await _body(request))
        return await service.pair_issue(token, body.env_key)

    async def pair_complete(request: Request) -> dict[str, Any]:
        token = _host_token(request)
        await service.pairing_token_check(token)
        body = parse_body(CompleteBody, await _body(request))
        return await service.pair_complete(token, body.env_key, body.bearer)

    async def pair_revoke(request: Request) -> dict[str, Any]:
        token = _host_token(request)
        await service.pairing_token_check(token)
        body = parse_body(EnvKeyBody, await _body(request))
        return await service.pair_revoke(token, body.env_key)

    async def pair_release(request: Request) -> dict[str, Any]:
        body = parse_body(EnvKeyBody, await _body(request))
        return await service.pair_release(body.env_key, _bearer(request))

    async def pair_code(request: Request) -> dict[str, Any]:
        await service.pairing_token_check(_host_token(request))
        raw = await _body(request)
        body = parse_body(MintBody, raw or b"{}")
        return await service.mint_code(body.env_key)

    async def pair_claim(request: Request) -> dict[str, Any]:
        body = parse_body(ClaimBody, await _body(request))
        return await service.claim(body.code)

    async def execute(request: Request) -> dict[str, Any]:
        return await service.execute_http(await _body(request), _bearer(request))

    def fenced(command: str) -> Handler:
        async def run(request: Request) -> dict[str, Any]:
            env_key = request.path_params["key"]
            return await service.fenced(command, env_key, _bearer(request), await _body(request))

        return run

    async def channel(websocket: WebSocket) -> None:
        origin = websocket.headers.get("origin")
        if origin is not None and origin not in origins:
            await websocket.close(code=1008)  # before accept: the upgrade is refused (403)
            return
        await websocket.accept()
        chan = WebSocketChannel(websocket)
        channel_id = await service.channel_open(websocket.query_params.get("envKey", ""), chan)
        if channel_id is None:
            return
        try:
            await _serve_channel(service, websocket, channel_id)
        finally:
            await service.channel_closed(channel_id)

    def _peer(request: Request) -> str | None:
        return request.client.host if request.client else None

    async def runner_challenge(request: Request) -> dict[str, Any]:
        return {"challenge": service.runners.challenge}

    async def runner_announce(request: Request) -> dict[str, Any]:
        body = parse_body(AnnounceBody, await _body(request))
        return await service.runners.announce(_peer(request), body)

    async def runner_post(request: Request) -> dict[str, Any]:
        body = parse_body(PostBody, await _body(request))
        return await service.runners.post(_peer(request), body)

    async def runner_scope(request: Request) -> dict[str, Any]:
        body = parse_body(ScopeBody, await _body(request))
        return await service.runners.scope(_peer(request), body)

    def missions(op: str) -> Handler:
        async def run(request: Request) -> dict[str, Any]:
            env_key = request.path_params["key"]
            raw = await _body(request)
            return await service.runners.by_bearer(op, env_key, _bearer(request), raw)

        return run

    def reviews(op: str) -> Handler:
        async def run(request: Request) -> dict[str, Any]:
            env_key = request.path_params["key"]
            raw = await _body(request)
            return await service.runners.review(op, env_key, _bearer(request), raw)

        return run

    async def land(request: Request) -> dict[str, Any]:
        env_key = request.path_params["key"]
        raw = await _body(request)
        return await service.runners.land_by_bearer(env_key, _bearer(request), raw)

    async def runner_finished(request: Request) -> dict[str, Any]:
        body = parse_body(FinishedBody, await _body(request))
        return await service.runners.finished(_peer(request), body)

    routes = [
        Route("/api/identity", _answering(identity), methods=["GET"]),
        Route("/api/health", _answering(health), methods=["GET"]),
        Route("/api/runner/finished", _answering(runner_finished), methods=["POST"]),
        Route("/api/runner/challenge", _answering(runner_challenge), methods=["GET"]),
        Route("/api/runner/announce", _answering(runner_announce), methods=["POST"]),
        Route("/api/runner/post", _answering(runner_post), methods=["POST"]),
        Route("/api/runner/scope", _answering(runner_scope), methods=["POST"]),
        Route("/api/pair", _answering(pair), methods=["POST"]),
        Route("/api/pair", _answering(pair_revoke), methods=["DELETE"]),
        Route("/api/pair/complete", _answering(pair_complete), methods=["POST"]),
        Route("/api/pair/code", _answering(pair_code), methods=["POST"]),
        Route("/api/pair/revoke", _answering(pair_release), methods=["POST"]),
        Route("/api/pair/claim", _answering(pair_claim), methods=["POST"]),
        Route("/api/execute", _answering(execute), methods=["POST"]),
        Route("/api/environments/{key}/exec", _answering(fenced("exec")), methods=["POST"]),
        Route("/api/environments/{key}/git/init", _answering(fenced("git/init")), methods=["POST"]),
        Route(
            "/api/environments/{key}/git/config",
            _answering(fenced("git/config")),
            methods=["POST"],
        ),
        Route(
            "/api/environments/{key}/missions/spawn",
            _answering(missions("spawn")),
            methods=["POST"],
        ),
        Route(
            "/api/environments/{key}/missions/cancel",
            _answering(missions("cancel")),
            methods=["POST"],
        ),
        Route(
            "/api/environments/{key}/missions/log",
            _answering(missions("log")),
            methods=["POST"],
        ),
        Route(
            "/api/environments/{key}/missions/board",
            _answering(missions("board")),
            methods=["POST"],
        ),
        Route(
            "/api/environments/{key}/missions/evidence",
            _answering(missions("evidence")),
            methods=["POST"],
        ),
        Route(
            "/api/environments/{key}/missions/diff",
            _answering(reviews("diff")),
            methods=["POST"],
        ),
        Route(
            "/api/environments/{key}/missions/merge",
            _answering(reviews("merge")),
            methods=["POST"],
        ),
        Route("/api/environments/{key}/missions/land", _answering(land), methods=["POST"]),
        WebSocketRoute("/channel", channel),
    ]
    middleware = []
    if origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=sorted(origins),
                allow_methods=["GET", "POST"],
                allow_headers=["authorization", "content-type"],
                max_age=600,
            )
        )
    return Starlette(routes=routes, middleware=middleware)


async def _serve_channel(
    service: EnvironmentService, websocket: WebSocket, channel_id: str
) -> None:
    """The hello within the bound, then frames until the socket closes."""
    try:
        first = await asyncio.wait_for(websocket.receive(), service.hello_bound_ms / 1000)
    except TimeoutError:
        await service.channel_timeout(channel_id)
        return
    if first["type"] == "websocket.disconnect":
        return
    if not await service.channel_hello(channel_id, first.get("text")):
        return
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is not None:
                await service.channel_frame(channel_id, text)
