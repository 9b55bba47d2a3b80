"""This host's atomic-write temporaries: their names, which are in flight, and which a listing
may remove (SPEC §3; issue 13 finding 1).

A write goes to a temporary sibling first and is moved over its target in one step
(``browser_host/opfs.py``). A temporary is named

    ``.vbx-tmp-<marker>-<random>``

where ``<marker>`` is 16 hex digits this host draws once and keeps in HOST_DIR (the document
:data:`MARKER_DOCUMENT`; an environment server keeps its own in its own HOST_DIR) and
``<random>`` 16 fresh hex digits per write. One :class:`Temporaries` is made when the host is
composed and handed to every storage adapter it builds — every project, every ``open`` of a
picked folder, every call — so the names in flight are known to every listing, whichever
adapter object serves it.

**What a listing may remove** (:meth:`Temporaries.sweepable`): a FILE whose name is exactly
this host's shape (prefix, this marker, a dash, 16 lowercase hex digits) and that no call has
in flight — a temporary whose writer is gone (a tab killed mid-write). Nothing else, ever: a
person's ``.vbx-tmp-my-draft.md``, a file named ``.vbx-tmp-``, a folder of any name, another
host's temporary (another browser profile sharing a picked folder) and a name differing in
letter case are the person's, listed and kept. Listings never show this host's own
temporaries (in flight or swept).

**Why the marker is enough, with no journal of names.** A killed tab leaves nothing in flight,
so after a restart the in-flight set is empty by truth, and the marker alone proves
provenance: no program but this host writes names carrying it (the path rule refuses every
name starting ``.vbx-tmp-``, in any letter case, so not even this host's file operations can
make one), and a person cannot choose it by accident (64 random bits). A persisted record of
every temporary would add two sealed HOST_DIR writes (before and after) to every file write —
three atomic writes instead of one — and would itself have to survive the kill it records, to
protect only a file someone made by copying one of our leftovers under its exact name.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError

from core.model import Contract
from core.paths import TEMP_PREFIX
from core.ports import HostState, Randomness

__all__ = ["MARKER_DOCUMENT", "Temporaries", "WriteMarker", "load_temporaries"]

MARKER_DOCUMENT = "write-marker.json"
_HEX_DIGITS = frozenset("0123456789abcdef")


class WriteMarker(Contract):
    """HOST_DIR ``write-marker.json``: the marker this host's temporaries carry."""

    schema_: Literal["voicebox-write-marker-v1"] = Field(
        default="voicebox-write-marker-v1", alias="schema"
    )
    marker: str = Field(pattern=r"^[0-9a-f]{16}$", description="16 lowercase hex digits.")

    model_config = ConfigDict(populate_by_name=True)


class Temporaries:
    """This host's temporaries: ``marker`` (16 hex digits) and the names in flight.

    Not thread-safe, and needs not be: the host runs on one event loop.
    """

    def __init__(self, marker: str, random: Randomness) -> None:
        WriteMarker(marker=marker)  # refuses a malformed marker (ValidationError)
        self.marker = marker
        self._random = random
        self._stem = f"{TEMP_PREFIX}{marker}-"
        self._in_flight: set[str] = set()

    @contextmanager
    def writing(self) -> Iterator[str]:
        """A fresh temporary name, in flight until the ``with`` block ends (however it ends)."""
        name = f"{TEMP_PREFIX}{self.marker}-{self._random.token_bytes(8).hex()}"
        self._in_flight.add(name)
        try:
            yield name
        finally:
            self._in_flight.discard(name)

    def is_ours(self, name: str, kind: Literal["file", "dir"]) -> bool:
        """Whether ``name`` (of ``kind``) is one of this host's temporaries, in flight or
        left over; listings never show those."""
        if kind != "file" or not name.startswith(self._stem):
            return False
        tail = name[len(self._stem) :]
        return len(tail) == 16 and _HEX_DIGITS.issuperset(tail)

    def sweepable(self, name: str, kind: Literal["file", "dir"]) -> bool:
        """Whether a listing may remove ``name``: ours (:meth:`is_ours`) and not in flight."""
        return self.is_ours(name, kind) and name not in self._in_flight


async def load_temporaries(state: HostState, random: Randomness) -> Temporaries:
    """This host's :class:`Temporaries`, its marker read from HOST_DIR.

    The first start (or a marker document that does not read) draws a fresh marker and stores
    it; the leftovers of an unreadable old marker are then simply shown, never removed.
    Raises what ``state`` raises (``storage-failed``).
    """
    raw = await state.load(MARKER_DOCUMENT)
    if raw is not None:
        try:
            return Temporaries(WriteMarker.model_validate_json(raw).marker, random)
        except ValidationError:
            pass
    marker = WriteMarker(marker=random.token_bytes(8).hex())
    await state.store(MARKER_DOCUMENT, marker.model_dump_json(by_alias=True).encode("utf-8"))
    return Temporaries(marker.marker, random)
