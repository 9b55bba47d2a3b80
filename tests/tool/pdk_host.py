"""A host of the Extism PDK ABI for CPython tests, over wasmtime, with the browser sandbox's
semantics (wasm_tools/pdk_host.js; docs/plugins.md "The ABI").

Same rules, checked the same way: only the ``extism:host/env`` kernel functions with their
published signatures are importable (anything else is refused before instantiation); every
memory's declared maximum is rewritten to at most the cap (the same bytes as the JS host: a
test compares them); host ("kernel") memory is one capped buffer with the same allocator, so
handles are the same numbers; ``http_request`` fails the call; no WASI. The time limit is an
epoch deadline (the browser terminates the run worker instead). Answers carry the same
``code`` and ``reason`` as the sandbox's.

Run a plugin by hand: ``python -m tests.tool.pdk_host MODULE.wasm ENTRY < input``.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import wasmtime

__all__ = ["PAGE", "SIGNATURES", "Answer", "Failure", "inspect", "run"]

PAGE = 65536
ENV = "extism:host/env"
I32, I64 = 0x7F, 0x7E
MAX_ERROR_CHARS = 1000
MAX_VAR_BYTES = 1 << 20
DEFAULT_MEMORY = 16 << 20
DEFAULT_OUTPUT = 4 << 20
DEFAULT_TIME_MS = 3000

#: The kernel functions provided, with their published signatures (params, results).
SIGNATURES: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "input_length": ((), (I64,)),
    "input_load_u8": ((I64,), (I32,)),
    "input_load_u64": ((I64,), (I64,)),
    "input_offset": ((), (I64,)),
    "alloc": ((I64,), (I64,)),
    "free": ((I64,), ()),
    "length": ((I64,), (I64,)),
    "length_unsafe": ((I64,), (I64,)),
    "load_u8": ((I64,), (I32,)),
    "load_u64": ((I64,), (I64,)),
    "store_u8": ((I64, I32), ()),
    "store_u64": ((I64, I64), ()),
    "output_set": ((I64, I64), ()),
    "error_set": ((I64,), ()),
    "config_get": ((I64,), (I64,)),
    "var_get": ((I64,), (I64,)),
    "var_set": ((I64, I64), ()),
    "http_request": ((I64, I64), (I64,)),
    "http_status_code": ((), (I32,)),
    "http_headers": ((), (I64,)),
    "log_info": ((I64,), ()),
    "log_debug": ((I64,), ()),
    "log_warn": ((I64,), ()),
    "log_error": ((I64,), ()),
    "log_trace": ((I64,), ()),
    "get_log_level": ((), (I32,)),
}


@dataclass(frozen=True, slots=True)
class Answer:
    """One call's answer: ``output`` when ``ok``; else the sandbox's ``code`` and ``reason``,
    a message, and the export's return code ``rc`` when it returned one."""

    ok: bool
    output: bytes = b""
    code: str | None = None
    reason: str | None = None
    message: str = ""
    rc: int | None = None


