"""A project: an id, a display name, a kind, and its manifest in ``.voicebox/`` (SPEC §3).

The project id is stable for the project's life (OPFS cannot rename folders; SPEC §3 and
PLATFORM), so renaming a project rewrites only the manifest. The display name is the seed-004
``brain_ref`` (SPEC §9): whatever the person typed, kept and shown literally.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError

from core.model import Contract
from core.paths import META_DIR, ProjectPath, check_name
from core.ports import ProjectFiles, Randomness
from core.refusals import Code, Refused
from core.vocabulary import PROJECT_ID_PATTERN, ProjectId

__all__ = [
    "MANIFEST_PATH",
    "PROJECT_ID_PATTERN",
    "ProjectKind",
    "ProjectManifest",
    "check_project_id",
    "new_project_id",
    "read_manifest",
    "write_manifest",
]

MANIFEST_PATH = ProjectPath((META_DIR, "manifest.json"))
ProjectKind = Literal["opfs", "directory"]


class ProjectManifest(Contract):
    """``.voicebox/manifest.json``: who the project is. ``created_at``/``updated_at`` in ms."""

    schema_: Literal["voicebox-project-v1"] = Field(default="voicebox-project-v1", alias="schema")
    id: ProjectId
    name: str = Field(min_length=1, max_length=200)
    kind: ProjectKind = "opfs"
    created_at: int = Field(ge=0, description="Milliseconds since the epoch.")
    updated_at: int = Field(ge=0, description="Milliseconds since the epoch.")

    model_config = ConfigDict(populate_by_name=True)


def new_project_id(random: Randomness) -> str:
    """A fresh project id: ``p_`` + 16 hex digits (64 bits of CSPRNG output)."""
    return "p_" + random.token_bytes(8).hex()


def check_project_id(text: object) -> str:
    """Return ``text`` if it is a well-formed project id; else refuse ``project-not-found``."""
    if not isinstance(text, str) or not re.fullmatch(PROJECT_ID_PATTERN, text):
        raise Refused(Code.PROJECT_NOT_FOUND, "That is not a project id.", field="project")
    return text


async def read_manifest(files: ProjectFiles, project_id: str) -> ProjectManifest:
    """Read the project's manifest; a missing or unreadable one refuses ``project-not-found``."""
    try:
        raw = await files.read(MANIFEST_PATH)
        manifest = ProjectManifest.model_validate_json(raw)
    except Refused as exc:
        if exc.code == Code.FILE_NOT_FOUND:
            raise Refused(Code.PROJECT_NOT_FOUND, "The project has no manifest.") from None
        raise
    except ValidationError:
        raise Refused(Code.PROJECT_NOT_FOUND, "The project's manifest is unreadable.") from None
    if manifest.id != project_id:
        raise Refused(Code.PROJECT_NOT_FOUND, "The project's manifest names another id.")
    return manifest


async def write_manifest(files: ProjectFiles, manifest: ProjectManifest) -> None:
    """Write the manifest atomically (the name is re-checked by :func:`check_name`)."""
    check_name(manifest.name)
    await files.write(MANIFEST_PATH, manifest.model_dump_json(by_alias=True).encode("utf-8"))
