"""The plugin sandbox over a ``MessagePort`` (:class:`core.ports.Sandbox`, SPEC §7, §8), and the
site's tool modules (:class:`core.ports.ModuleStore`).

The page makes ``<iframe sandbox="allow-scripts" src="tools/sandbox.html">`` (opaque origin;
the document's own CSP is ``default-src 'none'; connect-src 'none'`` with its one script
pinned by hash), connects a ``MessageChannel`` to it and hands this host one end; from then
on the host talks to the sandbox directly (protocol in ``wasm_tools/sandbox.js``). Every module
it runs — create-asset and every plugin — follows the Extism PDK ABI (docs/plugins.md): the
host sends the module's bytes, the export to call and the input bytes, and gets bytes or a
refusal code back; a sandbox that does not answer within the run's limit plus a margin is
``tool-timeout`` here too.

:meth:`PortSandbox.run` is the port core calls for create-asset (its export ``create``);
:meth:`PortSandbox.call` is the general run a plugin call needs (any export, a memory cap, the
plugin's config).

The module comes from the site (``tools/create_asset.wasm``); its pin is the sha256 committed
in ``wasm_tools/create_asset.wasm.sha256``, shipped inside this wheel — core compares the two
before anything runs.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from typing import Any

import js
from js import Object, Uint8Array
from pyodide.ffi import create_proxy, to_js

from core.refusals import Code, Refused
from core.tools.asset_check import output_too_large, sandbox_refusal

__all__ = ["CREATE_ENTRY", "REASONS", "PortSandbox", "SiteModules"]

CREATE_ENTRY = "create"
"""The export of the create-asset module that :meth:`PortSandbox.run` calls."""

REASONS = frozenset(
    {
        "timeout",
        "module-invalid",
        "import-refused",
        "no-entry",
        "abi",
        "trap",
        "plugin-error",
        "memory",
        "output-too-large",
        "network",
        "worker",
    }
)
"""The finer tags a sandbox answer may carry beside its code (wasm_tools/pdk_host.js); kept
in a refusal's ``details["reason"]``, never shown as its code."""

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
        """See :meth:`core.ports.Sandbox.run`: export :data:`CREATE_ENTRY` of ``module`` on the
        argument bytes, the sandbox's default memory cap, no config."""
        return await self.call(module, CREATE_ENTRY, args, time_ms=time_ms, max_output=max_output)

    async def call(
        self,
        module: bytes,
        entry: str,
        input_bytes: bytes,
        *,
        time_ms: int,
        max_output: int,
        max_memory: int | None = None,
        config: Mapping[str, str] | None = None,
    ) -> bytes:
        """Call export ``entry`` of the PDK-ABI ``module`` once on ``input_bytes``; its output.

        ``time_ms`` (≤ 10,000), ``max_output`` and ``max_memory`` (bytes; linear memory and the
        host's kernel memory each, ≤ 64 MiB; ``None``: the sandbox's 16 MiB) bound the run;
        ``config`` is what the plugin's ``config_get`` sees. Refuses ``sandbox-unavailable``
        when the sandbox never said it was ready (within :data:`READY_WAIT_S`),
        ``tool-timeout``, ``tool-memory-exceeded``, ``tool-output-invalid`` or
        ``network-egress-refused`` as the sandbox answered (its reason in
        ``details["reason"]``). An answer over ``max_output`` bytes is refused by its
        ``byteLength``, before a byte is copied into the Wasm heap
        (:func:`core.tools.asset_check.output_too_large`).
        """
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
        wasm, data = to_js(module).buffer, to_js(input_bytes).buffer
        fields: dict[str, Any] = {
            "id": request_id,
            "wasm": wasm,
            "entry": entry,
            "input": data,
            "timeMs": time_ms,
            "maxOutputBytes": max_output,
        }
        if max_memory is not None:
            fields["maxMemoryBytes"] = max_memory
        if config:
            fields["config"] = _obj(**dict(config))
        self._port.postMessage(_obj(**fields), to_js([wasm, data]))
        try:
            answer = await asyncio.wait_for(future, time_ms / 1000 + MARGIN_S)
        except TimeoutError:
            self._waiting.pop(request_id, None)
            raise Refused(Code.TOOL_TIMEOUT, "The sandbox did not answer in time.") from None
        if getattr(answer, "ok", False) is not True:
            raise _refusal(answer)
        out = getattr(answer, "bytes", None)
        if out is None:
            raise Refused(Code.TOOL_OUTPUT_INVALID, "The sandbox answered without bytes.")
        size = getattr(out, "byteLength", None)  # read on the JS object: nothing copied yet
        if not isinstance(size, int):
            raise Refused(Code.TOOL_OUTPUT_INVALID, "The sandbox answered without bytes.")
        if size > max_output:
            raise output_too_large(size, max_output)
        output: bytes = Uint8Array.new(out).to_bytes()
        return output


def _refusal(answer: Any) -> Refused:
    """The refusal for a sandbox's ``{ok: false, code, reason, message}``: the code through
    :func:`core.tools.asset_check.sandbox_refusal` (a sandbox cannot choose any other), plus
    ``network-egress-refused`` for a plugin that asked for the network; a known reason kept
    in ``details``."""
    code, message = getattr(answer, "code", None), getattr(answer, "message", None)
    if code == Code.NETWORK_EGRESS_REFUSED.value:
        text = message[:300] if isinstance(message, str) and message else None
        refused = Refused(Code.NETWORK_EGRESS_REFUSED, text)
    else:
        refused = sandbox_refusal(code, message)
    reason = getattr(answer, "reason", None)
    if isinstance(reason, str) and reason in REASONS:
        refused.details = {"reason": reason}
    return refused


class SiteModules:
    """:class:`core.ports.ModuleStore`: ``tools/<name>.wasm`` of this site, pinned by the wheel."""

    def __init__(self, tools_url: str) -> None:
        self._base = tools_url

    async def load(self, name: str) -> tuple[bytes, str]:
        """See :meth:`core.ports.ModuleStore.load`."""
        from importlib import resources  # on first use, not at boot

        try:
            pin = resources.files("browser_host").joinpath(f"{name}.wasm.sha256").read_text()
        except FileNotFoundError:
            raise Refused(Code.SANDBOX_UNAVAILABLE, f"No pin for tool module {name}.") from None
        response = await js.fetch(js.URL.new(f"{name}.wasm", self._base).href)
        if not response.ok:
            raise Refused(Code.SANDBOX_UNAVAILABLE, f"tools/{name}.wasm: HTTP {response.status}.")
        data = (await response.arrayBuffer()).to_bytes()
        return data, pin.split()[0].strip()
