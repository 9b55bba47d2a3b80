"""Helpers of the archive suite: projects in memory, exports, and hostile zips built in memory.

Pure Python (no filesystem, no threads, no subprocess), so the suite also runs inside Pyodide.
Hostile archives are made with :mod:`zipfile` and, where a lie must be told that
:mod:`zipfile` will not write (a wrong size, an encryption flag), by patching the bytes of the
central directory it wrote.
"""

from __future__ import annotations

import copy
import io
import stat
import struct
import warnings
import zipfile
from collections.abc import Iterable
from typing import Any

from core.archive.export import ArchiveExport, ArchiveSummary, ExportSource, export_archive
from core.memory.adapters import MemoryProjectFiles
from core.paths import ProjectPath, parse_path
from core.ports import ProjectFiles
from tests.support import HostHarness, run

NOW_MS = 1_767_225_600_000
ENV_KEY = "ek_" + "5" * 32
SOURCE = ExportSource("Проект-ü-📦", NOW_MS, ENV_KEY, "p_00000000000000aa")

UNICODE_PATH = "Проект-ü-📦/файл.txt"
BINARY = bytes(range(256)) * 64 + b"\x00\xff" * 100


def project(files: dict[str, bytes], folders: Iterable[str] = ()) -> MemoryProjectFiles:
    """A project in memory holding ``files`` (path → bytes) and the (empty) ``folders``."""
    root = MemoryProjectFiles()

    async def fill() -> None:
        for path, data in files.items():
            await root.write(parse_path(path), data)
        for folder in folders:
            await root.mkdir(parse_path(folder))

    run(fill())
    return root


def sample() -> MemoryProjectFiles:
    """The journey's project: nested unicode names, a binary file, an empty folder."""
    return project(
        {
            UNICODE_PATH: "Привет, мир — ü 📦\n".encode(),
            "assets/logo.bin": BINARY,
            "README.md": b"# hello\n",
            "docs/a b/c.txt": b"spaces",
        },
        folders=["empty/inner"],
    )


def export(
    files: ProjectFiles, source: ExportSource = SOURCE, **kwargs: Any
) -> tuple[bytes, ArchiveSummary, list[bytes]]:
    """Export ``files`` to the end: ``(archive bytes, summary, the chunks as handed out)``."""
    job: ArchiveExport = export_archive(files, source, **kwargs)
    chunks: list[bytes] = []

    async def sink(chunk: bytes) -> None:
        chunks.append(chunk)

    summary = run(job.write_to(sink))
    return b"".join(chunks), summary, chunks


def tree(files: MemoryProjectFiles, *, meta: bool = False) -> dict[str, bytes | None]:
    """Every file (bytes) and folder (``None``) of a project, by path; ``.voicebox`` only if
    ``meta``."""
    out: dict[str, bytes | None] = {}

    def walk(node: dict[str, Any], prefix: str) -> None:
        for name, value in node.items():
            path = f"{prefix}{name}"
            if not meta and not prefix and name == ".voicebox":
                continue
            if isinstance(value, bytes):
                out[path] = value
            else:
                out[path] = None
                walk(value, path + "/")

    walk(files.tree, "")
    return out


# ---- hostile zips ------------------------------------------------------------------------


def info(
    name: str,
    *,
    mode: int | None = stat.S_IFREG | 0o644,
    system: int = 3,
    compress: int = zipfile.ZIP_STORED,
) -> zipfile.ZipInfo:
    """A :class:`zipfile.ZipInfo` for ``name`` with the given Unix ``mode`` (``None``: none)."""
    zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    zi.create_system = system
    zi.external_attr = 0 if mode is None else mode << 16
    zi.compress_type = compress
    return zi


