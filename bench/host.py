"""Calling the host from the benchmark, through the page's own client (``voicebox.host``).

Loops run inside the page so each duration is measured there with ``performance.now()``
(ms), free of driver round trips.
"""

from __future__ import annotations

import base64
from typing import Any

from bench.browser import Profile

__all__ = ["call", "ok", "timed_calls", "timed_sequence"]

CALL = """
async ([op, args, b64, human]) => {
  const body = b64 === null ? null : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
  try {
    const answer = await window.voicebox.host.call(op, args, { body, human });
    const size = answer.body ? answer.body.byteLength : (answer.stream ? answer.stream.size : 0);
    const { result, logged, loggedPending } = answer;
    return { ok: true, result, logged, loggedPending, size };
  } catch (err) {
    return { ok: false, refusal: { code: err.code, message: err.message } };
  }
}
"""

TIMED = """
async ([op, args, count]) => {
  const out = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await window.voicebox.host.call(op, args);
    out.push(performance.now() - start);
  }
  return out;
}
"""

SEQUENCE = """
async ([op, argsList]) => {
  const out = [];
  for (const args of argsList) {
    const start = performance.now();
    const answer = await window.voicebox.host.call(op, args);
    out.push(performance.now() - start);
    if (answer.result === undefined) throw new Error("no result");
  }
  return out;
}
"""


def call(
    profile: Profile, op: str, args: dict[str, Any] | None = None, body: bytes | None = None
) -> dict[str, Any]:
    """One host call; ``{ok, result|refusal, logged, size}`` (``size``: answer body bytes)."""
    b64 = None if body is None else base64.b64encode(body).decode()
    return profile.evaluate(CALL, [op, args or {}, b64, False])


def ok(
    profile: Profile, op: str, args: dict[str, Any] | None = None, body: bytes | None = None
) -> dict[str, Any]:
    """One host call that must succeed; its result."""
    answer = call(profile, op, args, body)
    if not answer["ok"]:
        raise RuntimeError(f"{op} refused: {answer['refusal']}")
    return answer["result"]


def timed_calls(profile: Profile, op: str, args: dict[str, Any], count: int) -> list[float]:
    """``count`` sequential calls of ``op``; each page → host → page duration in ms."""
    return [float(x) for x in profile.evaluate(TIMED, [op, args, count])]


def timed_sequence(profile: Profile, op: str, args_list: list[dict[str, Any]]) -> list[float]:
    """One call of ``op`` per argument set, in order; each duration in ms."""
    return [float(x) for x in profile.evaluate(SEQUENCE, [op, args_list])]