class Failure(Exception):
    """A named failure of a call (``code`` from core/refusals.py, ``reason`` the finer tag)."""

    def __init__(self, code: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


def _invalid(message: str) -> Failure:
    return Failure("tool-output-invalid", "module-invalid", message)


def _enc(n: int) -> bytes:
    out = bytearray()
    while True:
        x, n = n & 0x7F, n >> 7
        out.append(x | (0x80 if n else 0))
        if not n:
            return bytes(out)


@dataclass(frozen=True, slots=True)
class Inspected:
    """A module's imports ``(module, name, kind, (params, results) | None)``, its memories
    ``(initial, max after the cap, declared max | None)`` and its bytes with maxima capped."""

    bytes: bytes
    imports: tuple[tuple[str, str, int, tuple | None], ...]
    memories: tuple[tuple[int, int, int | None], ...]


def inspect(data: bytes, cap_pages: int) -> Inspected:
    """Read the module's sections and rewrite its memory section (pdk_host.js ``inspect``)."""
    b = bytes(data)
    if len(b) < 8 or b[:8] != b"\0asm\1\0\0\0":
        raise _invalid("not a WebAssembly module (version 1)")
    pos = 8

    def byte() -> int:
        nonlocal pos
        if pos >= len(b):
            raise _invalid("the module is truncated")
        pos += 1
        return b[pos - 1]

    def leb() -> int:
        value = 0
        for i in range(10):
            x = byte()
            value |= (x & 0x7F) << (7 * i)
            if not x & 0x80:
                if value > 2**53 - 1:
                    raise _invalid("a number is too large")
                return value
        raise _invalid("a LEB128 number is too long")

    def name() -> str:
        nonlocal pos
        n = leb()
        if pos + n > len(b):
            raise _invalid("a name runs past the end")
        try:
            text = b[pos : pos + n].decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid("a name is not UTF-8") from None
        pos += n
        return text

    types: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    imports: list[tuple[str, str, int, tuple | None]] = []
    memories: list[tuple[int, int, int | None]] = []
    rewritten: tuple[int, int, bytes] | None = None
    while pos < len(b):
        section_start = pos
        section = byte()
        size = leb()
        end = pos + size
        if end > len(b):
            raise _invalid("a section runs past the end")
        if section == 1:
            for _ in range(leb()):
                if byte() != 0x60:
                    raise _invalid("only plain function types are supported")
                params = tuple(byte() for _ in range(leb()))
                results = tuple(byte() for _ in range(leb()))
                types.append((params, results))
        elif section == 2:
            for _ in range(leb()):
                module, field, kind = name(), name(), byte()
                if kind != 0:
                    imports.append((module, field, kind, None))
                    break
                index = leb()
                if index >= len(types):
                    raise _invalid("an import names an unknown type")
                imports.append((module, field, kind, types[index]))
        elif section == 5:
            count = leb()
            body = bytearray(_enc(count))
            for _ in range(count):
                flags = leb()
                if flags & ~1:
                    raise _invalid("shared, 64-bit and custom-page memories are not supported")
                initial = leb()
                declared = leb() if flags & 1 else None
                if initial > cap_pages:
                    raise Failure(
                        "tool-memory-exceeded",
                        "memory",
                        f"the module starts with {initial * PAGE} bytes of memory; "
                        f"the cap is {cap_pages * PAGE}",
                    )
                top = cap_pages if declared is None else min(declared, cap_pages)
                memories.append((initial, top, declared))
                body += b"\x01" + _enc(initial) + _enc(top)
            if pos != end:
                raise _invalid("the memory section has trailing bytes")
            rewritten = (section_start, end, bytes(body))
        pos = end
    out = b
    if rewritten is not None:
        start, end, body = rewritten
        out = b[:start] + b"\x05" + _enc(len(body)) + body + b[end:]
    return Inspected(out, tuple(imports), tuple(memories))


def _check_imports(found: Inspected) -> None:
    for module, field, kind, signature in found.imports:
        where = f"{module}.{field}"
        expected = SIGNATURES.get(field) if module == ENV else None
        if kind != 0 or expected is None:
            raise Failure(
                "tool-output-invalid",
                "import-refused",
                f"the module imports {where}; only the extism:host/env kernel functions are "
                "provided",
            )
        if signature != expected:
            raise Failure(
                "tool-output-invalid",
                "import-refused",
                f"the module imports {where} with another signature than the kernel's",
            )


class _Trap(Exception):
    """Raised inside a host function: the call ends (the failure is in ``Kernel.failure``)."""


class Kernel:
    """Host memory and the per-call state of one call (pdk_host.js ``makeKernel``)."""

    def __init__(
        self, input_bytes: bytes, config: dict[str, str], cap: int, max_output: int
    ) -> None:
        self.cap, self.max_output, self.config = cap, max_output, config
        self.mem = bytearray(8)
        self.top = 8
        self.blocks: dict[int, list] = {}  # start -> [size, used, free]
        self.order: list[int] = []
        self.vars: dict[str, bytes] = {}
        self.var_bytes = 0
        self.output = b""
        self.error: str | None = None
        self.failure: Failure | None = None
        self.cap_hit = False
        if len(input_bytes) + 8 > cap:
            raise Failure(
                "tool-memory-exceeded",
                "memory",
                f"the input ({len(input_bytes)} bytes) does not fit the host memory cap of {cap}",
            )
        self.input_at = self.store(input_bytes)
        self.input_len = len(input_bytes)

    # -- the allocator ------------------------------------------------------------------------

    def alloc(self, n: int) -> int:
        if n == 0:
            return 0
        for start in self.order:
            block = self.blocks[start]
            if block[2] and block[0] >= n:
                block[1], block[2] = n, False
                self.mem[start : start + block[0]] = bytes(block[0])
                return start
        start = (self.top + 7) & ~7
        if start + n > self.cap:
            self.cap_hit = True
            return 0
        if start + n > len(self.mem):
            self.mem.extend(bytes(start + n - len(self.mem)))
        self.top = start + n
        self.blocks[start] = [n, n, False]
        self.order.append(start)
        return start

    def release(self, start: int) -> None:
        block = self.blocks.get(start)
        if block is None or block[2]:
            return
        block[2] = True
        while self.order and self.blocks[self.order[-1]][2]:
            del self.blocks[self.order.pop()]
            self.top = self.order[-1] + self.blocks[self.order[-1]][0] if self.order else 8

    def store(self, data: bytes) -> int:
        at = self.alloc(len(data))
        if at:
            self.mem[at : at + len(data)] = data
        return at

    # -- checks -------------------------------------------------------------------------------

    def fail(self, failure: Failure) -> None:
        if self.failure is None:
            self.failure = failure
        raise _Trap(failure.message)

    def trap(self, message: str) -> None:
        self.fail(Failure("tool-output-invalid", "trap", message))

    def offset(self, h: int) -> int:
        h &= (1 << 64) - 1
        if h > 0xFFFFFFFF:
            self.trap("a handle is out of range")
        return h

    def inside(self, at: int, n: int) -> int:
        if at < 8 or at + n > self.top:
            self.trap(f"host memory {at}+{n} is outside 8..{self.top}")
        return at

    def active(self, h: int) -> list | None:
        h &= (1 << 64) - 1
        block = self.blocks.get(h) if 0 < h <= 0xFFFFFFFF else None
        return block if block is not None and not block[2] else None

    def block_bytes(self, h: int) -> bytes:
        block = self.active(h)
        if block is None:
            self.trap("not a live block handle")
        h &= (1 << 64) - 1
        return bytes(self.mem[h : h + block[1]])

    # -- the kernel functions -----------------------------------------------------------------

    def functions(self) -> dict:
        u64 = (1 << 64) - 1
        text = lambda data: data.decode("utf-8", "replace")  # noqa: E731

        def input_load_u8(at: int) -> int:
            o = self.offset(at)
            if o >= self.input_len:
                self.trap("input read past its end")
            return self.mem[self.input_at + o]

        def input_load_u64(at: int) -> int:
            o = self.offset(at)
            if o + 8 > self.input_len:
                self.trap("input read past its end")
            return _signed(
                int.from_bytes(self.mem[self.input_at + o : self.input_at + o + 8], "little")
            )

        def alloc(n: int) -> int:
            n &= u64
            if n <= self.cap:
                return self.alloc(n)
            self.cap_hit = True
            return 0

        def free(h: int) -> None:
            if h & u64:
                self.release(self.offset(h))

        def length(h: int) -> int:
            block = self.active(h)
            return block[1] if block else 0

        def load_u8(h: int) -> int:
            return self.mem[self.inside(self.offset(h), 1)]

        def load_u64(h: int) -> int:
            at = self.inside(self.offset(h), 8)
            return _signed(int.from_bytes(self.mem[at : at + 8], "little"))

        def store_u8(h: int, v: int) -> None:
            self.mem[self.inside(self.offset(h), 1)] = v & 0xFF

        def store_u64(h: int, v: int) -> None:
            at = self.inside(self.offset(h), 8)
            self.mem[at : at + 8] = (v & u64).to_bytes(8, "little")

        def output_set(h: int, n: int) -> None:
            n &= u64
            if n == 0:
                self.output = b""
                return
            block = self.active(h)
            if block is None or n > block[1]:
                self.trap("output_set names no live block")
            if n > self.max_output:
                self.fail(
                    Failure(
                        "tool-output-invalid",
                        "output-too-large",
                        f"the plugin set {n} bytes of output; the cap is {self.max_output}",
                    )
                )
            h &= u64
            self.output = bytes(self.mem[h : h + n])

        def error_set(h: int) -> None:
            self.error = None if h & u64 == 0 else text(self.block_bytes(h))[:MAX_ERROR_CHARS]

        def config_get(h: int) -> int:
            key = text(self.block_bytes(h))
            return self.store(self.config[key].encode()) if key in self.config else 0

        def var_get(h: int) -> int:
            key = text(self.block_bytes(h))
            return self.store(self.vars[key]) if key in self.vars else 0

        def var_set(k: int, v: int) -> None:
            key = text(self.block_bytes(k))
            if key in self.vars:
                self.var_bytes -= len(key) + len(self.vars.pop(key))
            if v & u64 == 0:
                return
            value = self.block_bytes(v)
            if self.var_bytes + len(key) + len(value) > MAX_VAR_BYTES:
                self.fail(
                    Failure("tool-memory-exceeded", "memory", "the plugin's variables passed 1 MiB")
                )
            self.vars[key] = value
            self.var_bytes += len(key) + len(value)

        def http_request(req: int, body: int) -> int:
            self.fail(
                Failure(
                    "network-egress-refused",
                    "network",
                    "the plugin asked for an HTTP request; plugins get no network here",
                )
            )
            return 0

        def nothing(h: int) -> None:
            return None

        return {
            "input_length": lambda: self.input_len,
            "input_offset": lambda: self.input_at,
            "input_load_u8": input_load_u8,
            "input_load_u64": input_load_u64,
            "alloc": alloc,
            "free": free,
            "length": length,
            "length_unsafe": length,
            "load_u8": load_u8,
            "load_u64": load_u64,
            "store_u8": store_u8,
            "store_u64": store_u64,
            "output_set": output_set,
            "error_set": error_set,
            "config_get": config_get,
            "var_get": var_get,
            "var_set": var_set,
            "http_request": http_request,
            "http_status_code": lambda: 0,
            "http_headers": lambda: 0,
            "log_info": nothing,
            "log_debug": nothing,
            "log_warn": nothing,
            "log_error": nothing,
            "log_trace": nothing,
            "get_log_level": lambda: 0x7FFFFFFF,
        }


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _engine() -> wasmtime.Engine:
    config = wasmtime.Config()
    config.epoch_interruption = True
    return wasmtime.Engine(config)


_ENGINE = _engine()
_VALTYPES = {I32: wasmtime.ValType.i32(), I64: wasmtime.ValType.i64()}


@lru_cache(maxsize=64)
def _compile(data: bytes) -> wasmtime.Module:
    return wasmtime.Module(_ENGINE, data)


def _answer(failure: Failure, rc: int | None = None) -> Answer:
    return Answer(
        False, code=failure.code, reason=failure.reason, message=failure.message[:300], rc=rc
    )


def run(
    wasm: bytes,
    entry: str,
    input_bytes: bytes = b"",
    *,
    config: dict[str, str] | None = None,
    time_ms: int = DEFAULT_TIME_MS,
    max_memory: int = DEFAULT_MEMORY,
    max_output: int = DEFAULT_OUTPUT,
) -> Answer:
    """Run export ``entry`` of ``wasm`` once on ``input_bytes``; see the module docstring."""
    kernel: Kernel | None = None
    memory = None
    store = wasmtime.Store(_ENGINE)
    max_pages = 0

    def memory_full() -> bool:
        if kernel is not None and kernel.cap_hit:
            return True
        return memory is not None and memory.data_len(store) + PAGE > max_pages * PAGE

    timer = threading.Timer(time_ms / 1000, _ENGINE.increment_epoch)
    try:
        cap_pages = max_memory // PAGE
        found = inspect(wasm, cap_pages)
        max_pages = found.memories[0][1] if found.memories else cap_pages
        _check_imports(found)
        try:
            module = _compile(found.bytes)
        except wasmtime.WasmtimeError as exc:
            raise _invalid(f"the module does not compile: {exc}") from None
        exported = {e.name: e.type for e in module.exports}
        kind = exported.get(entry)
        if not isinstance(kind, wasmtime.FuncType):
            raise Failure(
                "tool-output-invalid", "no-entry", f"the module exports no function '{entry}'"
            )
        if list(kind.params) or list(kind.results) != [_VALTYPES[I32]]:
            raise Failure(
                "tool-output-invalid", "abi", f"'{entry}' is not a plugin function () -> i32"
            )
        kernel = Kernel(bytes(input_bytes), dict(config or {}), max_memory, max_output)
        functions = kernel.functions()
        store.set_limits(memory_size=max_memory)
        store.set_epoch_deadline(1)
        imports = []
        for _, field, _, _ in found.imports:
            params, results = SIGNATURES[field]
            kind = wasmtime.FuncType(
                [_VALTYPES[p] for p in params], [_VALTYPES[r] for r in results]
            )
            imports.append(wasmtime.Func(store, kind, _guarded(functions[field])))
        timer.start()
        try:
            instance = wasmtime.Instance(store, module, imports)
        except wasmtime.WasmtimeError as exc:
            raise _invalid(f"the module could not be instantiated: {exc}") from None
        exports = instance.exports(store)
        memory = exports.get("memory")
        if not isinstance(memory, wasmtime.Memory):
            memory = None
        if isinstance(exports.get("_initialize"), wasmtime.Func):
            exports["_initialize"](store)
        rc = exports[entry](store)
        if kernel.failure is not None:
            return _answer(kernel.failure)
        if rc != 0:
            said = kernel.error if kernel.error is not None else f"it returned {rc}"
            if memory_full():
                failure = Failure(
                    "tool-memory-exceeded", "memory", f"the plugin ran out of memory: {said}"
                )
            else:
                failure = Failure(
                    "tool-output-invalid", "plugin-error", f"the plugin failed: {said}"
                )
            return _answer(failure, rc)
        return Answer(True, output=kernel.output)
    except Failure as failure:
        return _answer(failure)
    except wasmtime.Trap as trap:
        if kernel is not None and kernel.failure is not None:
            return _answer(kernel.failure)
        if trap.trap_code == wasmtime.TrapCode.INTERRUPT:
            return _answer(Failure("tool-timeout", "timeout", f"stopped after {time_ms} ms"))
        if trap.trap_code == wasmtime.TrapCode.STACK_OVERFLOW or memory_full():
            return _answer(Failure("tool-memory-exceeded", "memory", trap.message))
        return _answer(Failure("tool-output-invalid", "trap", trap.message))
    except (wasmtime.WasmtimeError, _Trap) as exc:
        if kernel is not None and kernel.failure is not None:
            return _answer(kernel.failure)
        return _answer(Failure("tool-output-invalid", "trap", str(exc)))
    finally:
        timer.cancel()


def _guarded(function):
    def call(*args):
        try:
            return function(*args)
        except _Trap:
            raise
        except Exception as exc:  # a bug here must not look like the plugin's success
            raise _Trap(f"host function failed: {exc}") from exc

    return call


def main(argv: list[str]) -> int:
    """``python -m tests.tool.pdk_host MODULE ENTRY``: input on stdin, output on stdout."""
    if len(argv) != 2:
        print("usage: python -m tests.tool.pdk_host MODULE.wasm ENTRY < input", file=sys.stderr)
        return 2
    answer = run(Path(argv[0]).read_bytes(), argv[1], sys.stdin.buffer.read())
    if answer.ok:
        sys.stdout.buffer.write(answer.output)
        return 0
    print(f"{answer.code} ({answer.reason}): {answer.message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