def zip_of(*entries: tuple[str | zipfile.ZipInfo, bytes]) -> bytes:
    """A zip of ``(name or ZipInfo, data)`` pairs, in the order given (duplicates allowed)."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names; we mean them
        with zipfile.ZipFile(buf, "w") as archive:
            for name, data in entries:
                target = copy.copy(name) if isinstance(name, zipfile.ZipInfo) else info(name)
                archive.writestr(target, data)
    return buf.getvalue()


def _records(data: bytes) -> list[tuple[int, str]]:
    """``(offset, raw name)`` of every central-directory record (walks from the end record)."""
    end = data.rfind(b"PK\x05\x06")
    size_cd = struct.unpack_from("<I", data, end + 12)[0]
    pos = end - size_cd
    found = []
    while pos < end:
        assert data[pos : pos + 4] == b"PK\x01\x02"
        n, m, k = struct.unpack_from("<HHH", data, pos + 28)
        found.append((pos, data[pos + 46 : pos + 46 + n].decode("utf-8", "replace")))
        pos += 46 + n + m + k
    return found


def patch(data: bytes, name: str, **fields: int) -> bytes:
    """``data`` with the central-directory record of ``name`` changed: ``size`` (declared
    uncompressed size), ``compressed``, ``crc``, ``flags`` (general-purpose bits). The local
    header is patched too, so the two agree (only the directory is what readers trust)."""
    out = bytearray(data)
    for pos, raw in _records(data):
        if raw != name:
            continue
        local = struct.unpack_from("<I", out, pos + 42)[0]
        offsets = {"flags": (8, 6, "<H"), "crc": (16, 14, "<I"), "compressed": (20, 18, "<I"),
                   "size": (24, 22, "<I")}  # fmt: skip
        for key, value in fields.items():
            cd_off, lh_off, fmt = offsets[key]
            struct.pack_into(fmt, out, pos + cd_off, value)
            struct.pack_into(fmt, out, local + lh_off, value)
        return bytes(out)
    raise KeyError(name)


def many_entries(count: int) -> bytes:
    """A central directory of ``count`` one-letter records and its end record — nothing else.

    Enough for a reader that counts before it parses; :mod:`zipfile` would choke on it later.
    """
    record = b"PK\x01\x02" + bytes(24) + struct.pack("<HHH", 1, 0, 0) + bytes(12) + b"a"
    directory = record * count
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 0xFFFF, 0xFFFF, len(directory), 0, 0)
    return directory + end


def mem_path(*parts: str) -> ProjectPath:
    """A :class:`ProjectPath` built without the path rule (a name only a picked folder edited
    outside the browser could hold)."""
    return ProjectPath(parts)


# ---- the host ----------------------------------------------------------------------------


def new_project(h: HostHarness, name: str, files: dict[str, bytes]) -> str:
    """Create a project through the host and write ``files`` into it; return its id."""
    pid = h.ok("project.create", name=name)["project"]["id"]
    for path, data in files.items():
        h.ok("file.write", data, project=pid, path=path)
    return pid


def storage(h: HostHarness) -> tuple[Any, ...]:
    """Everything a refused import must leave as it was: the project list, every root's
    tree (metadata included) and the picked folders."""
    listed = h.ok("project.list")["projects"]
    roots = {pid: tree(root, meta=True) for pid, root in h.roots.roots.items()}
    return listed, roots, sorted(h.folders.folders)


# ---- the golden project ------------------------------------------------------------------

GOLDEN_BIG = "media/big.bin"
GOLDEN_FILES = {
    "README.md": b"# golden\n",
    UNICODE_PATH: "Привет, мир — ü 📦\n".encode(),
    "assets/logo.bin": BINARY,
    "docs/a b/c.txt": b"spaces",
    # over the browser byte path's one-piece bound (8 MiB): hashed by the streaming hasher
    GOLDEN_BIG: bytes(range(256)) * (17 << 12) + b"the end",
}
GOLDEN_FOLDERS = ("empty/inner",)
GOLDEN_SOURCE = ExportSource("Golden ü", NOW_MS, ENV_KEY, "p_00000000000000aa")
GOLDEN_SHA256 = "32b561aa747d117323b35b331096c647e837784ef59f17f59a18e9472d0d1d3d"
"""The sha256 of the golden project's archive (:func:`golden`, :data:`GOLDEN_SOURCE`). Recorded
once from an export whose bytes equal those CPython's :mod:`zipfile` writes for the same entries
(``tests/archive/test_zipformat.py``); it changes only when the archive format does."""


def golden() -> MemoryProjectFiles:
    """The golden project: every kind of entry, one file over the byte path's one-piece bound."""
    return project(GOLDEN_FILES, folders=GOLDEN_FOLDERS)


