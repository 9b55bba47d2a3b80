"""Live peer channels and their pending calls: what to close, what to abandon, and why
(seed 002 §3-§4, SPEC §6).

Both ends of a peer channel keep a :class:`LiveChannels`: the side that authenticated a channel
(keyed by the hash of the bearer it accepted) and the side that presented the bearer (keyed by
the hash of the bearer it holds). Core decides; the adapter (a ``MessagePort`` or WebSocket in
``browser_host``) carries out the decisions it is handed:

- :meth:`LiveChannels.revoke` — every channel authenticated with a revoked bearer is closed at
  once with 1008 ``pairing-revoked``, and each of its pending calls is abandoned with
  ``pairing-revoked``;
- :meth:`LiveChannels.expire` — a pending call whose deadline passed is abandoned with
  ``environment-unreachable`` (502); its effect is ``unknown``;
- :meth:`LiveChannels.closed` — when a channel closes under a call, its pending calls are
  abandoned with the refusal code the close named (or ``environment-unreachable``).

Deadlines are plain numbers on the :class:`~core.ports.Clock` (ms since the epoch): no timer
lives here, the adapter's timer asks ``expire(now_ms)``. A mutating call that is abandoned is
marked ``retry: "not-blindly"`` (:func:`core.tools.receipts.retry_advice`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.model import Contract
from core.refusals import Code, Refused
from core.tools.receipts import Retry, retry_advice

__all__ = ["CLOSE_REASONS", "POLICY_VIOLATION", "Abandoned", "ChannelClose", "LiveChannels"]

POLICY_VIOLATION = 1008
"""The WebSocket-like close code of every refusal a channel closes with (seed 002 §4-§5)."""

CLOSE_REASONS = frozenset(
    {
        Code.PAIRING_REVOKED,
        Code.BEARER_REFUSED,
        Code.UNAUTHENTICATED_CALL,
        Code.EXECUTOR_UNAUTHENTICATED,
        Code.UNKNOWN_ENVIRONMENT,
        Code.MESSAGE_TOO_LARGE,
    }
)
"""The refusal codes a channel may close with (1008 and the code as the reason; the caller's
end closes with ``message-too-large`` itself when a remote sends a message past its bound —
issue 29 item 6)."""


class Abandoned(Contract):
    """A pending call that will get no answer from the peer; answer it with ``code`` instead.

    ``outcome`` is always ``unknown``: the peer may have acted before the channel went away.
    """

    channel_id: str
    request_id: str
    code: Code
    outcome: Literal["unknown"] = "unknown"
    retry: Retry

    def refusal(self) -> Refused:
        """The refusal the abandoned call is answered with (non-secret details only)."""
        return Refused(
            self.code,
            details={"outcome": self.outcome, "retry": self.retry},
            show_details=True,
        )


class ChannelClose(Contract):
    """Close ``channel_id`` now with ``code`` (1008) and the refusal code as the reason."""

    channel_id: str
    code: int = POLICY_VIOLATION
    reason: Code
    abandoned: tuple[Abandoned, ...] = ()


@dataclass
class _Pending:
    deadline_ms: int
    mutating: bool


@dataclass
class _Channel:
    bearer_hash: str
    env_key: str
    pending: dict[str, _Pending] = field(default_factory=dict)


class LiveChannels:
    """The authenticated channels of one host and the calls pending on each (see module doc)."""

    def __init__(self) -> None:
        self._channels: dict[str, _Channel] = {}

    def open(self, channel_id: str, *, bearer_hash: str, env_key: str) -> None:
        """Record ``channel_id`` as authenticated with the bearer whose hash is ``bearer_hash``."""
        if channel_id in self._channels:
            raise ValueError("that channel is already open")
        self._channels[channel_id] = _Channel(bearer_hash, env_key)

    def is_open(self, channel_id: str) -> bool:
        """True while ``channel_id`` is recorded as open."""
        return channel_id in self._channels

    def env_of(self, channel_id: str) -> str | None:
        """The ``envKey`` the channel's bearer is bound to, or ``None`` if it is not open."""
        channel = self._channels.get(channel_id)
        return None if channel is None else channel.env_key

    def bearer_hash_of(self, channel_id: str) -> str | None:
        """The hash of the bearer that authenticated ``channel_id``, or ``None``."""
        channel = self._channels.get(channel_id)
        return None if channel is None else channel.bearer_hash

    def pending(self, channel_id: str) -> tuple[str, ...]:
        """Request ids still pending on ``channel_id``, in the order they were sent."""
        channel = self._channels.get(channel_id)
        return () if channel is None else tuple(channel.pending)

    def track(self, channel_id: str, request_id: str, *, deadline_ms: int, mutating: bool) -> None:
        """Record a call sent on ``channel_id`` that must be answered by ``deadline_ms``.

        Refuses ``environment-unreachable`` when the channel is not open, and
        ``message-malformed`` when ``request_id`` is already pending there.
        """
        channel = self._channels.get(channel_id)
        if channel is None:
            raise Refused(
                Code.ENVIRONMENT_UNREACHABLE, "The channel to that environment is closed."
            )
        if request_id in channel.pending:
            raise Refused(Code.MESSAGE_MALFORMED, "That request id is already pending.")
        channel.pending[request_id] = _Pending(deadline_ms, mutating)

    def settle(self, channel_id: str, request_id: str) -> bool:
        """Mark a call answered. False when it was not pending on that channel (a late answer
        after expiry or revocation, or an answer on the wrong channel): drop that answer."""
        channel = self._channels.get(channel_id)
        return channel is not None and channel.pending.pop(request_id, None) is not None

    def expire(self, now_ms: int, channel_id: str | None = None) -> tuple[Abandoned, ...]:
        """Abandon every call whose deadline is at or before ``now_ms``
        (``environment-unreachable``) — on every channel, or only on ``channel_id``."""
        out = []
        for cid, channel in self._channels.items():
            if channel_id is not None and cid != channel_id:
                continue
            for request_id, call in list(channel.pending.items()):
                if call.deadline_ms <= now_ms:
                    del channel.pending[request_id]
                    out.append(_abandon(cid, request_id, call, Code.ENVIRONMENT_UNREACHABLE))
        return tuple(out)

    def next_deadline(self) -> int | None:
        """The earliest pending deadline (ms), for the adapter's one timer; ``None`` if idle."""
        deadlines = [p.deadline_ms for c in self._channels.values() for p in c.pending.values()]
        return min(deadlines, default=None)

    def revoke(self, bearer_hashes: tuple[str, ...] | list[str]) -> tuple[ChannelClose, ...]:
        """Close every channel authenticated with one of ``bearer_hashes`` (1008,
        ``pairing-revoked``) and abandon its pending calls with ``pairing-revoked``."""
        doomed = set(bearer_hashes)
        closes = []
        for channel_id, channel in list(self._channels.items()):
            if channel.bearer_hash in doomed:
                del self._channels[channel_id]
                abandoned = tuple(
                    _abandon(channel_id, rid, call, Code.PAIRING_REVOKED)
                    for rid, call in channel.pending.items()
                )
                closes.append(
                    ChannelClose(
                        channel_id=channel_id, reason=Code.PAIRING_REVOKED, abandoned=abandoned
                    )
                )
        return tuple(closes)

    def closed(self, channel_id: str, reason: str | None = None) -> tuple[Abandoned, ...]:
        """Forget ``channel_id`` after it closed; abandon its pending calls.

        ``reason`` is the close reason the other side gave: when it is a channel refusal code
        (``unknown-environment``, ``pairing-revoked``, ``bearer-refused``, ...) the calls are
        answered with it, otherwise with ``environment-unreachable``.
        """
        channel = self._channels.pop(channel_id, None)
        if channel is None:
            return ()
        code = Code(reason) if reason in CLOSE_REASONS else Code.ENVIRONMENT_UNREACHABLE
        return tuple(_abandon(channel_id, rid, call, code) for rid, call in channel.pending.items())


def _abandon(channel_id: str, request_id: str, call: _Pending, code: Code) -> Abandoned:
    return Abandoned(
        channel_id=channel_id,
        request_id=request_id,
        code=code,
        retry=retry_advice(call.mutating),
    )
