"""Streaming answers: chunks go to the transport as produced, then one answer (SPEC §4, §10)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from core.host.operations import Call, Operation, Outcome
from core.model import Contract, NoArgs
from tests.support import HostHarness, run


class Sized(Contract):
    """Test result."""

    size: int


def _stream_operation() -> Operation:
    async def stream(call: Call) -> Outcome:  # type: ignore[no-untyped-def]
        state = {"n": 0}

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(3):
                state["n"] += 4
                yield bytes([i]) * 4

        async def finish() -> Sized:
            return Sized(size=state["n"])

        return Outcome(Sized(size=-1), stream=chunks(), finish=finish, details={"k": 1})

    return Operation("test.stream", NoArgs, Sized, stream, "test only")


def test_chunks_reach_the_sink_before_the_final_answer_which_carries_finish() -> None:
    h = HostHarness(extra=(_stream_operation(),))
    seen: list[bytes] = []

    async def sink(chunk: bytes) -> None:
        seen.append(chunk)

    msg = json.dumps({"v": 1, "id": "s", "op": "test.stream", "args": {}})
    answer, body, _ = run(h.host.handle_full(msg, None, None, sink))
    assert seen == [b"\0" * 4, b"\1" * 4, b"\2" * 4]
    assert body is None
    parsed = json.loads(answer)
    assert parsed["result"] == {"size": 12}
    assert h.sink.records[parsed["logged"]]["details"] == {"k": 1}
    # without a sink the chunks are gathered into the body
    answer, body, _ = run(h.host.handle_full(msg))
    assert body == b"\0" * 4 + b"\1" * 4 + b"\2" * 4
