"""The create-asset sandbox over a ``MessagePort`` (:class:`core.ports.Sandbox`, SPEC §8), and
the site's tool modules (:class:`core.ports.ModuleStore`).

The page makes ``<iframe sandbox="allow-scripts" src="tools/sandbox.html">`` (opaque origin;
the document's own CSP is ``default-src 'none'; connect-src 'none'`` with its one script
pinned by hash), connects a ``MessageChannel`` to it and hands this host one end; from then
on the host talks to the sandbox directly (protocol in ``wasm_tools/sandbox.js``). The host
sends the module's bytes and the argument bytes and gets bytes or a refusal code back; a
sandbox that does not answer within the run's limit plus a margin is ``tool-timeout`` here
too.

The module comes from the site (``tools/create_asset.wasm``); its pin is the sha256 committed
in ``wasm_tools/create_asset.wasm.sha256``, shipped inside this wheel — core compares the two
before anything runs.
"""

from __future__ import annotations

import asyncio
import itertools
from importlib import resources
from typing import Any

import js
from js import Object, Uint8Array
from pyodide.ffi import create_proxy, to_js

from core.refusals import Code, Refused
from core.tools.asset_check import output_too_large, sandbox_refusal

__all__ = ["PortSandbox", "SiteModules"]

MARGIN_S = 2.0
READY_WAIT_S = 3.0
"""How long a run waits for the sandbox's ``ready`` before refusing ``sandbox-unavailable``:
a frame that never loaded (offline, Chromium's error page instead of tools/sandbox.html)
never says it, and would otherwise look like a tool past its time limit."""


def _obj(**kwargs: Any) -> Any:
    return to_js(kwargs, dict_converter=Object.fromEntries)


class PortSandbox:
    """:class:`core.ports.Sandbox` talking to the sandbox iframe over ``port``."""

    def __init__(self, port: Any) -> None:
        self._port = port
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._ready = asyncio.Event()
        self._listener = create_proxy(self._message)
        port.onmessage = self._listener
        port.start()

    def _message(self, event: Any) -> None:
        data = event.data
        if getattr(data, "type", None) == "ready":
            self._ready.set()
            return
        future = self._waiting.pop(str(getattr(data, "id", "")), None)
        if future is not None and not future.done():
            future.set_result(data)

    async def run(self, module: bytes, args: bytes, *, time_ms: int, max_output: int) -> bytes:
        """See :meth:`core.ports.Sandbox.run`; ``sandbox-unavailable`` when the sandbox never
        said it was ready (within :data:`READY_WAIT_S`). An answer over ``max_output`` bytes
        is refused by its ``byteLength``, before a byte is copied into the Wasm heap
        (:func:`core.tools.asset_check.output_too_large`)."""
        try:
            await asyncio.wait_for(self._ready.wait(), READY_WAIT_S)
        except TimeoutError:
            raise Refused(
                Code.SANDBOX_UNAVAILABLE,
                "The tool sandbox never started (offline, its frame cannot load).",
            ) from None
        request_id = f"s{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        wasm, argv = to_js(module).buffer, to_js(args).buffer
        self._port.postMessage(
            _obj(id=request_id, wasm=wasm, args=argv, timeMs=time_ms, maxOutputBytes=max_output),
            to_js([wasm, argv]),
        )
        try:
            answer = await asyncio.wait_for(future, time_ms / 1000 + MARGIN_S)
        except TimeoutError:
            self._waiting.pop(request_id, None)
            raise Refused(Code.TOOL_TIMEOUT, "The sandbox did not answer in time.") from None
        if getattr(answer, "ok", False) is not True:
            raise sandbox_refusal(getattr(answer, "code", None), getattr(answer, "message", None))
        out = getattr(answer, "bytes", None)
        if out is None:
            raise Refused(Code.TOOL_OUTPUT_INVALID, "The sandbox answered without bytes.")
        size = getattr(out, "byteLength", None)  # read on the JS object: nothing copied yet
        if not isinstance(size, int):
            raise Refused(Code.TOOL_OUTPUT_INVALID, "The sandbox answered without bytes.")
        if size > max_output:
            raise output_too_large(size, max_output)
        return Uint8Array.new(out).to_bytes()


class SiteModules:
    """:class:`core.ports.ModuleStore`: ``tools/<name>.wasm`` of this site, pinned by the wheel."""

    def __init__(self, tools_url: str) -> None:
        self._base = tools_url

    async def load(self, name: str) -> tuple[bytes, str]:
        """See :meth:`core.ports.ModuleStore.load`."""
        try:
            pin = resources.files("browser_host").joinpath(f"{name}.wasm.sha256").read_text()
        except FileNotFoundError:
            raise Refused(Code.SANDBOX_UNAVAILABLE, f"No pin for tool module {name}.") from None
        response = await js.fetch(js.URL.new(f"{name}.wasm", self._base).href)
        if not response.ok:
            raise Refused(Code.SANDBOX_UNAVAILABLE, f"tools/{name}.wasm: HTTP {response.status}.")
        data = (await response.arrayBuffer()).to_bytes()
        return data, pin.split()[0].strip()
