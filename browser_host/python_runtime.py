"""The person's Python runtime over a ``MessagePort`` (:class:`core.ports.PythonRuntime`,
issue 32; docs/python.md).

The page makes ``<iframe src="runtime/python.html">`` sandboxed ``allow-scripts`` (by the
attribute, or offline by the header CSP the service worker sends; docs/python.md, "Offline") —
an opaque origin whose own CSP is ``default-src 'none'; connect-src 'none'`` with its one
script pinned by hash — connects a ``MessageChannel`` to it and hands this host one end
(``python.connect``).
The frame runs a dedicated worker with a Pyodide of its own; it fetches nothing: this host
fetches the pinned runtime files of its own site (each checked by the browser against the
sha256 of ``site-manifest.json``, as the host's own boot does) and sends them over the port.
The frame keeps them, so a restart needs no second fetch.

Protocol (``runtime/python-frame.js`` is the other side)::

    frame → host  {type: "ready", v: 1}                       the frame listens
    host → frame  {type: "boot", files: {name: ArrayBuffer}, wheels: {file: ArrayBuffer},
                   atBoot: [file]}     start the runtime worker; it installs the atBoot wheels
                                       (micropip), keeps the others (the offline set) for runs
    frame → host  {type: "up", ms} | {type: "down", message}  it started (ms) or could not
    host → frame  {type: "run", id, mode: "file"|"eval", path?, code?, files: [[path, buffer]],
                   load: [file]}      wheels of the offline set to install first (once each)
    frame → host  {type: "out", id, chunks: [[stream, text], ...]}   while it runs (≤ 20/s)
    frame → host  {type: "ask", id, prompt}       input() waits for a line (its stack suspended)
    host → frame  {type: "answer", id, text}      the person's line
    host → frame  {type: "complete", id, text}    completions in the console's namespace
    frame → host  {type: "completed", id, matches: [text]}   (empty while a run goes)
    frame → host  {type: "done", id, exit, ms, present: [path], changed: [[path, buffer]],
                   dropped, stopped?, error?}
    host → frame  {type: "restart"}     terminate the worker now (a run going is answered
                                        done with stopped: true) and start a new one

Everything the frame sends is checked here again (types, sizes, ids) before a byte is copied
into Python: the runtime runs hostile code and the frame is only its fence.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

import js
from js import Object
from pyodide.ffi import create_proxy, to_js

from core.json_bound import parse_json
from core.refusals import Code, Refused
from core.tools.python_requirements import parse_offline_set
from core.tools.python_run import MAX_CHANGED_BYTES, MAX_OUTPUT_BYTES, RunJob, RunReport

__all__ = ["RUNTIME_FILES", "PortPythonRuntime"]

RUNTIME_FILES = (
    "pyodide.asm.mjs",
    "pyodide.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
"""The pinned files of ``pyodide/`` the runtime worker needs (no host wheel, no snapshot)."""

RUNTIME_WHEELS = "runtime/wheels/"
"""The runtime's own pinned wheels (``micropip``; ``runtime_wheels`` of worker/wheels.lock.json):
every ``*.whl`` the site manifest lists here is fetched with its pin and installed by the
runtime at boot (issue 32) — but those of the offline set (:data:`OFFLINE_SET`), which a run
installs when the project's requirements name them."""
OFFLINE_SET = RUNTIME_WHEELS + "offline-set.json"
"""The offline set's index, written by the build (``worker/sitebuild/site.py``)."""

READY_WAIT_S = 5.0
BOOT_WAIT_S = 90.0
STOP_WAIT_S = 2.0
COMPLETE_WAIT_S = 2.0
MAX_PATHS = 20_000


def _obj(**kwargs: Any) -> Any:
    return to_js(kwargs, dict_converter=Object.fromEntries)


def _sri(hex_digest: str) -> str:
    import base64

    return "sha256-" + base64.b64encode(bytes.fromhex(hex_digest)).decode()


