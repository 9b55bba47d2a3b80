"""Fenced environment commands: ``exec``, ``git/init``, ``git/config`` (seed 002 §4; SPEC §6).

They are reached only through a paired, admitted call (the routes authorise the bearer first,
:mod:`server_host.service`), and only as the environment's operator allows in HOST_DIR
``commands.json`` (:class:`CommandPolicy`, written by ``voicebox-env policy``; read afresh for
every call). ``exec`` is **off** until the operator turns it on; the git commands are on
unless turned off; every one of them is refused ``read-only-mode`` in SAFE mode.

How a command runs (:func:`run_argv`):

- an **argv** list, never a shell string (no shell is started; ``argv[0]`` is looked up on the
  scrubbed ``PATH``);
- the project's folder as the working directory;
- a **scrubbed environment**: only ``PATH`` (the fixed :data:`SAFE_PATH`), ``HOME`` (an empty
  folder of the server's own), ``LANG``/``LC_ALL`` ``C.UTF-8``, ``TZ=UTC`` and, for git, the
  switches that keep the machine's own git configuration and prompts out — nothing the server
  inherited, so no token or key of its environment reaches a command;
- **a process sandbox** (:mod:`server_host.sandbox`, issue 29 item 7): the project folder
  read-write, the system read-only, a private ``/tmp`` and ``HOME``, and nothing of the
  environment's root (HOST_DIR, other projects), the users' homes or ``/run``; no network;
  refused ``sandbox-unavailable`` where the server has no sandbox, unless its operator opted
  out (``serve --exec-unsandboxed``);
- **stdin closed** (``/dev/null``), stdout and stderr as one output stream;
- a **time limit**: past it the whole process group (the command runs in a session of its
  own; in the sandbox, its whole pid namespace) is killed with ``SIGKILL``;
- an **output cap**: the first ``output_cap_bytes`` are kept, the rest is read and dropped
  (counted, hashed) so the command never blocks on a full pipe;
- **the server's secrets redacted** from the output (issue 29 item 7, a second wall behind the
  sandbox): the exact value of every secret the server holds — host token, audit key, the
  bearers it can match, runner secrets — in raw, base64, hex, percent-encoded and JSON-escaped
  forms, and a bearer's body without its prefix in any case, becomes ``[redacted]``, also when
  it is split across two reads of the pipe (:class:`core.redaction.StreamRedactor`). The cap,
  the size and the sha256 are of the redacted output: what the caller receives; the audited
  argv is redacted the same way (:mod:`server_host.service`).

What a run returns and what the audit keeps: the argv, exit status (or the signal), duration,
whether it timed out or was cut, the output's size and sha256 — never the environment's
variables, and which sandbox ran it (``bubblewrap`` or ``none``). What exec can and cannot
see: docs/security.md, "What fenced commands see".
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import ConfigDict, Field, ValidationError

from core.custody.remote import CommandRun
from core.model import Contract
from core.redaction import Redactor, StreamRedactor
from core.refusals import Code, Refused
from server_host.sandbox import Fence, ProcessSandbox, spawn

__all__ = [
    "COMMANDS_DOC",
    "GIT_CONFIG_KEYS",
    "SAFE_PATH",
    "CommandPolicy",
    "ExecArgs",
    "GitConfigArgs",
    "ProjectArgs",
    "RunResult",
    "run_argv",
]

COMMANDS_DOC = "commands.json"
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
GIT_CONFIG_KEYS = frozenset({"user.name", "user.email", "core.autocrlf", "core.eol"})
"""The only keys ``git/config`` sets: keys such as ``core.sshCommand``, ``core.fsmonitor`` or
``core.hooksPath`` make git run programs, so they are not the caller's to choose."""
MAX_ARGV = 256
MAX_ARG_CHARS = 4096


class CommandPolicy(Contract):
    """HOST_DIR ``commands.json``: the operator's switches for fenced commands."""

    exec_enabled: bool = Field(default=False, description="exec runs only when true.")
    git_enabled: bool = Field(default=True, description="git/init and git/config run.")
    time_limit_ms: int = Field(default=10_000, ge=100, le=3_600_000)
    output_cap_bytes: int = Field(default=1 << 20, ge=1024, le=64 << 20)

    model_config = ConfigDict(populate_by_name=True)


