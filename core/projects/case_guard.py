"""Names that differ only in letter case, in a picked folder (SPEC §3; issue 13 finding 2).

A picked folder usually lives on a case-insensitive disk (macOS APFS, Windows NTFS): there
``README.md`` and ``readme.md`` are one name, so writing one replaces the person's other file,
and ``SRC/a.txt`` lands in their ``src/``. On a case-sensitive disk (Linux) the same write would
make a second, look-alike file. The host cannot ask the browser which kind of disk it is, so
it gives one answer for both: in a picked folder, a write, folder creation or move that would
CREATE a name (the file, or any missing folder on its way) whose :func:`~core.paths.fold`-ed
spelling equals a sibling's different spelling is refused ``path-case-collision``, naming the
sibling, and nothing is written. The same spelling is the same entry (overwriting it is fine);
a case-only rename (``README.md`` → ``readme.md``) is refused too — rename through another name.

OPFS projects are not guarded: OPFS is case-sensitive, only this host writes it, and two
spellings there are two files; a case-insensitive target is checked where an export is
unpacked (archive import, ``core/archive/plan.py``). The project's own metadata (``.voicebox/``,
written by the operations that own it) is not guarded either.

The check reads the names of each folder on the way down until the first new name (one
:meth:`~core.ports.ProjectFiles.names` per existing folder of the path — names only, no size
asked per file). Directory iteration is what it costs: a 100-byte write into a 1,000-entry
folder took 221 ms instead of 40 ms on the 2-core test machine (docs/security.md, known
limits). Host writes are serialised (the pipeline's write lock), so no two host writes race
it; a program writing into the folder at the same moment is outside what the host can order.
"""

from __future__ import annotations

from core.paths import ProjectPath, fold
from core.projects.read_through import ReadThrough
from core.refusals import Code, Refused

__all__ = ["CaseGuard"]


class CaseGuard(ReadThrough):
    """:class:`~core.ports.ProjectFiles` of a picked folder that refuses to create a name
    differing only in letter case from a sibling (``path-case-collision``, see module
    docstring). Reads, listings and deletes pass through unchanged."""

    async def _check(self, path: ProjectPath, field: str) -> None:
        if path.is_meta:
            return
        for depth, name in enumerate(path.parts):
            folder = path.parts[:depth]
            try:
                siblings = await self._files.names(folder)
            except Refused as exc:
                if exc.code in (Code.FILE_NOT_FOUND, Code.NOT_A_DIRECTORY):
                    return  # the operation itself refuses, or creates everything below
                raise
            if name in siblings:
                continue
            wanted = fold(name)
            other = next((n for n in siblings if fold(n) == wanted), None)
            if other is not None:
                where = "/".join(folder) or "the project root"
                raise Refused(
                    Code.PATH_CASE_COLLISION,
                    f"'{name}' differs only in letter case from '{other}', already in {where}; "
                    "on a case-insensitive disk they are one name. Choose another name.",
                    field=field,
                )
            return  # a new name: nothing below it exists yet

    async def write(self, path: ProjectPath, data: bytes) -> None:
        """See :meth:`core.ports.ProjectFiles.write`; refuses ``path-case-collision``."""
        await self._check(path, "path")
        await self._files.write(path, data)

    async def mkdir(self, path: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.mkdir`; refuses ``path-case-collision``."""
        await self._check(path, "path")
        await self._files.mkdir(path)

    async def delete(self, path: ProjectPath, *, recursive: bool = False) -> None:
        """See :meth:`core.ports.ProjectFiles.delete`."""
        await self._files.delete(path, recursive=recursive)

    async def move(self, src: ProjectPath, dst: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.move`; refuses ``path-case-collision`` for
        ``dst``."""
        await self._check(dst, "dst")
        await self._files.move(src, dst)
