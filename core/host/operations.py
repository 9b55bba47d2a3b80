"""What an operation is: its models, its handler — and its gates, declared as data (SPEC §4).

An :class:`Operation` names its argument and result models and its handler, and declares
everything the pipeline (:mod:`core.host.pipeline`) enforces for it, in one place, before the
handler runs or after it returns:

- ``writes`` — it changes project or host state: refused in SAFE mode (``read-only-mode``) and
  serialised with every other write;
- ``gesture`` — it (or some of its calls, ``Gesture.when``) is a person's gesture in the page
  (:class:`Gesture`, checked by :func:`core.gestures.require_human_gesture`);
- ``receipt`` — the rung of evidence its result carries (:data:`core.tools.receipts.RUNGS`);
  for ``local-write``, a call run in-process gets the host's receipt of the bytes written;
- ``audited`` — whether its decisions are audited (every refusal is, whatever it says);
- ``read_only`` — it changes nothing (no project, host or audit-visible state beyond its
  record): its admitted record is committed in a group within
  :data:`core.audit.GROUP_WINDOW_MS` and the answer says ``logged_pending`` (issue 18);
  every other call is answered only once its record is durable;
- ``body_in`` / ``body_out`` — whether it takes and gives a binary body;
- ``attachment`` — what it needs handed beside the message (a folder's handle, a port).

Handlers check none of these: a handler that runs has passed them. The one module that lists
every operation is :mod:`core.host.registry`.

**Late operations (issue 18, cold boot).** An operation may name its models and handler by
module (:class:`Ref`, spelt ``LateModule("core.host.compose_ops").ComposeArgs``): its gates
are data, known at once, but its module is imported only when something needs the operation
itself. :class:`Operations` hands out only operations whose models and handler are real —
looking one up imports its module first (synchronously, in full) — and says which modules are
still :meth:`~Operations.pending`, so a host can import them after it is ready, one at a
time, and make a call that needs one await that import
(:meth:`core.host.pipeline.Host.late_imports`).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, Protocol, Required, TypedDict, TypeVar, Unpack, overload

from core.custody.peer_admin import PeerAdmin
from core.custody.peer_calls import PeerCalls
from core.gestures import is_human
from core.host.context import HostContext
from core.model import Contract
from core.ports import EnvironmentServers
from core.tools.receipts import HostReceipt, Rung
from core.tools.runner import Sink, ToolRunner

__all__ = [
    "AnyOperation",
    "Call",
    "Gesture",
    "Handler",
    "HostRuntime",
    "LateModule",
    "Operation",
    "Operations",
    "Outcome",
    "PeerServices",
    "Ran",
    "Ref",
    "RunOptions",
]

A = TypeVar("A", bound=Contract)
"""An operation's argument model (issue 35: ``Operation[A, R]``, ``Handler[A]``)."""
R = TypeVar("R", bound=Contract)
"""An operation's result model."""
A_co = TypeVar("A_co", bound=Contract, covariant=True)
R_co = TypeVar("R_co", bound=Contract, covariant=True)


@dataclass(frozen=True, slots=True)
class Ref:
    """A model, handler or predicate named by ``module`` and attribute ``name``, imported on
    first use (module docstring). Calling it calls what it names (a gesture's ``when``).
    Raises ``ImportError`` / ``AttributeError`` only for a registry that names what does not
    exist (the registry's tests resolve every entry)."""

    module: str
    name: str

    def resolve(self) -> Any:
        """What this names, its module imported (once: Python keeps it in ``sys.modules``)."""
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)


class LateModule:
    """The registry's spelling of a module imported late: ``LateModule(m).X`` is
    ``Ref(m, "X")``, so a late operation is declared with the same words as an eager one."""

    def __init__(self, module: str) -> None:
        self.module = module

    def __getattr__(self, name: str) -> Ref:
        if name.startswith("__"):
            raise AttributeError(name)
        return Ref(self.module, name)


def _real(value: Any) -> Any:
    return value.resolve() if isinstance(value, Ref) else value