# ---- project memory (issue 33 item 3) ----------------------------------------------------

MEMORY_FILES = {"src/app.py": b"print('hi')\n", "README.md": b"# with memory\n"}


def project_with_memory() -> tuple[Any, str]:
    """A host with one project holding :data:`MEMORY_FILES`, a block store of one block and a
    mailbox of two missions (a four-letter chain and a one-letter one) plus a note; returns
    ``(the missions' Kit, the project id)``."""
    from tests.missions.kit import M2, Kit  # the missions' own builders

    kit = Kit()
    for path, data in MEMORY_FILES.items():
        kit.h.ok("file.write", data, project=kit.project, path=path)
    kit.chain()
    kit.post(kit.letter(mission=M2))
    kit.ok("mailbox.send", agent_id="operator", to="hand-1", subject="Hello", text="A note.")
    return kit, kit.project


def memory_of(data: bytes) -> dict[str, bytes]:
    """The memory records of an archive, by entry name."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    return {
        n: archive.read(n)
        for n in archive.namelist()
        if n.startswith(".voicebox/") and n != ".voicebox/archive-manifest.json"
    }


def rezip(data: bytes, replace: dict[str, bytes], *, relist: bool = True) -> bytes:
    """``data`` with the entries ``replace`` names given new bytes (a new name adds one); with
    ``relist`` the manifest's memory list is made to match — a tamperer who recomputes every
    sha256, so that only the chains can tell."""
    import hashlib
    import json

    archive = zipfile.ZipFile(io.BytesIO(data))
    entries = {n: archive.read(n) for n in archive.namelist()}
    entries.update(replace)
    name = ".voicebox/archive-manifest.json"
    if relist:
        manifest = json.loads(entries[name])
        manifest["memory"]["files"] = [
            {"path": n, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
            for n, b in sorted(entries.items())
            if n.startswith(".voicebox/") and n != name
        ]
        entries[name] = json.dumps(manifest).encode()
    manifest_bytes = entries.pop(name)
    return zip_of(*entries.items(), (name, manifest_bytes))


def tamper_letter(segment: bytes, seq: int, **changes: Any) -> bytes:
    """``segment`` with the mission letter ``seq`` of the first mission changed by ``changes``
    and its line id recomputed (the line parses; only the chain can tell)."""
    import json

    from core.missions.letters import MissionLetter, letter_id
    from core.model import canonical_json

    lines = segment.split(b"\n")
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        line = json.loads(raw)
        if line.get("kind") == "mission" and line["mission"]["mission_seq"] == seq:
            line["mission"].update(changes)
            line["id"] = letter_id(MissionLetter.model_validate(line["mission"]))
            lines[i] = canonical_json(line)
            break
    else:
        raise AssertionError(f"no letter of seq {seq}")
    return b"\n".join(lines)


def broken_memory_archive() -> bytes:
    """An archive whose memory's second letter was changed after it was chained."""
    kit, pid = project_with_memory()
    _, body = kit.h.call("project.export", project=pid)
    assert body is not None
    memory = memory_of(body)
    segment = ".voicebox/mailbox/00000000.jsonl"
    return rezip(body, {segment: tamper_letter(memory[segment], 2, runner_id="evil-1")})
