"""The dispatcher: one protocol message in, exactly one answer out (SPEC §4, STYLE §4).

Order for every message: bound and parse the envelope → find the operation → validate its
arguments strictly → check the body → SAFE mode for writes → run the handler → audit the
decision → answer. Any :class:`~core.refusals.Refused` becomes a refusal answer; any other
exception becomes ``internal-error`` with no trace (the trace goes to the host's log only).
Writes are serialised (one at a time); reads run alongside.

Nothing the caller sent is repeated unless a model declares it (seed 002 §2, issue 13): an
argument error names only the operation's declared fields (:func:`core.secret.
quiet_error_text`), an unknown operation is not named — in the answer or in the audit, whose
``op`` is then ``(unknown)`` — and every audit detail passes :func:`core.secret.scrub_secrets`.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

# Importing the operation modules registers their operations.
from core.host import (  # noqa: F401
    archive_ops,
    asset_ops,
    audit_ops,
    compose_ops,
    env_ops,
    file_ops,
    inbox_ops,
    info_ops,
    mission_ops,
    project_ops,
    settings_ops,
    tray_ops,
)
from core.host.context import HostContext
from core.host.operations import OPERATIONS, Call, Operation, Outcome
from core.projects.project import PROJECT_ID_PATTERN
from core.protocol import (
    HUMAN_UI,
    MAX_BODY_BYTES,
    MessagePart,
    RefusalAnswer,
    ResultAnswer,
    oversized,
    parse_envelope,
    salvage_id,
)
from core.refusals import Code, Refused
from core.secret import known_names, quiet_error_text, scrub_secrets

__all__ = ["Host"]

log = logging.getLogger("voicebox.host")


def _scalar_details(details: dict[str, Any]) -> dict[str, str | int | bool | None]:
    out: dict[str, str | int | bool | None] = {}
    for key, value in list(details.items())[:24]:
        name = scrub_secrets(str(key)[:64])
        if isinstance(value, bool | int) or value is None:
            out[name] = value
        else:
            out[name] = scrub_secrets(str(value)[:1000])
    return out


def _project_of(args: dict[str, Any]) -> str | None:
    value = args.get("project")
    return value if isinstance(value, str) and re.fullmatch(PROJECT_ID_PATTERN, value) else None


class Host:
    """Answers host-protocol messages for one :class:`HostContext`.

    ``handle(text, body)`` returns ``(answer_json, answer_body)``; ``handle_full`` also takes
    and returns an opaque attachment (a folder handle, a port). Neither ever raises.
    """

    def __init__(self, ctx: HostContext) -> None:
        self.ctx = ctx
        ctx.dispatcher = self
        self._write_lock = asyncio.Lock()

    async def handle(
        self, text: str | bytes, body: bytes | None = None
    ) -> tuple[str, bytes | None]:
        """Answer one message (see module docstring). ``body`` is the binary payload, if any."""
        answer, out, _ = await self.handle_full(text, body)
        return answer, out

    async def handle_full(
        self,
        text: str | bytes,
        body: bytes | None = None,
        attachment: object = None,
        sink: Callable[[bytes], Awaitable[None]] | None = None,
        *,
        actor: str = "page",
    ) -> tuple[str, bytes | None, object]:
        """Answer one message: ``(answer_json, answer_body, answer_attachment)``.

        A streaming operation's chunks go to ``sink`` as they are produced, before the answer;
        without a sink they are gathered into ``answer_body`` (tests, small streams).
        ``actor`` names who sent it for the audit: ``"page"`` for the page (which alone may
        mark a message ``origin: "human-ui"``); a tool call arriving from a peer is run with
        ``actor="peer:…"`` and an origin is then refused, never honoured.
        """
        request_id: str | None = None
        op_name = "(malformed)"
        from_page = actor == "page"
        project: str | None = None
        try:
            env = parse_envelope(text)
            request_id, op_name = env.id, env.op
            project = _project_of(env.args)
            if env.origin is not None and not from_page:
                raise Refused(
                    Code.HUMAN_GESTURE_REQUIRED,
                    "Only a person's gesture in the page may carry the human origin.",
                    field="origin",
                )
            if env.origin == HUMAN_UI:
                actor = HUMAN_UI
            op = OPERATIONS.get(env.op)
            if op is None:
                op_name = "(unknown)"  # the caller's words are not an operation's name
                raise Refused(Code.OPERATION_UNKNOWN, "The host has no operation by that name.")
            call = self._admit(op, env.args, body, env.origin, actor, attachment)
            outcome = await self._run(op, call)
            if outcome.stream is not None:
                outcome = await self._drain(outcome, sink)
        except Refused as refusal:
            if request_id is None:
                request_id = salvage_id(text)
            logged = await self._audit_refusal(op_name, actor, refusal, project)
            answer = RefusalAnswer(id=request_id, refusal=refusal.body(), logged=logged)
            return answer.model_dump_json(), None, None
        except Exception:
            log.exception("internal error in %s", op_name)
            refusal = Refused(Code.INTERNAL_ERROR)
            logged = await self._audit_refusal(op_name, actor, refusal, project)
            answer = RefusalAnswer(id=request_id, refusal=refusal.body(), logged=logged)
            return answer.model_dump_json(), None, None
        logged = None
        if op.audited:
            logged = await self._safe_append(
                actor=actor,
                op=op.name,
                decision="admitted",
                rule=outcome.rule,
                project=outcome.project,
                details=_scalar_details(outcome.details),
            )
        answer = ResultAnswer(
            id=request_id,
            result=outcome.result.model_dump(mode="json", by_alias=True),
            logged=logged,
        )
        return answer.model_dump_json(), outcome.body, outcome.attachment

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
                request_id, op_name, project = env.id, env.op, _project_of(env.args)
            except Refused:
                request_id = salvage_id(text)
        refusal = oversized(part, size)
        logged = await self._audit_refusal(op_name, actor, refusal, project)
        return RefusalAnswer(id=request_id, refusal=refusal.body(), logged=logged).model_dump_json()

    async def _drain(
        self, outcome: Outcome, sink: Callable[[bytes], Awaitable[None]] | None
    ) -> Outcome:
        gathered: list[bytes] = []
        assert outcome.stream is not None
        async for chunk in outcome.stream:
            if sink is None:
                gathered.append(chunk)
            else:
                await sink(chunk)
        result = await outcome.finish() if outcome.finish is not None else outcome.result
        return Outcome(
            result,
            body=b"".join(gathered) if sink is None else None,
            project=outcome.project,
            rule=outcome.rule,
            details=outcome.details,
        )

    def _admit(
        self,
        op: Operation,
        args: dict[str, Any],
        body: bytes | None,
        origin: str | None,
        actor: str,
        attachment: object = None,
    ) -> Call:
        try:
            parsed = op.args.model_validate(args)
        except ValidationError as exc:
            names = known_names(op.args)
            raise Refused(
                Code.MESSAGE_MALFORMED, quiet_error_text(exc, names, prefix="args.")
            ) from None
        if body is not None and len(body) > MAX_BODY_BYTES:
            raise oversized("body", len(body))
        if op.body_in == "required" and body is None:
            raise Refused(Code.MESSAGE_MALFORMED, f"'{op.name}' needs a body.")
        if op.body_in == "none" and body is not None:
            raise Refused(Code.MESSAGE_MALFORMED, f"'{op.name}' takes no body.")
        if attachment is not None and not op.attachment_in:
            raise Refused(Code.MESSAGE_MALFORMED, f"'{op.name}' takes no attachment.")
        if op.writes and self.ctx.policy.read_only:
            raise Refused(Code.READ_ONLY_MODE)
        return Call(self.ctx, parsed, body, origin, actor, attachment)

    async def _run(self, op: Operation, call: Call) -> Outcome:
        if not op.writes:
            return await op.handler(call)
        async with self._write_lock:
            return await op.handler(call)

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
            return await self.ctx.audit.append(**fields)
        except Exception:
            log.exception("audit append failed")
            return None