def load_command_policy(raw: bytes | None) -> CommandPolicy:
    """The policy from ``commands.json``'s bytes (the defaults when absent). One that does not
    parse turns every command off (fails closed)."""
    if raw is None:
        return CommandPolicy()
    try:
        return CommandPolicy.model_validate_json(raw)
    except ValidationError:
        return CommandPolicy(exec_enabled=False, git_enabled=False)


class ProjectArgs(Contract):
    """A fenced command's project: its id."""

    project: str = Field(pattern=r"^p_[0-9a-f]{16}$")


class ExecArgs(ProjectArgs):
    """``exec``: the argv to run, and a time limit of its own (at most the operator's)."""

    argv: tuple[str, ...] = Field(min_length=1, max_length=MAX_ARGV)
    time_limit_ms: int | None = Field(default=None, alias="timeLimitMs", ge=1)


class GitConfigArgs(ProjectArgs):
    """``git/config``: one key of :data:`GIT_CONFIG_KEYS` and its value."""

    key: str = Field(max_length=64)
    value: str = Field(max_length=1000)


RunResult = CommandRun
"""What a command did: the wire contract :class:`core.custody.remote.CommandRun`."""


def check_argv(argv: tuple[str, ...]) -> None:
    """Refuse ``args-invalid`` for an argv element that is empty, too long or holds a NUL."""
    for arg in argv:
        if "\x00" in arg or len(arg) > MAX_ARG_CHARS:
            raise Refused(Code.ARGS_INVALID, "An argv element is too long or holds a NUL.")
    if not argv[0]:
        raise Refused(Code.ARGS_INVALID, "The program name is empty.", field="argv")


def scrubbed_env(home: Path, *, git: bool = False) -> dict[str, str]:
    """The whole environment a command gets (see the module docstring)."""
    env = {
        "PATH": SAFE_PATH,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
    }
    if git:
        env |= {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
        }
    return env


@dataclass
class _Output:
    cap: int
    kept: bytearray
    total: int = 0

    def __post_init__(self) -> None:
        self.digest = hashlib.sha256()

    def take(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.digest.update(chunk)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept.extend(chunk[:room])


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def run_argv(
    argv: tuple[str, ...],
    *,
    cwd: Path,
    env: dict[str, str],
    time_limit_ms: int,
    output_cap_bytes: int,
    sandbox: ProcessSandbox,
    fence: Fence,
    redactor: Redactor | None = None,
) -> RunResult:
    """Run ``argv`` as the module docstring says, inside ``fence`` (:mod:`server_host.sandbox`:
    refused ``sandbox-unavailable`` where this server has no sandbox and no opt-out). A
    program that cannot be started is refused ``args-invalid`` (not found, not executable);
    nothing else is raised for what the command itself does. ``redactor`` holds the secrets
    the server holds: its output passes it as a stream (issue 29 item 7's second wall)."""
    import base64

    check_argv(argv)
    started = time.monotonic()
    try:
        process = await spawn(argv, sandbox=sandbox, fence=fence, cwd=cwd, env=env)
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        raise Refused(
            Code.ARGS_INVALID, "That program is not found or not executable here.", field="argv"
        ) from None
    output = _Output(output_cap_bytes, bytearray())
    assert process.stdout is not None
    stream = process.stdout
    redacting = StreamRedactor(redactor or Redactor())

    async def drain() -> None:
        while chunk := await stream.read(1 << 16):
            output.take(redacting.feed(chunk))

    timed_out = False
    reader = asyncio.ensure_future(drain())
    try:
        await asyncio.wait_for(process.wait(), time_limit_ms / 1000)
    except TimeoutError:
        timed_out = True
        _kill_group(process)
        await process.wait()
    except BaseException:  # cancelled (a revocation): nothing of it may outlive the call
        _kill_group(process)
        reader.cancel()
        raise
    _kill_group(process)  # what it left behind in its group goes too
    try:
        await asyncio.wait_for(reader, 2)
    except TimeoutError:
        reader.cancel()
    output.take(redacting.flush())
    code = process.returncode if process.returncode is not None else -signal.SIGKILL
    return RunResult(
        exit_status=code,
        duration_ms=int((time.monotonic() - started) * 1000),
        timed_out=timed_out,
        truncated=output.total > len(output.kept),
        output_bytes=output.total,
        output_sha256=output.digest.hexdigest(),
        output_b64=base64.b64encode(bytes(output.kept)).decode("ascii"),
    )