@dataclass(frozen=True, slots=True)
class Gesture:
    """The operation is a person's gesture in the page (seed 004 §8; SPEC §4).

    ``act`` says what the gesture does, for the refusal's sentence (``"Ratifying"``). ``via``
    names the argument that must carry the gesture token as well (``"ratified_via"``), or
    ``None`` when the call's origin alone decides. ``when`` limits the gate to the calls it
    accepts (``mission.post``: archiving only); ``names`` is the field a refusal names when the
    call did not come from the page's gesture (``"origin"``, or ``"seat"`` for the owner seat).
    """

    act: str
    via: str | None = None
    when: Callable[[Any], bool] | None = None
    names: str = "origin"

    def applies(self, args: Contract) -> bool:
        """True when a call with ``args`` needs the gesture."""
        return self.when is None or self.when(args)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a handler hands back: its result model, an optional binary body, audit context.

    ``rule`` names the rule that admitted (audit ``rule``); ``details`` are non-secret audit
    details; ``project`` is the project the call concerned; ``attachment`` is an opaque
    runtime object handed back beside the answer (e.g. a folder handle for a permission
    gesture).

    A streaming operation sets ``stream``: the pipeline hands each chunk to the transport as
    it is produced — memory does not grow with the stream's size — and, once the stream is
    exhausted, awaits ``finish()`` for the final result (which then replaces ``result``) and
    audits it with ``details``. Or it sets ``writer`` (an archive export): the pipeline calls
    ``writer(sink)`` with the transport's sink, which hands the bytes to it in order and
    returns the final result; a relay may then move bytes to that sink without Python
    (:class:`~core.ports.FileRelay`).
    """

    result: Contract
    body: bytes | None = None
    attachment: object = None
    stream: AsyncIterator[bytes] | None = None
    finish: Callable[[], Awaitable[Contract]] | None = None
    writer: Callable[[Sink], Awaitable[Contract]] | None = None
    project: str | None = None
    rule: str = "admitted"
    details: dict[str, str | int | bool | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Ran(Generic[R_co]):
    """An operation run in-process (:meth:`HostRuntime.run`): its result model, binary body
    and attachment, the audit number of its decision (``None`` when not audited), for a
    ``local-write`` operation that wrote a file the host's receipt, and whether the record
    numbered ``logged`` is still pending (a ``read_only`` call's grouped record)."""

    result: R_co
    body: bytes | None
    attachment: object
    logged: int | None
    receipt: HostReceipt | None
    logged_pending: bool = False


@dataclass(frozen=True, slots=True)
class PeerServices:
    """What a host that runs environment servers composes once: its ``servers``, the execute
    channels to its peers (``calls``) and the operator's acts on them (``admin``)."""

    servers: EnvironmentServers
    calls: PeerCalls
    admin: PeerAdmin


class RunOptions(TypedDict, total=False):
    """The keyword options of a call from inside the host (:meth:`HostRuntime.run`), written
    once for both overloads and the pipeline's implementation: ``actor`` (required) names the
    seat for the audit; ``body`` is the binary body; ``origin`` the gesture token the call
    carries on; ``sink`` takes a streaming operation's chunks; ``within`` is the call this one
    is part of (a nested write runs inside its write lock); ``receipt_as`` the name the caller
    knows the call by (a tool's name), which the host's receipt names — without it no receipt
    is made."""

    actor: Required[str]
    body: bytes | None
    origin: str | None
    sink: Sink | None
    within: Call[Contract] | None
    receipt_as: str | None


class HostRuntime(Protocol):
    """What the pipeline offers a handler besides the context: the tools of this environment,
    its peers (``None`` without environment servers), and running another operation through
    the same pipeline (:meth:`Call.run`)."""

    @property
    def tools(self) -> ToolRunner:
        """The built-in tools of this environment."""
        ...

    @property
    def peers(self) -> PeerServices | None:
        """Peer environments, when this host runs environment servers."""
        ...

    @overload
    async def run(
        self, name: Operation[A, R], args: A, **options: Unpack[RunOptions]
    ) -> Ran[R]: ...

    @overload
    async def run(
        self, name: str, args: Contract, **options: Unpack[RunOptions]
    ) -> Ran[Contract]: ...

    async def run(
        self, name: str | Operation[A, R], args: A | Contract, **options: Unpack[RunOptions]
    ) -> Ran[R] | Ran[Contract]:
        """Run operation ``name`` on typed ``args`` through every step of the pipeline: an
        :class:`Operation` ``[A, R]`` takes an ``A`` and gives a :class:`Ran` ``[R]``; a name
        found at run time gives a ``Ran[Contract]``. The keyword options: :class:`RunOptions`."""
        ...


@dataclass(frozen=True, slots=True)
class Call(Generic[A_co]):
    """One admitted request as a handler sees it.

    ``args`` is an instance of the operation's argument model; ``body`` the binary body or
    ``None``; ``origin`` the gesture token of the page's envelope or ``None``; ``actor`` names
    the seat for the audit; ``attachment`` an opaque runtime object sent beside the message (a
    picked folder's handle, a port). ``host`` runs further operations; ``holds_write_lock`` is
    true while this call holds the write lock (a nested write then runs inside it).
    """

    ctx: HostContext
    host: HostRuntime
    args: A_co
    body: bytes | None
    origin: str | None
    actor: str
    attachment: object = None
    holds_write_lock: bool = False

    @property
    def human(self) -> bool:
        """True when this call is a person's gesture in the page."""
        return is_human(self.origin)

    async def run(self, name: str, args: Contract, *, body: bytes | None = None) -> Ran[Contract]:
        """Run operation ``name`` as part of this call: same origin and actor, every gate and
        the audit of its own (a nested write runs inside this call's write lock)."""
        return await self.host.run(
            name, args, body=body, origin=self.origin, actor=self.actor, within=self
        )


Handler = Callable[[Call[A]], Awaitable[Outcome]]
"""A handler of operations taking ``A`` (``Handler[A]``): it is handed the admitted call."""


@dataclass(frozen=True, slots=True)
class Operation(Generic[A, R]):
    """One operation of the host protocol and its gates (module docstring). ``args``,
    ``result`` and ``handler`` are :class:`Ref` in a late operation as declared; an
    :class:`Operations` lookup hands out the real ones."""

    name: str
    args: type[A]  # or a Ref, as declared (class docstring)
    result: type[R]
    handler: Handler[A]
    summary: str
    writes: bool = False
    gesture: Gesture | None = None
    receipt: Rung | None = None
    audited: bool = True
    read_only: bool = False
    body_in: Literal["none", "optional", "required"] = "none"
    body_out: bool = False
    attachment: str | None = None

    @property
    def rung(self) -> Rung:
        """The declared receipt rung; by default ``local-write`` for a write (the host
        performed it) and ``internal-read`` otherwise."""
        if self.receipt is not None:
            return self.receipt
        return "local-write" if self.writes else "internal-read"

    _pending: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # worked out once: every call asks (issue 18, the read path); the entry is frozen
        parts = (self.args, self.result, self.handler)
        module = next((p.module for p in parts if isinstance(p, Ref)), None)
        object.__setattr__(self, "_pending", module)

    @property
    def pending(self) -> str | None:
        """The module this operation's models and handler are still to come from, or
        ``None`` when they are real."""
        return self._pending

    def resolved(self) -> Operation[A, R]:
        """This operation with real models and handler (imports its module if need be)."""
        if self.pending is None:
            return self
        return replace(
            self, args=_real(self.args), result=_real(self.result), handler=_real(self.handler)
        )


AnyOperation = Operation[Any, Any]
"""An operation of any models: what a registry holds and a lookup by name gives."""


class Operations(Mapping[str, AnyOperation]):
    """Operations by name, fixed when built; a name given twice is a ``ValueError``.

    Looking an operation up (``ops[name]``, ``get``, ``values``…) always gives it with real
    models and handler: a late one's module is imported then, in full, and the entry kept
    resolved. :meth:`declared` gives an entry's gates without importing anything;
    :meth:`pending` the modules not imported yet (module docstring)."""

    def __init__(self, operations: Iterable[AnyOperation]) -> None:
        self._ops: dict[str, AnyOperation] = {}
        for op in operations:
            if op.name in self._ops:
                raise ValueError(f"operation {op.name!r} listed twice")
            self._ops[op.name] = op

    def __getitem__(self, name: str) -> AnyOperation:
        op = self._ops[name]
        if op.pending is not None:
            op = self._ops[name] = op.resolved()
        return op

    def declared(self, name: str) -> AnyOperation | None:
        """The operation ``name`` as declared (a late one's models and handler may still be
        :class:`Ref`): its gates, without importing anything; ``None`` when unknown."""
        return self._ops.get(name)

    def pending(self) -> tuple[str, ...]:
        """The modules whose operations have not been looked up yet, in declaration order."""
        found = (op.pending for op in self._ops.values())
        return tuple(dict.fromkeys(m for m in found if m is not None))

    def resolve_module(self, module: str) -> None:
        """Look up every operation still to come from ``module`` (imports it if need be), so
        each is real from now on (the host's late import, module by module: issue 34)."""
        for name, op in list(self._ops.items()):
            if op.pending == module:
                self[name]

    def loaded(self, name: str) -> bool:
        """True when looking operation ``name`` up imports nothing (real, or unknown)."""
        op = self._ops.get(name)
        return op is None or op.pending is None

    def __iter__(self) -> Iterator[str]:
        return iter(self._ops)

    def __len__(self) -> int:
        return len(self._ops)

    def extended(self, *extra: AnyOperation) -> Operations:
        """These operations and ``extra`` (a placement's own, or a test's)."""
        return Operations([*self._ops.values(), *extra])
