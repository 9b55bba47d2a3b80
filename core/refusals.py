"""The one closed list of refusal codes, with their statuses and meanings.

Every refusal the host gives — to the page, to a peer, in the audit — names a code from
:class:`Code`. A code carries an HTTP-like ``status`` (SPEC §4) and, where the seed defines
one, a WebSocket-like close code (seed 002 §5: 1008 for channel refusals).

Names follow their source: seed 002 and seed 003 codes are kebab-case, seed 004 codes keep the
seed's snake_case (``stale_head``, ``human_gesture_required``); codes this project adds are
kebab-case. A rule elsewhere in ``core`` raises :class:`Refused`; the boundary turns it into a
:class:`RefusalBody` ``{code, status, message}``. Messages are written by the code that refuses
and must never contain a bearer, a host token or a key (SPEC §6, last line); as a last guard,
:meth:`Refused.body` replaces anything shaped like one (:func:`core.secret.scrub_secrets`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.relayed_text import escape_invisible
from core.secret import capitalised, quiet_error_text, quiet_first_error, scrub_secrets

__all__ = ["REFUSALS", "Code", "RefusalBody", "RefusalInfo", "Refused", "info", "invalid_input"]


class Code(StrEnum):
    """Closed list of refusal codes (SPEC §4–§10). Adding one means adding its info below."""

    # host protocol (SPEC §4)
    MESSAGE_MALFORMED = "message-malformed"
    MESSAGE_TOO_LARGE = "message-too-large"
    PROTOCOL_VERSION_UNSUPPORTED = "protocol-version-unsupported"
    OPERATION_UNKNOWN = "operation-unknown"
    INTERNAL_ERROR = "internal-error"
    HOST_NOT_READY = "host-not-ready"
    HOST_ACTIVE_ELSEWHERE = "host-active-elsewhere"
    HOST_RESTARTED = "host-restarted"
    BOOT_FAILED = "boot-failed"
    WHEEL_REFUSED = "wheel-refused"

    # storage and paths (SPEC §3, §7)
    PATH_INVALID = "path-invalid"
    PATH_OUTSIDE_ROOT = "path-outside-root"
    PATH_RESERVED = "path-reserved"
    PATH_CASE_COLLISION = "path-case-collision"
    PATH_NFC_COLLISION = "path-nfc-collision"
    NAME_INVALID = "name-invalid"
    PROJECT_NOT_FOUND = "project-not-found"
    FILE_NOT_FOUND = "file-not-found"
    FILE_CHANGED = "file-changed"
    ALREADY_EXISTS = "already-exists"
    NOT_A_DIRECTORY = "not-a-directory"
    IS_A_DIRECTORY = "is-a-directory"
    DIRECTORY_NOT_EMPTY = "directory-not-empty"
    FILE_TOO_LARGE = "file-too-large"
    STORAGE_QUOTA_EXCEEDED = "storage-quota-exceeded"
    STORAGE_FAILED = "storage-failed"
    PERMISSION_REQUIRED = "permission-required"
    PERMISSION_DENIED = "permission-denied"

    # custody and pairing (seed 002 §5, SPEC §6)
    HOST_TOKEN_REQUIRED = "host-token-required"
    UNKNOWN_ENVIRONMENT = "unknown-environment"
    ENVIRONMENT_NOT_PAIRED = "environment-not-paired"
    PAIRING_REVOKED = "pairing-revoked"
    BEARER_REFUSED = "bearer-refused"
    UNAUTHENTICATED_CALL = "unauthenticated-call"
    EXECUTOR_UNAUTHENTICATED = "executor-unauthenticated"
    ENVIRONMENT_UNREACHABLE = "environment-unreachable"
    PEER_ANSWER_INVALID = "peer-answer-invalid"
    PAIRING_CODE_REFUSED = "pairing-code-refused"
    RATE_LIMITED = "rate-limited"

    # tools, plugins and admission (seed 003, SPEC §7)
    TOOL_UNKNOWN = "tool-unknown"
    TOOL_DISABLED = "tool-disabled"
    DISPATCH_OWNER_CHANGED = "dispatch-owner-changed"
    READ_ONLY_MODE = "read-only-mode"
    PLUGIN_NOT_ADMITTED = "plugin-not-admitted"
    PLUGIN_WITHDRAWN = "plugin-withdrawn"
    ARGS_INVALID = "args-invalid"
    CONFIRMATION_REQUIRED = "confirmation-required"
    GRANT_FIELD_REFUSED = "grant-field-refused"
    FILES_GRANT_MISSING = "files-grant-missing"
    CAPABILITY_UNDECLARED = "capability-undeclared"
    NETWORK_EGRESS_REFUSED = "network-egress-refused"
    REGISTRATION_CONFLICT = "registration-conflict"
    REGISTRATION_INVALID = "registration-invalid"
    EFFECT_CLASS_EXCEEDED = "effect-class-exceeded"
    RECEIPT_FORGERY_REFUSED = "receipt-forgery-refused"
    PLUGIN_PIN_MISMATCH = "plugin-pin-mismatch"
    RECEIPT_WINDOW_INVALID = "receipt-window-invalid"
    RECEIPT_SCOPE_INVALID = "receipt-scope-invalid"
    STORE_VERSION_CONFLICT = "store-version-conflict"

    # the create-asset sandbox (SPEC §8)
    TOOL_TIMEOUT = "tool-timeout"
    TOOL_MEMORY_EXCEEDED = "tool-memory-exceeded"
    TOOL_OUTPUT_INVALID = "tool-output-invalid"
    SANDBOX_UNAVAILABLE = "sandbox-unavailable"
    KEY_NOT_GRANTED = "key-not-granted"

    # missions, mailbox, blocks (seed 004, SPEC §9) — the seed's own names
    LETTER_INVALID = "letter_invalid"
    STALE_HEAD = "stale_head"
    UNKNOWN_BLOCK = "unknown_block"
    BRAIN_MISMATCH = "brain_mismatch"
    INVALID_TRANSITION = "invalid_transition"
    HUMAN_GESTURE_REQUIRED = "human_gesture_required"
    SANITIZER_REFUSED = "sanitizer_refused"

    # archives (SPEC §10)
    ARCHIVE_INVALID = "archive-invalid"
    ARCHIVE_ENTRY_ABSOLUTE = "archive-entry-absolute"
    ARCHIVE_ENTRY_TRAVERSAL = "archive-entry-traversal"
    ARCHIVE_ENTRY_DRIVE = "archive-entry-drive"
    ARCHIVE_ENTRY_NAME_INVALID = "archive-entry-name-invalid"
    ARCHIVE_ENTRY_DUPLICATE = "archive-entry-duplicate"
    ARCHIVE_ENTRY_CASE_COLLISION = "archive-entry-case-collision"
    ARCHIVE_ENTRY_SYMLINK = "archive-entry-symlink"
    ARCHIVE_ENTRY_SIZE_MISMATCH = "archive-entry-size-mismatch"
    ARCHIVE_RATIO_EXCEEDED = "archive-ratio-exceeded"
    ARCHIVE_TOO_LARGE = "archive-too-large"
    ARCHIVE_MEMORY_BROKEN = "archive-memory-broken"


@dataclass(frozen=True, slots=True)
class RefusalInfo:
    """Status numbers and a one-line human meaning of a refusal code.

    ``status`` is HTTP-like (SPEC §4); ``ws`` is the WebSocket-like close code a channel uses
    when it refuses with this code (seed 002 §5), or ``None`` when the code is never a close.
    """

    status: int
    meaning: str
    ws: int | None = None


_I = RefusalInfo

REFUSALS: dict[Code, RefusalInfo] = {
    Code.MESSAGE_MALFORMED: _I(400, "The message does not match the host protocol."),
    Code.MESSAGE_TOO_LARGE: _I(413, "The message is larger than the protocol allows."),
    Code.PROTOCOL_VERSION_UNSUPPORTED: _I(400, "This host does not speak that protocol version."),
    Code.OPERATION_UNKNOWN: _I(404, "The host has no such operation."),
    Code.INTERNAL_ERROR: _I(500, "The host failed unexpectedly; nothing was changed by this call."),
    Code.HOST_NOT_READY: _I(503, "The host is still starting."),
    Code.HOST_ACTIVE_ELSEWHERE: _I(
        423, "Another tab owns the storage; this tab does not write until that tab closes."
    ),
    Code.HOST_RESTARTED: _I(
        503, "The host stopped during this call and was restarted; its outcome is unknown."
    ),
    Code.BOOT_FAILED: _I(503, "The host could not start; the message names the file and cause."),
    Code.WHEEL_REFUSED: _I(
        503, "A Python wheel did not match its pinned sha256; the host refuses to start."
    ),
    Code.PATH_INVALID: _I(400, "The path is empty, too long, or holds a forbidden character."),
    Code.PATH_OUTSIDE_ROOT: _I(403, "The path leaves the project root."),
    Code.PATH_RESERVED: _I(403, "The path names a place the file operations may not touch."),
    Code.PATH_CASE_COLLISION: _I(
        409, "In a picked folder, the name differs only in letter case from one already there."
    ),
    Code.PATH_NFC_COLLISION: _I(
        409, "The name, composed to Unicode NFC, is already taken by a name that looks the same."
    ),
    Code.NAME_INVALID: _I(400, "The name is empty, too long, or holds a forbidden character."),
    Code.PROJECT_NOT_FOUND: _I(404, "There is no project with that id."),
    Code.FILE_NOT_FOUND: _I(404, "There is no file or folder at that path."),
    Code.FILE_CHANGED: _I(
        409, "The file changed since it was opened; reload it, overwrite it, or save as."
    ),
    Code.ALREADY_EXISTS: _I(409, "Something already exists at that path."),
    Code.NOT_A_DIRECTORY: _I(409, "A part of the path is a file, not a folder."),
    Code.IS_A_DIRECTORY: _I(409, "The path names a folder where a file is needed."),
    Code.DIRECTORY_NOT_EMPTY: _I(409, "The folder is not empty."),
    Code.FILE_TOO_LARGE: _I(413, "The file is larger than this operation allows."),
    Code.STORAGE_QUOTA_EXCEEDED: _I(
        507, "The browser's storage quota is full; nothing was written."
    ),
    Code.STORAGE_FAILED: _I(500, "The browser's storage failed; nothing was written."),
    Code.PERMISSION_REQUIRED: _I(
        403, "Access to the folder must be granted again by a click before it opens."
    ),
    Code.PERMISSION_DENIED: _I(403, "Access to the folder was denied."),
    Code.HOST_TOKEN_REQUIRED: _I(403, "The host token is missing or wrong."),
    Code.UNKNOWN_ENVIRONMENT: _I(404, "No environment with that envKey is registered."),
    Code.ENVIRONMENT_NOT_PAIRED: _I(403, "This host holds no bearer for that environment."),
    Code.PAIRING_REVOKED: _I(403, "The pairing with that environment was revoked.", ws=1008),
    Code.BEARER_REFUSED: _I(
        403, "The presented bearer is not valid for that environment.", ws=1008
    ),
    Code.UNAUTHENTICATED_CALL: _I(401, "The call carried no bearer.", ws=1008),
    Code.EXECUTOR_UNAUTHENTICATED: _I(
        1008, "The executor channel did not authenticate in time.", ws=1008
    ),
    Code.ENVIRONMENT_UNREACHABLE: _I(502, "The paired environment did not answer in time."),
    Code.PEER_ANSWER_INVALID: _I(
        502, "The paired environment answered outside the protocol; its outcome is unknown."
    ),
    Code.PAIRING_CODE_REFUSED: _I(
        403, "The pairing code is wrong, expired, used or burnt; ask the operator for a new one."
    ),
    Code.RATE_LIMITED: _I(429, "Too many tries in a short time; wait a minute and try again."),
    Code.TOOL_UNKNOWN: _I(404, "No tool or operation is registered under that name."),
    Code.TOOL_DISABLED: _I(403, "That tool is switched off."),
    Code.DISPATCH_OWNER_CHANGED: _I(
        409, "The operation is no longer owned by the origin that was described."
    ),
    Code.READ_ONLY_MODE: _I(403, "The host is in read-only (SAFE) mode; nothing may be written."),
    Code.PLUGIN_NOT_ADMITTED: _I(403, "That plugin release is not admitted."),
    Code.PLUGIN_WITHDRAWN: _I(410, "That plugin operation was withdrawn."),
    Code.ARGS_INVALID: _I(422, "The arguments do not match the operation's schema."),
    Code.CONFIRMATION_REQUIRED: _I(428, "This operation needs the operator's confirmation."),
    Code.GRANT_FIELD_REFUSED: _I(400, "A request may not carry its own grant object."),
    Code.FILES_GRANT_MISSING: _I(403, "The operator has not granted file access for this."),
    Code.CAPABILITY_UNDECLARED: _I(403, "The operation did not declare that capability."),
    Code.NETWORK_EGRESS_REFUSED: _I(403, "Network egress is not available in this placement."),
    Code.REGISTRATION_CONFLICT: _I(409, "Another origin already holds that operation name."),
    Code.REGISTRATION_INVALID: _I(422, "The operation's registration is not self-consistent."),
    Code.EFFECT_CLASS_EXCEEDED: _I(
        403, "The request goes beyond the effect class its operation declared."
    ),
    Code.RECEIPT_FORGERY_REFUSED: _I(422, "A result may not supply its own receipt."),
    Code.PLUGIN_PIN_MISMATCH: _I(422, "A plugin module is not the one its manifest pins."),
    Code.RECEIPT_WINDOW_INVALID: _I(422, "The receipt's execution window is not acceptable."),
    Code.RECEIPT_SCOPE_INVALID: _I(
        409, "The receipt was proved at a boundary or contract the block no longer has."
    ),
    Code.STORE_VERSION_CONFLICT: _I(
        409, "The system-block store changed since the version this request names."
    ),
    Code.TOOL_TIMEOUT: _I(504, "The tool ran past its time limit and was stopped."),
    Code.TOOL_MEMORY_EXCEEDED: _I(507, "The tool needed more memory than it may use."),
    Code.TOOL_OUTPUT_INVALID: _I(502, "The tool returned bytes the host will not write."),
    Code.SANDBOX_UNAVAILABLE: _I(503, "The tool sandbox is not connected."),
    Code.KEY_NOT_GRANTED: _I(
        403, "A provider key the run needs is not granted to that environment by a person."
    ),
    Code.LETTER_INVALID: _I(422, "The mission letter does not satisfy its schema or phase rules."),
    Code.STALE_HEAD: _I(409, "The letter does not extend the mission's current head."),
    Code.UNKNOWN_BLOCK: _I(422, "The letter names a block this project does not have."),
    Code.BRAIN_MISMATCH: _I(422, "The letter names a different project."),
    Code.INVALID_TRANSITION: _I(409, "That phase may not follow the mission's current head."),
    Code.HUMAN_GESTURE_REQUIRED: _I(403, "Only a person's gesture in the page may do this."),
    Code.SANITIZER_REFUSED: _I(422, "A name or purpose failed the runner-seat sanitizer."),
    Code.ARCHIVE_INVALID: _I(422, "The file is not a readable zip archive."),
    Code.ARCHIVE_ENTRY_ABSOLUTE: _I(422, "An archive entry has an absolute path."),
    Code.ARCHIVE_ENTRY_TRAVERSAL: _I(422, "An archive entry climbs out with '..'."),
    Code.ARCHIVE_ENTRY_DRIVE: _I(422, "An archive entry names a drive letter."),
    Code.ARCHIVE_ENTRY_NAME_INVALID: _I(422, "An archive entry's name is not a valid path."),
    Code.ARCHIVE_ENTRY_DUPLICATE: _I(422, "Two archive entries have the same name."),
    Code.ARCHIVE_ENTRY_CASE_COLLISION: _I(422, "Two archive entries differ only by letter case."),
    Code.ARCHIVE_ENTRY_SYMLINK: _I(422, "An archive entry is a symbolic link."),
    Code.ARCHIVE_ENTRY_SIZE_MISMATCH: _I(
        422, "An archive entry's declared and actual sizes differ."
    ),
    Code.ARCHIVE_RATIO_EXCEEDED: _I(422, "The archive expands more than the allowed ratio."),
    Code.ARCHIVE_TOO_LARGE: _I(413, "The archive expands past the allowed total size."),
    Code.ARCHIVE_MEMORY_BROKEN: _I(
        422, "The project memory in the archive (blocks or letters) does not verify."
    ),
}


def info(code: Code) -> RefusalInfo:
    """Return the status numbers and meaning of ``code`` (every code has one)."""
    return REFUSALS[code]


class RefusalBody(BaseModel):
    """A refusal as it crosses a boundary: ``{code, status, message}`` (SPEC §4).

    ``field`` names the offending input field where one is known (seed 004 §8 refusals name it).
    ``details`` is present only when the refusing rule chose to show its non-secret context to
    the caller (e.g. ``stale_head`` carries the mission's actual head, seed 004 §1e).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: Code
    status: int = Field(description="HTTP-like status of the code (see REFUSALS).")
    message: str = Field(max_length=2000, description="A human sentence; never a secret.")
    field: str | None = Field(default=None, max_length=200)
    details: dict[str, str | int | bool | None] | None = None


class Refused(Exception):
    """Raised inside ``core`` when a rule refuses; caught at the boundary.

    ``code`` is from :class:`Code`; ``message`` is a human sentence (defaults to the code's
    meaning); ``field`` optionally names the input field; ``details`` carries non-secret,
    JSON-safe context for the audit record (e.g. the actual head for ``stale_head``);
    ``show_details`` also puts those details in the answer the caller receives.
    """

    def __init__(
        self,
        code: Code,
        message: str | None = None,
        *,
        field: str | None = None,
        details: dict[str, Any] | None = None,
        show_details: bool = False,
    ) -> None:
        self.code = Code(code)
        self.message = message or REFUSALS[self.code].meaning
        self.field = field
        self.details = details or {}
        self.show_details = show_details
        super().__init__(f"{self.code}: {self.message}")

    @property
    def status(self) -> int:
        """HTTP-like status of this refusal's code."""
        return REFUSALS[self.code].status

    def body(self) -> RefusalBody:
        """The boundary form ``{code, status, message[, field][, details]}``, with anything
        shaped like a bearer or a host token replaced (:func:`core.secret.scrub_secrets`) and
        every invisible or direction-changing character of the message and details written
        out visibly (:func:`core.relayed_text.escape_invisible`; a plugin's or a peer's error
        text is relayed here — issue 29 item 4)."""
        shown = None
        if self.show_details and self.details:
            shown = {
                scrub_secrets(str(k)[:64]): v
                if isinstance(v, bool | int) or v is None
                else scrub_secrets(escape_invisible(str(v)[:1000]))
                for k, v in list(self.details.items())[:24]
            }
        return RefusalBody(
            code=self.code,
            status=self.status,
            message=scrub_secrets(escape_invisible(self.message[:2000])),
            field=None if self.field is None else scrub_secrets(self.field[:200]),
            details=shown,
        )


def invalid_input(
    exc: ValidationError,
    names: frozenset[str],
    *,
    code: Code,
    under: str = "",
    first: bool = False,
    fallback: str | None = None,
    field: str | None = None,
) -> Refused:
    """The refusal for input that failed its model: the ONE way a validation error becomes a
    sentence (seed 002 §2: no input value, no unknown key, ever — only ``names``, the fields
    and ``Literal`` values our models declare, and fixed phrases, :mod:`core.secret`; issue 17:
    a person reads the rule in words, never a validator location like ``args.to`` or a regex).

    ``names`` is :func:`core.secret.known_names` of the models; ``code`` the refusal code;
    ``under`` the part of a larger message the model checks (``letter``), said in words.

    - By default every error is said, at most three, in one sentence
      (``path is too long (at most 5000 characters); one of the fields sent is not one this
      takes.``); the refusal names ``field`` (or none).
    - With ``first``, only the first error is said (``exit_status of gate of letter must be a
      whole number.``), and the refusal names its field as a program reads it
      (``letter.gate.exit_status``) — or ``fallback`` (default ``under``) when not even its
      first part is ours.
    """
    if not first:
        return Refused(code, quiet_error_text(exc, names, under=under), field=field)
    known, sentence = quiet_first_error(exc, names, under=under)
    if under and known:
        where = f"{under}.{known}"
    else:
        where = known or (under if fallback is None else fallback)
    return Refused(code, capitalised(f"{sentence}.")[:1000], field=where or None)
