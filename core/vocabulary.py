"""The named field types every contract shares, each written once (issue 35 item 1; STYLE §2).

A type here is ``Annotated[str, Field(pattern=..., description=...)]``: its pattern is the one
place the form is written, and its description is the sentence a refusal says of a value that
lacks the form (:func:`core.secret.quiet_error_text` reads it from :data:`RULES`), so the schema
in ``docs/`` and the refusal say the same words. A model declares ``project: ProjectId`` or
``sha256: Sha256Hex`` instead of restating the pattern; the ``*_PATTERN`` strings stay for the
few places that match text outside a model (a path, a URL part).

Kernel module: imports nothing of ``core`` but the kernel (tests/core/test_layering.py).
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

__all__ = [
    "DESCRIPTOR_ID_PATTERN",
    "ENV_KEY_PATTERN",
    "MISSION_ID_PATTERN",
    "PROJECT_ID_PATTERN",
    "RULES",
    "SHA256_OR_EMPTY_PATTERN",
    "SHA256_PATTERN",
    "SHA256_REF_PATTERN",
    "DescriptorId",
    "EnvKey",
    "MissionBranch",
    "MissionId",
    "ProjectId",
    "Sha256Hex",
    "Sha256OrEmpty",
    "Sha256Ref",
]

SHA256_PATTERN: Final = r"^[0-9a-f]{64}$"
SHA256_RULE: Final = "must be 64 lower-case hex digits (a sha256)"
SHA256_OR_EMPTY_PATTERN: Final = r"^([0-9a-f]{64})?$"
SHA256_OR_EMPTY_RULE: Final = "must be a sha256: 64 lower-case hex digits, or empty for no file"
SHA256_REF_PATTERN: Final = r"^sha256:[0-9a-f]{64}$"
SHA256_REF_RULE: Final = "must be 'sha256:' and 64 lower-case hex digits"
PROJECT_ID_PATTERN: Final = r"^p_[0-9a-f]{16}$"
PROJECT_ID_RULE: Final = "must be a project id: 'p_' and 16 lower-case hex digits"
MISSION_ID_PATTERN: Final = r"^msn_[0-9a-f]{12}$"
MISSION_ID_RULE: Final = "must be a mission id: 'msn_' and 12 lower-case hex digits"
DESCRIPTOR_ID_PATTERN: Final = r"^d_[0-9a-f]{24}$"
DESCRIPTOR_ID_RULE: Final = "must be a descriptor id: 'd_' and 24 lower-case hex digits"
MISSION_BRANCH_PATTERN: Final = r"^vbx/msn_[0-9a-f]{12}$"
MISSION_BRANCH_RULE: Final = "must be a mission's branch: 'vbx/' and its mission id"
ENV_KEY_PATTERN: Final = r"^ek_[0-9a-f]{32}$"
ENV_KEY_RULE: Final = "must be an envKey: 'ek_' and 32 lower-case hex digits"

Sha256Hex = Annotated[str, Field(pattern=SHA256_PATTERN, description=SHA256_RULE)]
"""A sha256 digest as 64 lower-case hex digits (a file's bytes, a manifest, a letter's id)."""

Sha256OrEmpty = Annotated[
    str, Field(pattern=SHA256_OR_EMPTY_PATTERN, description=SHA256_OR_EMPTY_RULE)
]
"""A file's version as the editor opened it: its :data:`Sha256Hex`, or ``''`` for a file that
did not exist (issue 33 item 2, :mod:`core.projects.edit_version`)."""

Sha256Ref = Annotated[str, Field(pattern=SHA256_REF_PATTERN, description=SHA256_REF_RULE)]
"""A sha256 digest written ``sha256:<64 hex>`` (a packet's or a candidate's content id)."""

ProjectId = Annotated[str, Field(pattern=PROJECT_ID_PATTERN, description=PROJECT_ID_RULE)]
"""A project's id: ``p_`` and 16 lower-case hex digits (SPEC §3)."""

MissionId = Annotated[str, Field(pattern=MISSION_ID_PATTERN, description=MISSION_ID_RULE)]
"""A mission's id: ``msn_`` and 12 lower-case hex digits (seed 004)."""

MissionBranch = Annotated[
    str, Field(pattern=MISSION_BRANCH_PATTERN, description=MISSION_BRANCH_RULE)
]
"""The git branch a mission's run works on: ``vbx/`` and its :data:`MissionId`."""

DescriptorId = Annotated[str, Field(pattern=DESCRIPTOR_ID_PATTERN, description=DESCRIPTOR_ID_RULE)]
"""A tool descriptor's id: ``d_`` and 24 lower-case hex digits (seed 003)."""

EnvKey = Annotated[str, Field(pattern=ENV_KEY_PATTERN, description=ENV_KEY_RULE)]
"""An environment's key: ``ek_`` and 32 lower-case hex digits (seed 002)."""

RULES: Final[dict[str, str]] = {
    SHA256_PATTERN: SHA256_RULE,
    SHA256_OR_EMPTY_PATTERN: SHA256_OR_EMPTY_RULE,
    SHA256_REF_PATTERN: SHA256_REF_RULE,
    PROJECT_ID_PATTERN: PROJECT_ID_RULE,
    MISSION_ID_PATTERN: MISSION_ID_RULE,
    MISSION_BRANCH_PATTERN: MISSION_BRANCH_RULE,
    DESCRIPTOR_ID_PATTERN: DESCRIPTOR_ID_RULE,
    ENV_KEY_PATTERN: ENV_KEY_RULE,
}
"""Each named type's pattern → its sentence: what a refusal says of a value without the form."""
