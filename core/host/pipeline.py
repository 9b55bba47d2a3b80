"""The pipeline: every call to the host goes through the same steps, in this order (SPEC §4,
STYLE §4)::

    parse → find operation → validate → gates → run → audit → receipt → answer

1. **parse** — bound and parse the envelope (:func:`core.protocol.parse_envelope`); only the
   page's envelope may carry the gesture origin (:func:`core.gestures.accept_origin`);
2. **find operation** — by name in this host's :class:`~core.host.operations.Operations`
   (:data:`core.host.registry.OPERATIONS`); an unknown name is ``operation-unknown``;
3. **validate** — the arguments strictly against the operation's model (``extra="forbid"``),
   refused in the one sentence of :func:`core.refusals.invalid_input`;
4. **gates** — what the operation declares (:class:`~core.host.operations.Operation`): the
   body it takes, the attachment it needs, SAFE mode for a write
   (:func:`core.policy.require_writable`), a person's gesture
   (:func:`core.gestures.require_human_gesture`);
5. **run** — the handler, writes one at a time (reads run alongside); a streaming result's
   chunks go to the transport as they are produced;
6. **audit** — the decision, admitted or refused, with non-secret details;
7. **receipt** — for a ``local-write`` operation run in-process, the host's receipt of the
   bytes it wrote, naming the audit record of the write as its store version;
8. **answer** — exactly one: a result, or a refusal ``{code, status, message}``. Any other
   exception becomes ``internal-error`` with no trace (the trace goes to the host's log only).

The page's messages enter at :meth:`Host.handle_full` (JSON text and a binary body, from the
worker); a call from inside this process — a tool, an operation that runs another — enters at
:meth:`Host.run` with typed arguments (no JSON text between two parts of one process) and goes
through steps 2 and 4–7 alike.

Nothing the caller sent is repeated unless a model declares it (seed 002 §2, issue 13): an
argument error names only the operation's declared fields, an unknown operation is not named —
in the answer or in the audit, whose ``op`` is then ``(unknown)`` — and every audit detail
passes :func:`core.secret.scrub_secrets`. Every answer's JSON text passes the exact-value
redaction of the secrets this host holds (:meth:`Host._shown`, issue 29 item 8).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, Unpack, cast, overload

from pydantic import ValidationError

from core.custody.pairing import PairingStore
from core.custody.peer_admin import PeerAdmin
from core.custody.peer_calls import PeerCalls
from core.gestures import accept_origin, is_human, require_human_gesture
from core.host.context import HostContext
from core.host.file_ops import FileDigest
from core.host.operations import (
    AnyOperation,
    Call,
    Operation,
    Operations,
    Outcome,
    PeerServices,
    Ran,
    RunOptions,
)
from core.host.registry import OPERATIONS, FieldWords
from core.host.tools import ToolBox
from core.model import Contract, unbuilt_contracts
from core.policy import require_writable
from core.projects.project import PROJECT_ID_PATTERN
from core.protocol import (
    MAX_BODY_BYTES,
    MessagePart,
    RefusalAnswer,
    ResultAnswer,
    oversized,
    parse_envelope,
    salvage_id,
)
from core.refusals import Code, Refused, invalid_input
from core.secret import known_names, scrub_secrets
from core.tools.builtin import BUILTIN_TOOLS, BuiltinTool
from core.tools.receipts import HostReceipt, write_receipt

__all__ = ["Host"]

log = logging.getLogger("voicebox.host")

Sink = Callable[[bytes], Awaitable[None]]
A = TypeVar("A", bound=Contract)
R = TypeVar("R", bound=Contract)


def _scalar_details(details: dict[str, Any]) -> dict[str, str | int | bool | None]:
    out: dict[str, str | int | bool | None] = {}
    for key, value in list(details.items())[:24]:
        name = scrub_secrets(str(key)[:64])
        if isinstance(value, bool | int) or value is None:
            out[name] = value
        else:
            out[name] = scrub_secrets(str(value)[:1000])
    return out


_PROJECT_ID = re.compile(PROJECT_ID_PATTERN)


def _project_of(value: object) -> str | None:
    return value if isinstance(value, str) and _PROJECT_ID.fullmatch(value) else None


class Host:
    """The pipeline of one host (module docstring), over one :class:`HostContext`.

    ``operations`` are the operations it answers (the built-in ones by default); ``tools`` the
    built-in tools it offers through the call envelope. Composing it composes what it keeps for
    its lifetime: :attr:`tools` (its :class:`~core.host.tools.ToolBox`) and, when the context
    has environment servers, :attr:`peers` (channels to its peers and the operator's acts on
    them). ``handle``/``handle_full``/``refuse_oversized``/``run`` never raise a refusal
    the caller did not ask for: the first three answer it; ``run`` raises it, audited.
    """

    def __init__(
        self,
        ctx: HostContext,
        operations: Operations = OPERATIONS,
        tools: tuple[BuiltinTool, ...] = BUILTIN_TOOLS,
    ) -> None:
        self.ctx = ctx
        self.operations = operations
        self._write_lock = asyncio.Lock()
        self._late: asyncio.Future[None] | None = None
        self._tools = ToolBox(self, operations, ctx, tools)
        self._peers: PeerServices | None = None
        servers = ctx.services.servers
        if servers is not None:
            words = FieldWords(operations)  # worked out on first use: no late import now
            policy = lambda: ctx.policy  # noqa: E731 - read afresh for every call
            pairing = PairingStore(ctx.state, ctx.clock, ctx.random, ctx.audit)
            link = ctx.services.remote
            events = ctx.services.events
            admin = PeerAdmin(
                ctx.state, servers, pairing, ctx.clock, ctx.random, words, link, policy=policy
            )
            calls = PeerCalls(
                servers,
                ctx.clock,
                policy,
                self._tools.mutating,
                words,
                link,
                on_revoked=admin.revoked_by_peer,
                on_state=None if events is None else lambda changed: events.post(changed),
            )
            self._peers = PeerServices(servers=servers, calls=calls, admin=admin)

    @property
    def tools(self) -> ToolBox:
        """The built-in tools of this environment, run through this pipeline."""
        return self._tools

    @property
    def peers(self) -> PeerServices | None:
        """Peer environments, when this host runs environment servers (else ``None``)."""
        return self._peers

    # ---- late modules (issue 18, cold boot) -----------------------------------------------

    def late_imports(self) -> asyncio.Future[None]:
        """The one import of this host's late modules (:data:`core.host.registry.LATE_MODULES`),
        started by the first call of this method (the worker's, right after ``ready``): one
        module at a time, with the event loop served between two, so a call that arrives
        meanwhile is answered at once when its operation is already real, and otherwise waits
        until this import is done — then is admitted as any other. No call sees an operation
        half imported, and no call imports a module this import is about to. Before it starts
        (or in a host that never starts it: a test's), a call that needs a late operation
        imports its module itself, in full, before it is admitted."""
        if self._late is None:
            self._late = asyncio.ensure_future(self._import_late())
        return self._late

    def after_ready(
        self,
        settled: Callable[[], object] | None = None,
        rehearse: Callable[[], Awaitable[object]] | None = None,
    ) -> asyncio.Future[Any]:
        """Start the host's work that waits for ``ready`` (issue 18, cold boot): the late
        modules' one shared import (:meth:`late_imports`) and, beside it, the mailboxes'
        warm-up (:func:`core.host.mailbox_ops.warm_mailboxes`, begun once the mailbox's module
        is in — the first late module). Returns at once the future of both (it never raises:
        a failure is its result); ``settled`` is called with no argument once both are done —
        the import and the warm-up, whether it opened anything or not — so a post made after
        it waits on no background open (issue 34: the warm-up ends only when every mailbox it
        picked is open or its open has ended, an open another call began included). After the
        late import, the contract models not built yet are built too, one a turn (issue 34,
        round 42: :func:`core.model.unbuilt_contracts`), so a settled host has built them all;
        then ``rehearse`` is awaited when given (the browser's host passes
        :func:`core.memory.rehearsal.rehearse_posts`: the post path run on a throwaway
        in-memory host, issue 34; a failure is its result, as above). The
        browser's worker posts ``settled`` from it (``browser_host/main.py``,
        docs/architecture.md, "Late operations")."""
        late = self.late_imports()
        warming = asyncio.ensure_future(_warm_up(self.ctx))
        building = asyncio.ensure_future(_build_models(late))
        rehearsing = asyncio.ensure_future(_rehearse(building, rehearse))
        both = asyncio.gather(late, warming, building, rehearsing, return_exceptions=True)
        if settled is not None:
            both.add_done_callback(lambda _done: settled())
        return both

    async def _import_late(self) -> None:
        for module in self.operations.pending():
            await asyncio.sleep(0)  # serve what arrived before the next module
            importlib.import_module(module)
            # its entries real now, in the same step (issue 34): a call waiting for one of
            # them goes on, not held until every later module is in too
            self.operations.resolve_module(module)
        for name in self.operations:
            self.operations[name]  # every entry real from here on

    async def _await_late(self, op: AnyOperation | None) -> None:
        """Wait while the shared import (:meth:`late_imports`) is under way and ``op`` is a
        late operation not imported yet: turn by turn of the event loop, so that a
        coroutine driven without one (the tests' harness) never waits on a task."""
        late = self._late
        while op is not None and op.pending is not None and late is not None and not late.done():
            await asyncio.sleep(0)
            op = self.operations.declared(op.name)

    async def _operation(self, name: str) -> AnyOperation | None:
        """Step 2: operation ``name`` with real models and handler, or ``None``; waits for the
        shared import first when it is a late one not imported yet (:meth:`late_imports`)."""
        await self._await_late(self.operations.declared(name))
        return self.operations.get(name)

    # ---- the page's messages ------------------------------------------------------------

    async def handle(
        self, text: str | bytes, body: bytes | None = None
    ) -> tuple[str, bytes | None]:
        """Answer one message: ``(answer_json, answer_body)``. ``body`` is its binary payload."""
        answer, out, _ = await self.handle_full(text, body)
        return answer, out

    async def handle_full(
        self,
        text: str | bytes,
        body: bytes | None = None,
        attachment: object = None,
        sink: Sink | None = None,
        *,
        actor: str = "page",
    ) -> tuple[str, bytes | None, object]:
        """Answer one message: ``(answer_json, answer_body, answer_attachment)``.

        A streaming operation's chunks go to ``sink`` as they are produced, before the answer;
        without a sink they are gathered into ``answer_body`` (tests, small streams).
        ``actor`` names who sent it for the audit: ``"page"`` for the page (which alone may
        mark a message with the gesture origin); anything else carrying an origin is refused.
        """
        request_id: str | None = None
        op_name = "(malformed)"
        project: str | None = None
        try:
            env = parse_envelope(text)
            request_id, op_name = env.id, env.op
            project = _project_of(env.args.get("project"))
            origin = accept_origin(env.origin, from_page=actor == "page")
            if is_human(origin):
                actor = str(origin)
            op = await self._operation(env.op)
            if op is None:
                op_name = "(unknown)"  # the caller's words are not an operation's name
                raise Refused(Code.OPERATION_UNKNOWN, "The host has no operation by that name.")
            args = _validate(op, env.args)
            ran = await self._through(
                op, args, body, origin, actor, attachment, sink, within=None, receipt_as=None
            )
        except Refused as refusal:
            if request_id is None:
                request_id = salvage_id(text)
            logged = await self._audit_refusal(op_name, actor, refusal, project)
            answer = RefusalAnswer(id=request_id, refusal=refusal.body(), logged=logged)
            return await self._shown(answer.model_dump_json()), None, None
        except Exception:
            log.exception("internal error in %s", op_name)
            logged = await self._audit_refusal(
                op_name, actor, Refused(Code.INTERNAL_ERROR), project
            )
            refused = RefusalAnswer(
                id=request_id, refusal=Refused(Code.INTERNAL_ERROR).body(), logged=logged
            )
            return await self._shown(refused.model_dump_json()), None, None
        answered = ResultAnswer(
            id=request_id,
            result=ran.result,
            logged=ran.logged,
            logged_pending=True if ran.logged_pending else None,
        )
        return await self._shown(answered.model_dump_json(by_alias=True)), ran.body, ran.attachment

    async def _shown(self, answer: str) -> str:
        """Step 8's last guard (issue 29 item 8): ``answer`` with the exact value of every
        secret this host holds — in every form :mod:`core.redaction` knows, a bearer's body
        without its prefix in any case — replaced. Every answer the page receives passes
        here, so a peer's or remote's lie about a secret of ours never reaches the page. The
        bytes of a body or a stream are a project's own and are not rewritten."""
        redactor = await self.ctx.secrets.current(self.ctx.state)
        return redactor.redact(answer) if redactor else answer

    async def refuse_oversized(
        self, part: MessagePart, size: int, text: str | None = None, *, actor: str = "page"
    ) -> str:
        """Answer a message whose ``part`` the worker found over its bound by ``size`` alone
        and never converted (:data:`core.protocol.INBOUND_BOUNDS`): the refusal
        ``message-too-large`` (:func:`core.protocol.oversized`), audited like any other.
        ``text`` is the message's JSON text when only its body was over (then the answer
        carries the request's id and the audit its operation), else ``None``. Never raises."""
        request_id, op_name, project = None, "(malformed)", None
        if text is not None:
            try:
                env = parse_envelope(text)
                request_id, op_name = env.id, env.op
                project = _project_of(env.args.get("project"))
            except Refused:
                request_id = salvage_id(text)
        refusal = oversized(part, size)
        logged = await self._audit_refusal(op_name, actor, refusal, project)
        return RefusalAnswer(id=request_id, refusal=refusal.body(), logged=logged).model_dump_json()

    # ---- calls from inside this process -------------------------------------------------

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
        """Run operation ``name`` (or the :class:`Operation` itself) on ``args`` — an instance
        of its argument model — through steps 2 and 4–7 of the pipeline with ``options``
        (:class:`~core.host.operations.RunOptions`: ``actor``, ``origin``, ``body``, ``sink``,
        ``within`` — a nested write then runs inside its write lock — and ``receipt_as``, the
        name the host's receipt gives the call); return what it ran. Raises the refusal —
        audited, as every refusal is — or ``internal-error`` for any other failure.
        """
        op: AnyOperation | None
        if isinstance(name, Operation):
            if name.pending is not None:
                await self._await_late(name)  # a late operation as declared
            op = name.resolved()
        else:
            op = await self._operation(name)
        op_name = "(unknown)" if op is None else op.name
        project = _project_of(getattr(args, "project", None))
        actor = options["actor"]
        try:
            if op is None:
                raise Refused(Code.OPERATION_UNKNOWN, "The host has no operation by that name.")
            if not isinstance(args, op.args):
                raise TypeError(f"{op.name} takes {op.args.__name__}, not {type(args).__name__}")
            return await self._through(
                op,
                args,
                options.get("body"),
                options.get("origin"),
                actor,
                None,
                options.get("sink"),
                within=options.get("within"),
                receipt_as=options.get("receipt_as"),
            )
        except Refused as refusal:
            await self._audit_refusal(op_name, actor, refusal, project)
            raise
        except Exception:
            log.exception("internal error in %s", op_name)
            await self._audit_refusal(op_name, actor, Refused(Code.INTERNAL_ERROR), project)
            raise Refused(Code.INTERNAL_ERROR) from None

    # ---- the steps ----------------------------------------------------------------------

    async def _through(
        self,
        op: Operation[A, R],
        args: A,
        body: bytes | None,
        origin: str | None,
        actor: str,
        attachment: object,
        sink: Sink | None,
        *,
        within: Call[Contract] | None,
        receipt_as: str | None,
    ) -> Ran[R]:
        self._gates(op, args, body, origin, attachment)
        nested_in_write = within is not None and within.holds_write_lock
        call = Call(
            self.ctx,
            self,
            args,
            body,
            origin,
            actor,
            attachment,
            holds_write_lock=op.writes or nested_in_write,
        )
        if op.writes and not nested_in_write:
            async with self._write_lock:
                outcome = await op.handler(call)
        else:
            outcome = await op.handler(call)
        if outcome.stream is not None or outcome.writer is not None:
            outcome = await _drain(outcome, sink)
        logged = None
        if op.audited:
            logged = await self._safe_append(
                actor=actor,
                op=op.name,
                decision="admitted",
                rule=outcome.rule,
                project=outcome.project,
                details=_scalar_details(outcome.details),
                grouped=op.read_only and not op.writes,
            )
        receipt = (
            None if receipt_as is None else self._receipt(op, args, outcome, logged, receipt_as)
        )
        pending = logged is not None and not self.ctx.audit.is_durable(logged)
        # the handler is a Handler[A] whose Outcome carries a Contract: that it is this
        # operation's R is the registry's word (tests/core/test_registry.py checks the models)
        result = cast(R, outcome.result)
        return Ran(result, outcome.body, outcome.attachment, logged, receipt, pending)

    def _gates(
        self,
        op: AnyOperation,
        args: Contract,
        body: bytes | None,
        origin: str | None,
        attachment: object,
    ) -> None:
        """Step 4, in this order: the body, the attachment, SAFE mode, a person's gesture."""
        if body is not None and len(body) > MAX_BODY_BYTES:
            raise oversized("body", len(body))
        if op.body_in == "required" and body is None:
            raise Refused(Code.MESSAGE_MALFORMED, f"'{op.name}' needs a body.")
        if op.body_in == "none" and body is not None:
            raise Refused(Code.MESSAGE_MALFORMED, f"'{op.name}' takes no body.")
        if attachment is not None and op.attachment is None:
            raise Refused(Code.MESSAGE_MALFORMED, f"'{op.name}' takes no attachment.")
        if attachment is None and op.attachment is not None:
            raise Refused(Code.MESSAGE_MALFORMED, f"'{op.name}' needs {op.attachment}.")
        if op.writes:
            require_writable(self.ctx.policy)
        gesture = op.gesture
        if gesture is not None and gesture.applies(args):
            require_human_gesture(
                origin=origin,
                act=gesture.act,
                field=gesture.via,
                via=None if gesture.via is None else getattr(args, gesture.via),
                names=gesture.names,
            )

    def _receipt(
        self, op: AnyOperation, args: Contract, outcome: Outcome, logged: int | None, name: str
    ) -> HostReceipt | None:
        """Step 7: the host's ``local-write`` receipt of the file a write put down."""
        written = outcome.result
        if op.rung != "local-write" or not isinstance(written, FileDigest):
            return None
        return write_receipt(
            op=name,
            env=self.ctx.env_key,
            project=getattr(args, "project", ""),
            path=written.path,
            size=written.size,
            sha256=written.sha256,
            store_version=logged,
            at_ms=self.ctx.clock.now_ms(),
        )

    async def _audit_refusal(
        self, op_name: str, actor: str, refusal: Refused, project: str | None = None
    ) -> int | None:
        details = _scalar_details(refusal.details)
        if refusal.field:
            details["field"] = scrub_secrets(refusal.field[:200])
        return await self._safe_append(
            actor=actor,
            op=op_name[:200],
            decision="refused",
            rule=str(refusal.code),
            project=project,
            details=details,
        )

    async def _safe_append(self, **fields: Any) -> int | None:
        try:
            return await self.ctx.audit.append(**await self._without_held(fields))
        except Exception:
            log.exception("audit append failed")
            return None

    async def _without_held(self, fields: dict[str, Any]) -> dict[str, Any]:
        """``fields`` with the exact value of every secret this host holds redacted from the
        operation's name and the details' keys and texts: a record keeps what a caller typed
        (a path, a name), and a provider key pasted as a file's name would otherwise stay in
        the chain in clear (the tryout of stop 46). A record without a held value is
        unchanged."""
        redactor = await self.ctx.secrets.current(self.ctx.state)
        if not redactor:
            return fields
        details = fields.get("details") or {}
        return {
            **fields,
            "op": redactor.redact(fields["op"]),
            "details": {
                redactor.redact(key): redactor.redact(value) if isinstance(value, str) else value
                for key, value in details.items()
            },
        }


async def _warm_up(ctx: HostContext) -> None:
    """:meth:`Host.after_ready`'s background work beside the late imports: the mailboxes'
    warm-up, begun as soon as the mailbox's module is in (the first of
    :data:`core.host.registry.LATE_MODULES`, issue 34) rather than after every late module. An
    import is one synchronous step, so no call sees that module half imported."""
    await asyncio.sleep(0)  # the late import takes the first turn: it imports this module
    from core.host.mailbox_ops import warm_mailboxes  # (or this does, in one step)

    await warm_mailboxes(ctx)


async def _build_models(late: asyncio.Future[None]) -> None:
    """:meth:`Host.after_ready`'s last background step: once the late modules are in (their
    models made), build every contract model no call has used yet (``core/model.py``: built on
    first use), one a turn of the event loop, so a call that arrives between two is answered."""
    await asyncio.wait([late])  # whatever its outcome: the models made so far are built
    for model in unbuilt_contracts():
        await asyncio.sleep(0)
        if not model.__pydantic_complete__:  # a call may have used it meanwhile
            model.model_rebuild(raise_errors=False)


async def _rehearse(
    building: asyncio.Future[None], rehearse: Callable[[], Awaitable[object]] | None
) -> None:
    """:meth:`Host.after_ready`'s step after the models are built: ``rehearse`` awaited."""
    await asyncio.wait([building])
    if rehearse is not None:
        await rehearse()


def _validate(op: Operation[A, R], args: dict[str, Any]) -> A:
    """Step 3: the arguments as the operation's model, or ``message-malformed`` naming only
    the model's own fields."""
    try:
        return op.args.model_validate(args)
    except ValidationError as exc:
        names = known_names(op.args)
        raise invalid_input(exc, names, code=Code.MESSAGE_MALFORMED) from None


async def _drain(outcome: Outcome, sink: Sink | None) -> Outcome:
    gathered: list[bytes] = []

    async def gather(chunk: bytes) -> None:
        gathered.append(chunk)

    target = gather if sink is None else sink
    if outcome.writer is not None:
        result = await outcome.writer(target)
    else:
        assert outcome.stream is not None
        async for chunk in outcome.stream:
            await target(chunk)
        result = await outcome.finish() if outcome.finish is not None else outcome.result
    return Outcome(
        result,
        body=b"".join(gathered) if sink is None else None,
        project=outcome.project,
        rule=outcome.rule,
        details=outcome.details,
    )
