"""Shared builders for the mission tests: letters, a project with a block store, chains.

Everything runs over the in-memory ports through the real dispatcher (``HostHarness``), with no
event loop, threads, sleeps or real filesystem, so the suite also runs inside Pyodide.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from core.memory.adapters import MemoryProjectFiles
from core.missions.blocks import SKELETON_PATH
from core.missions.mailbox import Mailbox
from tests.support import HostHarness, run

BRAIN = "Repo-B1"
HUMAN = "human-ui"
M1 = "msn_0000000000a1"
M2 = "msn_0000000000b2"
T_START = "2025-12-31T22:00:00Z"
T_UPDATE = "2025-12-31T23:00:00Z"
SHA_A = "sha256:" + "a" * 64
SHA_B = "sha256:" + "b" * 64

ROUTE = ("judging", "executing", "gate", "merge_wait")
"""The usual road to a green gate."""


def letter(
    *,
    mission: str = M1,
    seq: int = 1,
    prev: str | None = None,
    phase: str = "judging",
    block_id: str = "sb_unset",
    brain: str = BRAIN,
    **fields: Any,
) -> dict[str, Any]:
    """A valid letter as JSON data (only the fields a runner must send, plus ``fields``)."""
    body: dict[str, Any] = {
        "schema": "m1nd-mission-letter-v0",
        "mission_id": mission,
        "mission_seq": seq,
        "prev_letter_id": prev,
        "block_id": block_id,
        "brain_ref": brain,
        "seat": "hand",
        "runner_id": "build-1",
        "capability": "build-runner",
        "phase": phase,
        "started_at": T_START,
        "updated_at": T_UPDATE,
    }
    if phase == "merge_wait":
        body["gate"] = {"command": "pytest -q", "exit_status": 0, "artifact_hash": SHA_A}
    body.update(fields)
    return body


def candidate(block_id: str, *, boundary: int = 1, **window: str) -> dict[str, Any]:
    """A complete receipt candidate for ``block_id`` with a 30-minute window before the clock."""
    return {
        "block_id": block_id,
        "type": "test",
        "scope": {"boundary_version": boundary, "contract_version": 1},
        "evidence": {
            "artifact_hash": SHA_B,
            "evidence_refs": ["tests/test_importer.py"],
            "window": {
                "started_at": window.get("started_at", "2025-12-31T23:00:00Z"),
                "finished_at": window.get("finished_at", "2025-12-31T23:30:00Z"),
            },
        },
    }


class Kit:
    """A project named :data:`BRAIN` on a fresh host, with (by default) a block store holding
    one block. ``block`` and ``skeleton`` are its ids."""

    def __init__(self, *, store: bool = True, name: str = BRAIN) -> None:
        self.h = HostHarness()
        self.project = self.h.ok("project.create", name=name)["project"]["id"]
        self.block = ""
        self.skeleton = ""
        if store:
            answer = self.human(
                "blocks.candidate_edit",
                ops=[{"op": "add", "name": "Receipt importer", "purpose": "Imports receipts."}],
            )
            self.block = answer["added"][0]
            self.skeleton = answer["skeleton_id"]

    # -- calls -------------------------------------------------------------------------------

    def call(self, op: str, origin: str | None = None, **args: Any) -> dict[str, Any]:
        """The whole answer of ``op`` on this project."""
        answer, _ = self.h.call(op, origin=origin, project=self.project, **args)
        return answer

    def ok(self, op: str, origin: str | None = None, **args: Any) -> dict[str, Any]:
        """The result of ``op``; fails the test on a refusal."""
        answer = self.call(op, origin, **args)
        assert answer["ok"], answer
        return answer["result"]

    def refused(self, op: str, origin: str | None = None, **args: Any) -> dict[str, Any]:
        """The refusal of ``op``; fails the test when it succeeds."""
        answer = self.call(op, origin, **args)
        assert not answer["ok"], answer
        return answer["refusal"]

    def human(self, op: str, **args: Any) -> dict[str, Any]:
        """``op`` as a person's gesture in the page."""
        return self.ok(op, HUMAN, **args)

    # -- letters -----------------------------------------------------------------------------

    def letter(self, **kw: Any) -> dict[str, Any]:
        """:func:`letter` anchored at this project's block."""
        kw.setdefault("block_id", self.block or "sb_unset")
        return letter(**kw)

    def post(self, body: dict[str, Any], agent_id: str = "hand-1", **extra: Any) -> dict[str, Any]:
        """Post ``body``; return the result (fails on a refusal)."""
        return self.ok("mission.post", agent_id=agent_id, letter=body, **extra)

    def after(self, posted: dict[str, Any], phase: str, **fields: Any) -> dict[str, Any]:
        """The letter that extends the posted letter ``posted`` with ``phase``."""
        return self.letter(
            mission=posted["mission_id"],
            seq=posted["mission_seq"] + 1,
            prev=posted["sha12"],
            phase=phase,
            **fields,
        )

    def chain(self, phases: tuple[str, ...] = ROUTE, mission: str = M1, **fields: Any) -> dict:
        """Post a chain through ``phases``; return the last post's result."""
        posted = self.post(self.letter(mission=mission, phase=phases[0]))
        for phase in phases[1:]:
            extra = dict(fields) if phase == "merge_wait" else {}
            posted = self.post(self.after(posted, phase, **extra))
        return posted

    def heads(self) -> dict[str, dict[str, Any]]:
        """``mailbox.read kind=mission`` as mission id → head view."""
        result = self.ok("mailbox.read", kind="mission")
        return {h["mission_id"]: h for h in result["heads"]}

    # -- storage -----------------------------------------------------------------------------

    @property
    def files(self) -> MemoryProjectFiles:
        """This project's in-memory root."""
        return self.h.roots.roots[self.project]

    def mailbox_bytes(self) -> bytes:
        """The whole mailbox log, every segment in order."""
        return run(run(Mailbox.open(self.files)).raw_bytes())

    def segments(self) -> dict[str, bytes]:
        """The mailbox segments by name (a copy)."""
        folder = self.files.tree.get(".voicebox", {}).get("mailbox", {})
        return {name: bytes(data) for name, data in sorted(folder.items())}

    def store_bytes(self) -> bytes | None:
        """``.voicebox/skeleton.json`` as stored, or ``None``."""
        try:
            return run(self.files.read(SKELETON_PATH))
        except Exception:
            return None

    def store(self) -> dict[str, Any] | None:
        """The block store as ``blocks.get`` shows it."""
        return self.ok("blocks.get")["store"]

    def append_raw(self, raw: bytes) -> None:
        """Append bytes to the tail segment behind the host's back (a foreign writer)."""
        folder = self.files.tree[".voicebox"]["mailbox"]
        tail = max(folder)
        folder[tail] = folder[tail] + raw


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def deep(value: Any) -> Any:
    """A deep copy (tests mutate letters)."""
    return copy.deepcopy(value)
