"""The hello gate: a peer channel authenticates with its first frame, in time, or is closed
(seed 002 §4, SPEC §6).

A new channel must send ``{"type": "hello", "role": "environment", "bearer": "vbx_…"}`` as its
first frame within ``bound_ms`` (default :data:`~core.policy.DEFAULT_HELLO_BOUND_MS`, 5000 ms;
the operator's :attr:`~core.policy.Policy.hello_bound_ms`). Otherwise the gate closes it with
1008 and the refusal code as the reason:

- no hello in time, a first frame that is not a well-formed hello, or an empty bearer →
  ``executor-unauthenticated`` on an executor channel (the connecting side will run routed
  actions), ``unauthenticated-call`` on a call channel (the connecting side will send calls —
  the E1 host-to-peer channel);
- a revoked bearer → ``pairing-revoked``; a bearer never issued here, or bound to an
  environment this host no longer serves (removed or re-keyed) → ``bearer-refused``. The hello
  names no ``envKey``, so ``unknown-environment`` belongs to the execute frames that do; the
  channel close codes stay those the seed lists with a WebSocket status.

The gate is pure logic on the clock: it holds no timer. The adapter asks :meth:`HelloGate.expired`
when its timer fires (at :attr:`HelloGate.deadline_ms`) and passes each early frame to
:meth:`HelloGate.on_frame`. Passing the hello does not admit any call: every execute frame is
checked again by :func:`core.custody.authorize.authorize_execute` on the state of that moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.custody.bearer import bearer_hash
from core.custody.channels import ChannelClose
from core.custody.environment import Environments
from core.custody.pairing import Pairings, bearer_standing, bound_env
from core.custody.wire import HelloFrame, parse_peer_message
from core.policy import DEFAULT_HELLO_BOUND_MS
from core.refusals import Code, Refused

__all__ = ["ChannelPurpose", "GateOpen", "HelloGate"]

ChannelPurpose = Literal["executor", "call"]


@dataclass(frozen=True, slots=True)
class GateOpen:
    """The channel authenticated: the hash of its bearer and the ``envKey`` it is bound to."""

    channel_id: str
    bearer_hash: str
    env_key: str


class HelloGate:
    """The authentication state of one new channel (see module docstring).

    ``opened_at_ms`` is when the channel opened (clock ms); ``bound_ms`` the time allowed.
    """

    def __init__(
        self,
        channel_id: str,
        *,
        purpose: ChannelPurpose,
        opened_at_ms: int,
        bound_ms: int = DEFAULT_HELLO_BOUND_MS,
    ) -> None:
        if bound_ms <= 0:
            raise ValueError("the hello bound is a positive number of milliseconds")
        self.channel_id = channel_id
        self.purpose = purpose
        self.deadline_ms = opened_at_ms + bound_ms
        self.decision: GateOpen | ChannelClose | None = None

    @property
    def _unauthenticated(self) -> Code:
        if self.purpose == "executor":
            return Code.EXECUTOR_UNAUTHENTICATED
        return Code.UNAUTHENTICATED_CALL

    def _close(self, reason: Code) -> ChannelClose:
        self.decision = ChannelClose(channel_id=self.channel_id, reason=reason)
        return self.decision

    def expired(self, now_ms: int) -> ChannelClose | None:
        """The close to carry out when no hello came by ``now_ms``; ``None`` while there is
        still time, or once the channel authenticated."""
        if self.decision is None and now_ms >= self.deadline_ms:
            return self._close(self._unauthenticated)
        if isinstance(self.decision, ChannelClose):
            return self.decision
        return None

    def on_frame(
        self, frame: object, *, environments: Environments, pairings: Pairings, now_ms: int
    ) -> GateOpen | ChannelClose:
        """Decide the channel on its first frame (a JSON value or text), on fresh state.

        Returns :class:`GateOpen` (record it in :class:`~core.custody.channels.LiveChannels`) or the
        :class:`~core.custody.channels.ChannelClose` to carry out. After the decision, later frames
        are not the gate's: it returns its decision again.
        """
        if self.decision is not None:
            return self.decision
        if now_ms >= self.deadline_ms:
            return self._close(self._unauthenticated)
        try:
            hello = parse_peer_message(frame)
        except Refused:
            return self._close(self._unauthenticated)
        if not isinstance(hello, HelloFrame):
            return self._close(self._unauthenticated)
        standing = bearer_standing(pairings, None, hello.bearer)
        if standing == "missing":
            return self._close(self._unauthenticated)
        if standing == "revoked":
            return self._close(Code.PAIRING_REVOKED)
        env_key = bound_env(pairings, hello.bearer)
        served = None if env_key is None else environments.find(env_key)
        if standing != "valid" or env_key is None or served is None or served.kind != "local":
            return self._close(Code.BEARER_REFUSED)
        self.decision = GateOpen(self.channel_id, bearer_hash(hello.bearer), env_key)
        return self.decision
