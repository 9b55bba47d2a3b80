"""Landing a remote mission: a person imports a ``merge_wait`` candidate's receipt and the
``landed`` letter posts, on the environment server that holds the project (issue 30, Review;
seed 004 §1c, §5c, F2.5d).

The paired browser host asks ``POST /api/environments/:key/missions/land`` with its bearer on
a person's gesture (its ``remote.land``); :class:`Landing` (a part of
:class:`server_host.runner_desk.RunnerDesk`) checks every rule again and runs the one landing
there is, ``tray.land`` (:mod:`core.host.tray_ops`), through this server's own pipeline. The
rule of evidence (a claim-only candidate needs the person's confirmation) is
:func:`core.missions.remote_runs.require_claim_confirmed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
from pathlib import Path
from typing import Any

from pydantic import Field

from core.gestures import HUMAN_UI
from core.host.tray_ops import LandArgs
from core.missions.blocks import load_store
from core.missions.letters import sha12
from core.missions.remote_runs import require_claim_confirmed
from core.missions.tray import candidate_to_land
from core.model import Contract
from core.policy import require_writable
from core.refusals import Code, Refused
from core.secret import Secret
from server_host.runner_run import log_path, log_record

__all__ = ["LandBody", "Landing"]


class LandBody(Contract):
    """``POST /api/environments/:key/missions/land`` (bearer): the ``merge_wait`` mission a
    person lands, and ``confirmClaim``: the person confirmed importing a candidate that is only
    its poster's claim (the page's extra dialog; without it such a candidate is refused)."""

    project: str = Field(max_length=64)
    mission_id: str = Field(alias="missionId", pattern=r"^msn_[0-9a-f]{12}$")
    confirm_claim: bool = Field(default=False, alias="confirmClaim")


def _land_answer(
    mission_id: str, landed: Any, letter_id: str, *, block: Any, checked: bool, duplicate: bool
) -> dict[str, Any]:
    """The land route's answer for the ``landed`` letter ``landed`` (a
    :class:`~core.missions.letters.MissionLetter`) whose id is ``letter_id``. No path."""
    receipt = landed.receipt
    return {
        "missionId": mission_id,
        "storeVersion": receipt.store_version,
        "blockId": landed.block_id,
        "color": None if block is None else block.color,
        "letterSha12": sha12(letter_id),
        "seq": landed.mission_seq,
        "checked": checked,
        "duplicate": duplicate,
    }


class Landing:
    """The desk's landing (part of :class:`~server_host.runner_desk.RunnerDesk`; issue 30)."""

    service: Any
    root: Path

    @functools.cached_property
    def _land_lock(self) -> asyncio.Lock:
        """Landings on this server run one at a time (a second sees the first's letter)."""
        return asyncio.Lock()

    async def land_by_bearer(
        self, env_key: str, bearer: Secret | None, raw: bytes
    ) -> dict[str, Any]:
        """``POST /api/environments/:key/missions/land``: the bearer first (the server's
        decision order, ``unknown-environment`` … ``bearer-refused``: a runner's secret is no
        bearer, so a runner's seat is refused here), then :meth:`land`; refusals audited as
        ``mission.land``."""
        from server_host.service import parse_body

        authorized = await self.service._authorize("mission.land", env_key, bearer)
        actor = f"peer:{authorized.bearer_hash[:12]}"
        try:
            return await self.land(actor, parse_body(LandBody, raw))
        except Refused as refusal:
            await self.service._refused("mission.land", refusal, actor=actor)
            raise

    async def _kept_log_matches(self, mission_id: str, artifact_hash: object) -> bool:
        """True when ``artifact_hash`` is the sha256 of the whole log this environment's
        runner recorded for ``mission_id`` (what :meth:`RunnerDesk.evidence` answers)."""
        record = log_record(log_path(self.root, mission_id))
        return (
            record is not None
            and isinstance(artifact_hash, str)
            and hmac.compare_digest(str(record.get("sha256", "")), artifact_hash)
        )

    async def land(self, actor: str, body: LandBody) -> dict[str, Any]:
        """A person lands a ``merge_wait`` mission of a project on this server: every rule
        again, in this order, under one lock —

        1. SAFE mode refuses ``read-only-mode``; no such mission ``args-invalid``;
        2. a mission already ``landed`` is answered again from its landed letter
           (``duplicate: true``; nothing imported or posted twice);
        3. the head is ``merge_wait`` (``invalid_transition``) carrying a candidate
           (``args-invalid``) — :func:`core.missions.tray.candidate_to_land`;
        4. the candidate's artifact hash is a log this environment's runner kept
           (``checked``), or the person confirmed the claim
           (:func:`core.missions.remote_runs.require_claim_confirmed`:
           ``confirmation-required``);
        5. ``tray.land`` through this server's own pipeline — the one landing of
           :mod:`core.host.tray_ops`: ``receipt.import`` (candidate complete, window, scope,
           idempotent by candidate id) into the project's block store, then the ``landed``
           letter as ``operator`` naming the store version the import made, with the head
           CAS and the landed law of ``mission.post``; each audited there.

        Custody (docs/runner.md "Landing"): the server has no page of its own; the paired
        browser host's bearer is the person's authority here, and that host calls this route
        only on a person's gesture (its ``remote.land`` is gesture-gated), so the server runs
        ``tray.land`` with the gesture origin on the bearer's word — as it merges on it. A
        runner holds no bearer. Audited ``mission.land`` (mission, store version, letter,
        ``checked``, ``claim_confirmed``). Answer: :func:`_land_answer` (no path, no
        secret)."""
        async with self._land_lock:
            policy = await self.service.composed.reload_policy()
            require_writable(policy)  # SAFE mode: the one check
            opened, mailbox = await self.service.ctx.open_mailbox(body.project)
            head = await mailbox.head(body.mission_id)
            if head is None:
                raise Refused(
                    Code.ARGS_INVALID, "That project has no mission by that id.", field="missionId"
                )
            duplicate = head.letter.phase == "landed" and head.letter.receipt is not None
            candidate = (
                head.letter.wire().get("receipt_candidate") or {}
                if duplicate
                else candidate_to_land(head.letter)
            )
            evidence = candidate.get("evidence")
            checked = await self._kept_log_matches(
                body.mission_id,
                evidence.get("artifact_hash") if isinstance(evidence, dict) else None,
            )
            if not duplicate:
                require_claim_confirmed(checked=checked, confirm_claim=body.confirm_claim)
                args = LandArgs(
                    project=body.project,
                    mission_id=body.mission_id,
                    letter_id=head.letter_id,
                    imported_via=HUMAN_UI,
                )
                ran = await self.service.composed.host.run(
                    "tray.land", args, actor=actor, origin=HUMAN_UI
                )
                head = await mailbox.head(body.mission_id)
                if head is None or head.letter_id != ran.result.posted.letter_id:
                    raise Refused(Code.INTERNAL_ERROR)
            store = await load_store(opened.files)
            answer = _land_answer(
                body.mission_id,
                head.letter,
                head.letter_id,
                block=None if store is None else store.block(head.letter.block_id),
                checked=checked,
                duplicate=duplicate,
            )
            if self.service.audit is not None:
                with contextlib.suppress(Exception):
                    await self.service.audit.append(
                        actor=actor,
                        op="mission.land",
                        decision="admitted",
                        rule="mission-landed-already" if duplicate else "mission-landed",
                        project=body.project,
                        details={
                            "mission": body.mission_id,
                            "store_version": answer["storeVersion"],
                            "letter_id": answer["letterSha12"],
                            "checked": checked,
                            "claim_confirmed": not checked and not duplicate,
                        },
                    )
            return answer