class PortPythonRuntime:
    """:class:`core.ports.PythonRuntime` talking to the runtime frame over ``port``."""

    def __init__(self, port: Any, site: str | None = None) -> None:
        self._port = port
        self._site = site or js.URL.new("../", js.location.href).href
        self._ready = asyncio.Event()
        self._up = asyncio.Event()
        self._down: str | None = None
        self._booting: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)
        self._current: dict[str, Any] | None = None
        self._completing: dict[str, asyncio.Future[list[str]]] = {}
        self._offline: str | None = None
        self._listener = create_proxy(self._message)
        port.onmessage = self._listener
        port.start()

    # ---- the frame's messages ----------------------------------------------------------

    def _message(self, event: Any) -> None:
        data = event.data
        kind = getattr(data, "type", None)
        if kind == "ready":
            self._ready.set()
        elif kind == "up":
            self._down = None
            self._up.set()
        elif kind == "down":
            message = getattr(data, "message", None)
            self._down = message[:300] if isinstance(message, str) else "it did not start"
            self._up.clear()
            self._up.set()  # wakes the waiter, which reads _down
        elif kind == "out":
            self._output(data)
        elif kind == "completed":
            waiter = self._completing.pop(str(getattr(data, "id", "")), None)
            matches = getattr(data, "matches", None)
            if waiter is not None and not waiter.done():
                ok = matches is not None and isinstance(getattr(matches, "length", None), int)
                found = matches.to_py()[:200] if ok and matches is not None else []
                waiter.set_result([m[:200] for m in found if isinstance(m, str)])
        elif kind == "ask":
            current = self._current
            prompt = getattr(data, "prompt", "")
            if current is not None and getattr(data, "id", None) == current["id"]:
                current["on_output"]("prompt", prompt[:1000] if isinstance(prompt, str) else "")
        elif kind == "done":
            current = self._current
            if (
                current is not None
                and getattr(data, "id", None) == current["id"]
                and not current["done"].done()
            ):
                current["done"].set_result(data)

    def _output(self, data: Any) -> None:
        current = self._current
        if current is None or getattr(data, "id", None) != current["id"]:
            return
        chunks = getattr(data, "chunks", None)
        if chunks is None or not isinstance(getattr(chunks, "length", None), int):
            return
        for i in range(min(chunks.length, 256)):
            pair = chunks[i]
            stream, text = pair[0], pair[1]
            if stream not in ("stdout", "stderr") or not isinstance(text, str):
                continue
            room = MAX_OUTPUT_BYTES - current["sent"]
            if room <= 0:
                current["dropped"] += len(text)
                continue
            text = text[:room]
            current["sent"] += len(text)
            current["on_output"](stream, text)

    # ---- starting ----------------------------------------------------------------------

    async def _files(self) -> Any:
        """The runtime's files from this site, each checked by the browser against its pin:
        ``(files, wheels)``, each a JS object of name → ArrayBuffer."""
        response = await js.fetch(js.URL.new("site-manifest.json", self._site).href)
        if not response.ok:
            raise Refused(Code.SANDBOX_UNAVAILABLE, "The site's manifest could not be read.")
        manifest = parse_json(
            await response.text(), code=Code.SANDBOX_UNAVAILABLE, what="site-manifest.json"
        )
        pins = {f["path"]: f["sha256"] for f in manifest.get("files", [])}
        files = Object.new()
        for name in RUNTIME_FILES:
            pin = pins.get(f"pyodide/{name}")
            if pin is None:
                raise Refused(Code.SANDBOX_UNAVAILABLE, f"pyodide/{name} is not in this build.")
            url = js.URL.new(f"pyodide/{name}", self._site).href
            try:
                got = await js.fetch(url, _obj(integrity=_sri(pin)))
            except Exception:
                raise Refused(
                    Code.SANDBOX_UNAVAILABLE,
                    f"pyodide/{name} could not be fetched or failed its integrity check.",
                ) from None
            if not got.ok:
                raise Refused(Code.SANDBOX_UNAVAILABLE, f"pyodide/{name}: HTTP {got.status}.")
            setattr(files, name, await got.arrayBuffer())  # stays a JS buffer: never copied
        return files, await self._wheels(pins)

    async def _pinned_text(self, path: str, pin: str) -> str:
        try:
            got = await js.fetch(js.URL.new(path, self._site).href, _obj(integrity=_sri(pin)))
        except Exception:
            raise Refused(
                Code.SANDBOX_UNAVAILABLE,
                f"{path} could not be fetched or failed its integrity check.",
            ) from None
        if not got.ok:
            raise Refused(Code.SANDBOX_UNAVAILABLE, f"{path}: HTTP {got.status}.")
        return str(await got.text())

    async def _wheels(self, pins: dict[str, str]) -> Any:
        """The runtime's own wheels (:data:`RUNTIME_WHEELS`), each checked against its pin;
        reads the offline set's index too (kept for :meth:`offline_set`)."""
        pin = pins.get(OFFLINE_SET)
        if pin is not None:
            text = await self._pinned_text(OFFLINE_SET, pin)
            parse_offline_set(text)  # a broken index is a broken site: refused here, at boot
            self._offline = text
        wheels = Object.new()
        for path, pin in sorted(pins.items()):
            name = path.removeprefix(RUNTIME_WHEELS)
            if name == path or "/" in name or not name.endswith(".whl"):
                continue
            try:
                got = await js.fetch(js.URL.new(path, self._site).href, _obj(integrity=_sri(pin)))
            except Exception:
                raise Refused(
                    Code.SANDBOX_UNAVAILABLE,
                    f"{path} could not be fetched or failed its integrity check.",
                ) from None
            if not got.ok:
                raise Refused(Code.SANDBOX_UNAVAILABLE, f"{path}: HTTP {got.status}.")
            setattr(wheels, name, await got.arrayBuffer())
        return wheels

    async def _boot(self) -> None:
        try:
            await asyncio.wait_for(self._ready.wait(), READY_WAIT_S)
        except TimeoutError:
            raise Refused(
                Code.SANDBOX_UNAVAILABLE, "The Python runtime's frame never loaded."
            ) from None
        files, wheels = await self._files()
        later = (
            set()
            if self._offline is None
            else {p.file for p in parse_offline_set(self._offline).values()}
        )
        at_boot = [name for name in js.Object.keys(wheels).to_py() if name not in later]
        self._up.clear()
        self._port.postMessage(_obj(type="boot", files=files, wheels=wheels, atBoot=to_js(at_boot)))

    async def _ensure_up(self) -> None:
        if self._up.is_set() and self._down is None:
            return
        failed = (
            self._booting is not None
            and self._booting.done()
            and (
                self._down is not None
                or self._booting.cancelled()
                or self._booting.exception() is not None
            )
        )
        if self._booting is None or failed:  # a boot that failed is tried again
            self._down = None
            self._booting = asyncio.ensure_future(self._boot())
        await self._booting
        try:
            await asyncio.wait_for(self._up.wait(), BOOT_WAIT_S)
        except TimeoutError:
            raise Refused(
                Code.SANDBOX_UNAVAILABLE, "The Python runtime did not start in time."
            ) from None
        if self._down is not None:
            raise Refused(
                Code.SANDBOX_UNAVAILABLE, f"The Python runtime did not start: {self._down}"
            )

    # ---- the port ----------------------------------------------------------------------

    async def run(
        self, job: object, on_output: Callable[[str, str], None], *, limit_s: float
    ) -> RunReport:
        """See :meth:`core.ports.PythonRuntime.run`."""
        assert isinstance(job, RunJob)
        if self._current is not None:
            raise Refused(
                Code.SANDBOX_UNAVAILABLE,
                "Python is already running something; stop it first (Stop).",
            )
        run_id = f"r{next(self._ids)}"
        current: dict[str, Any] = {
            "id": run_id,
            "done": asyncio.get_running_loop().create_future(),
            "on_output": on_output,
            "sent": 0,
            "dropped": 0,
        }
        self._current = current
        try:
            up = asyncio.ensure_future(self._ensure_up())
            await asyncio.wait([up, current["done"]], return_when=asyncio.FIRST_COMPLETED)
            if current["done"].done():  # stopped while Python was loading: nothing ran
                up.add_done_callback(lambda t: t.cancelled() or t.exception())
                return RunReport(None, 0, stopped=True)
            await up  # its refusal, when Python could not start
            buffers = [to_js(data).buffer for _, data in job.files]
            pairs = to_js([[path, buf] for (path, _), buf in zip(job.files, buffers, strict=True)])
            fields: dict[str, Any] = {"type": "run", "id": run_id, "mode": job.mode}
            fields["files"] = pairs
            if job.path is not None:
                fields["path"] = job.path
            if job.code is not None:
                fields["code"] = job.code
            fields["load"] = to_js(list(job.load))
            self._port.postMessage(_obj(**fields), to_js(buffers))
            try:
                answer = await asyncio.wait_for(asyncio.shield(current["done"]), limit_s)
            except TimeoutError:
                self._restart()
                return RunReport(None, int(limit_s * 1000), timed_out=True)
            return self._report(answer, current)
        finally:
            self._current = None

    def _report(self, answer: Any, current: dict[str, Any]) -> RunReport:
        ms = getattr(answer, "ms", 0)
        ms = int(ms) if isinstance(ms, int | float) and ms >= 0 else 0
        dropped = getattr(answer, "dropped", 0)
        dropped = (int(dropped) if isinstance(dropped, int | float) else 0) + current["dropped"]
        if getattr(answer, "stopped", False) is True:
            return RunReport(None, ms, stopped=True, output_dropped=dropped)
        error = getattr(answer, "error", None)
        if isinstance(error, str):
            current["on_output"]("stderr", error[:2000] + "\n")
        exit_status = getattr(answer, "exit", None)
        if not isinstance(exit_status, int):
            exit_status = 1
        present: list[str] | None = None  # not said: nothing is applied (core.tools.python_run)
        raw = getattr(answer, "present", None)
        if raw is not None and isinstance(getattr(raw, "length", None), int):
            if raw.length > MAX_PATHS:
                current["on_output"](
                    "stderr", f"The run left more than {MAX_PATHS} files: none was applied.\n"
                )
                return RunReport(exit_status, ms, output_dropped=dropped)
            present = [p for p in raw.to_py() if isinstance(p, str)]
        changed: list[tuple[str, bytes]] = []
        total = 0
        raw = getattr(answer, "changed", None)
        if raw is not None and isinstance(getattr(raw, "length", None), int):
            for i in range(min(raw.length, MAX_PATHS)):
                pair = raw[i]
                path, buf = pair[0], pair[1]
                size = getattr(buf, "byteLength", None)
                if not isinstance(path, str) or not isinstance(size, int):
                    continue
                total += size
                if total > MAX_CHANGED_BYTES * 2:  # past what core would apply: not copied
                    continue
                changed.append((path, js.Uint8Array.new(buf).to_bytes()))
        return RunReport(exit_status, ms, present=present, changed=changed, output_dropped=dropped)

    def _restart(self) -> None:
        self._up.clear()
        self._port.postMessage(_obj(type="restart"))

    async def complete(self, text: str) -> list[str]:
        """See :meth:`core.ports.PythonRuntime.complete`."""
        if self._current is not None or not self._up.is_set() or self._down is not None:
            return []
        request_id = f"c{next(self._ids)}"
        waiter: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        self._completing[request_id] = waiter
        self._port.postMessage(_obj(type="complete", id=request_id, text=text))
        try:
            return await asyncio.wait_for(waiter, COMPLETE_WAIT_S)
        except TimeoutError:
            return []
        finally:
            self._completing.pop(request_id, None)

    def answer(self, text: str) -> bool:
        """See :meth:`core.ports.PythonRuntime.answer`."""
        current = self._current
        if current is None:
            return False
        self._port.postMessage(_obj(type="answer", id=current["id"], text=text))
        return True

    async def offline_set(self) -> str | None:
        """See :meth:`core.ports.PythonRuntime.offline_set`."""
        await self._ensure_up()
        return self._offline

    def warm(self) -> None:
        """See :meth:`core.ports.PythonRuntime.warm`."""
        if self._up.is_set() and self._down is None:
            return
        task = asyncio.ensure_future(self._ensure_up())
        task.add_done_callback(lambda t: t.exception())  # said by the next run, not here

    def abandon(self) -> bool:
        """See :meth:`core.ports.PythonRuntime.abandon`: the frame's tab is gone, so its
        port is closed and the run in progress ends stopped without waiting for it."""
        current = self._current
        self._port.close()
        self._down = "its tab closed"
        if current is None or current["done"].done():
            return False
        current["done"].set_result(_obj(type="done", id=current["id"], stopped=True))
        return True

    async def stop(self) -> bool:
        """See :meth:`core.ports.PythonRuntime.stop`."""
        current = self._current
        self._restart()
        if current is None:
            return False
        try:
            await asyncio.wait_for(asyncio.shield(current["done"]), STOP_WAIT_S)
        except TimeoutError:
            if not current["done"].done():
                current["done"].set_result(_obj(type="done", id=current["id"], stopped=True))
        return True
