"""The archive format: what an exported ``.zip`` holds besides the project's files (SPEC §10;
docs/archives.md).

The manifest, :data:`MANIFEST_NAME` (``.voicebox/archive-manifest.json``), is the last entry,
so every sha256 in it is computed in the one streaming pass. It lives under ``.voicebox/``
because project paths can never be there: no user file can collide with it.

The format's constants (:data:`ARCHIVE_SCHEMA`, :data:`FIXED_DATE_TIME`, :data:`CHUNK_BYTES`)
are shared by the export (:mod:`core.archive.export`), the import plan
(:mod:`core.archive.plan`) and applying it (:mod:`core.archive.apply`).
"""

from __future__ import annotations

import json
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, ConfigDict, Field, model_validator

from core.model import Contract
from core.paths import META_DIR, check_name
from core.refusals import Refused
from core.vocabulary import EnvKey, ProjectId, Sha256Hex

__all__ = [
    "ARCHIVE_SCHEMA",
    "ARCHIVE_SCHEMA_WITH_MEMORY",
    "CHUNK_BYTES",
    "FIXED_DATE_TIME",
    "MANIFEST_NAME",
    "MAX_MANIFEST_BYTES",
    "ArchiveManifest",
    "ArchiveMemory",
    "ManifestFile",
]

ARCHIVE_SCHEMA: Final = "voicebox-archive-v1"
ARCHIVE_SCHEMA_WITH_MEMORY: Final = "voicebox-archive-v2"
"""The schema of an archive that carries the project's memory (issue 33 item 3): v1 plus the
manifest's ``memory``. An archive without memory stays v1, byte for byte as before."""
MANIFEST_NAME = f"{META_DIR}/archive-manifest.json"
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
CHUNK_BYTES = 1 << 20
"""Default read size (bytes) of export and import, and the size at which export hands out."""
MAX_MANIFEST_BYTES = 64 << 20


def _display_name(text: str) -> str:
    try:
        return check_name(text)
    except Refused as exc:
        raise ValueError(exc.message) from None


class ManifestFile(Contract):
    """One exported file: its project path, size in bytes and sha256 (hex) of its bytes."""

    path: str = Field(min_length=1, max_length=4096)
    size: int = Field(ge=0)
    sha256: Sha256Hex


class ArchiveMemory(Contract):
    """The project's memory an archive carries (issue 33 item 3; :mod:`core.archive.memory`):
    its ``files`` (paths under ``.voicebox/``: the block store and the mailbox's segments, in
    entry order, each with size and sha256) and what they hold: ``blocks`` in the store,
    ``green`` of them, mailbox ``letters`` (mission letters and notes) and ``missions``."""

    files: list[ManifestFile] = Field(min_length=1)
    blocks: int = Field(ge=0)
    green: int = Field(ge=0)
    letters: int = Field(ge=0)
    missions: int = Field(ge=0)


class ArchiveManifest(Contract):
    """``.voicebox/archive-manifest.json``, the archive's last entry (SPEC §10).

    ``name`` is the project's display name; ``source_project`` its id where it was exported;
    ``source_env_key`` the envKey of the environment that exported it (``null`` if it had none
    yet); ``exported_at`` an ISO-8601 UTC instant with milliseconds; ``files`` every file in
    entry order; ``folders`` every empty folder; ``total_bytes`` the sum of file sizes;
    ``memory`` the project's memory when the archive carries it (then the schema is
    :data:`ARCHIVE_SCHEMA_WITH_MEMORY`; absent from the bytes otherwise; issue 33 item 3).
    """

    schema_: Literal["voicebox-archive-v1", "voicebox-archive-v2"] = Field(
        default=ARCHIVE_SCHEMA, alias="schema"
    )
    name: Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_display_name)]
    source_project: ProjectId | None = None
    source_env_key: EnvKey | None = None
    exported_at: str = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
    files: list[ManifestFile]
    folders: list[str] = Field(default_factory=list)
    total_bytes: int = Field(ge=0)
    memory: ArchiveMemory | None = None

    model_config = ConfigDict(populate_by_name=True)

    @model_validator(mode="after")
    def _schema_says_memory(self) -> ArchiveManifest:
        """v2 exactly when the archive carries memory."""
        if (self.memory is not None) != (self.schema_ == ARCHIVE_SCHEMA_WITH_MEMORY):
            raise ValueError("the schema must be v2 exactly when the manifest lists memory")
        return self

    def to_bytes(self) -> bytes:
        """The manifest entry's bytes: indented JSON, keys sorted, UTF-8, one final newline."""
        data = self.model_dump(mode="json", by_alias=True)
        if data["memory"] is None:
            del data["memory"]  # an archive without memory keeps v1's exact bytes
        return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
