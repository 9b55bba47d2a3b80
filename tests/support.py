"""Helpers shared by the core suite; they work on CPython and inside Pyodide.

:func:`run` drives a coroutine to completion. Over the in-memory adapters no core coroutine
ever waits on real I/O, so it completes without an event loop — which is what lets the same
suite run inside Pyodide, where an event loop cannot be blocked on.
"""

from __future__ import annotations

import json
from collections.abc import Coroutine
from typing import Any, TypeVar

from core.audit import AuditLog
from core.host.context import HostContext, HostServices
from core.host.operations import Operation
from core.host.pipeline import Host
from core.host.registry import OPERATIONS
from core.memory.adapters import (
    FixedClock,
    MemoryAuditKey,
    MemoryAuditSink,
    MemoryFolderProjects,
    MemoryHostState,
    MemoryProjectRoots,
    MemoryWatcher,
    SeededRandomness,
)

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion without an event loop; fail if it waits on real I/O."""
    try:
        while True:
            yielded = coro.send(None)
            if yielded is not None:
                coro.close()
                raise AssertionError(f"coroutine waited on real I/O: {yielded!r}")
    except StopIteration as stop:
        return stop.value


class HostHarness:
    """A host over in-memory ports, plus helpers to call it like the page does.

    ``extra`` are operations a test adds to the built-in ones (a test-only handler);
    ``watcher`` watches the projects' folders, so the host keeps the listings it shows
    (:mod:`core.projects.listing_cache`; none by default)."""

    def __init__(
        self, extra: tuple[Operation, ...] = (), watcher: MemoryWatcher | None = None
    ) -> None:
        self.clock = FixedClock()
        self.sink = MemoryAuditSink()
        self.roots = MemoryProjectRoots()
        self.state = MemoryHostState()
        self.folders = MemoryFolderProjects()
        self.audit_key = MemoryAuditKey()
        self.ctx = HostContext(
            roots=self.roots,
            state=self.state,
            audit=AuditLog(self.sink, self.clock, key=self.audit_key, state=self.state),
            clock=self.clock,
            random=SeededRandomness(),
            services=HostServices(folders=self.folders, folder_watcher=watcher),
        )
        self.host = Host(self.ctx, OPERATIONS.extended(*extra))
        self._n = 0

    def raw(
        self, text: str | bytes, body: bytes | None = None
    ) -> tuple[dict[str, Any], bytes | None]:
        """Send a raw message text; return the parsed answer and its body."""
        answer, out = run(self.host.handle(text, body))
        return json.loads(answer), out

    def attach(self, op: str, attachment: object, **args: Any) -> dict[str, Any]:
        """Send ``op`` with an attachment (e.g. a folder handle); return the parsed answer."""
        self._n += 1
        msg = json.dumps({"v": 1, "id": f"t{self._n}", "op": op, "args": args})
        answer, _, _ = run(self.host.handle_full(msg, None, attachment))
        return json.loads(answer)

    def call(
        self, op: str, body: bytes | None = None, origin: str | None = None, **args: Any
    ) -> tuple[dict[str, Any], bytes | None]:
        """Send ``op`` with ``args``; return the parsed answer and its body."""
        self._n += 1
        msg: dict[str, Any] = {"v": 1, "id": f"t{self._n}", "op": op, "args": args}
        if origin is not None:
            msg["origin"] = origin
        return self.raw(json.dumps(msg), body)

    def ok(self, op: str, body: bytes | None = None, **args: Any) -> dict[str, Any]:
        """Call ``op`` and return its result, failing the test on a refusal."""
        answer, _ = self.call(op, body, **args)
        assert answer["ok"], answer
        return answer["result"]

    def refused(self, op: str, body: bytes | None = None, **args: Any) -> dict[str, Any]:
        """Call ``op`` and return its refusal, failing the test on success."""
        answer, _ = self.call(op, body, **args)
        assert not answer["ok"], answer
        return answer["refusal"]
