"""Moving a file or a whole folder inside one project, and the "Keep both" name (issue 17).

The storage port moves one file atomically (:meth:`~core.ports.ProjectFiles.move`) and has no
folder move: Chromium's directory handles have none (PLATFORM.md). A folder is therefore moved
as a plan carried out file by file — :func:`survey` lists the subtree first (refusing a name the
host may not touch before anything moves), :func:`move_tree` creates the target folders, moves
every file, then removes the emptied source folders one by one, deepest first, never
recursively, so a folder that is not empty after all (a program wrote into a picked folder
meanwhile) is left where it is rather than deleted.

**A failure part-way is rolled back**: the files already moved are moved back and the folders
created are removed, then the storage's refusal is raised as it was — so a refused move leaves
the tree as it found it. If moving back fails too, the refusal is ``storage-failed`` and says
exactly how many files are where (``details``: ``moved``, ``total``, ``src``, ``dst``). Host
writes are serialised by the pipeline's write lock, so no other host write interleaves; a tab
closed in the middle of a long move leaves the files moved so far at the target (each file is
whole: every single move is atomic), which the person sees in the tree.

**Keep both** (:func:`kept_name`, :func:`free_path`): the new file is saved beside the existing
one as ``name (2).ext``, ``name (3).ext``…, the first free name — the one rule, used by
``file.write``, ``file.move``, ``asset.create`` and ``trash.restore``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from core.paths import TEMP_PREFIX, ProjectPath, fold, parse_path
from core.ports import ProjectFiles
from core.refusals import Code, Refused

__all__ = ["KEEP_BOTH_LIMIT", "Tree", "free_path", "kept_name", "move_tree", "survey"]

KEEP_BOTH_LIMIT = 1000
"""The highest ``(n)`` :func:`free_path` tries before refusing ``already-exists``."""

MAX_TREE_ENTRIES = 200_000
"""The most files and folders one move or delete carries (``file-too-large`` beyond)."""

Rel = tuple[str, ...]
_TEMP_FOLDED = fold(TEMP_PREFIX)


def kept_name(leaf: str, n: int) -> str:
    """The name "Keep both" gives the n-th copy of ``leaf``: ``notes (2).txt``, ``Makefile
    (2)``, ``.env (2)`` (a leading dot is not an extension)."""
    dot = leaf.rfind(".")
    if dot > 0:
        return f"{leaf[:dot]} ({n}){leaf[dot:]}"
    return f"{leaf} ({n})"


async def free_path(files: ProjectFiles, path: ProjectPath) -> ProjectPath:
    """The first ``name (n).ext`` beside ``path`` (n = 2, 3, …) that nothing occupies.

    Refuses ``already-exists`` after :data:`KEEP_BOTH_LIMIT` names, ``path-invalid`` when the
    longer name breaks the path rule (a 255-byte name)."""
    for n in range(2, KEEP_BOTH_LIMIT + 1):
        candidate = parse_path(
            "/".join((*path.parent, kept_name(path.name, n))), allow_meta=path.is_meta
        )
        if await files.stat(candidate) is None:
            return candidate
    raise Refused(Code.ALREADY_EXISTS, f"No free name is left beside '{path}'.", field="path")


@dataclass(frozen=True, slots=True)
class Tree:
    """What one path holds: ``kind`` ``"file"`` or ``"dir"``; ``files`` as (path relative to
    ``root``, size in bytes) — ``()`` is ``root`` itself for a file —, ``folders`` every
    folder below ``root`` (relative, parents before children; empty for a file)."""

    root: ProjectPath
    kind: str
    files: tuple[tuple[Rel, int], ...]
    folders: tuple[Rel, ...]

    @property
    def bytes(self) -> int:
        """The total size of the files, in bytes."""
        return sum(size for _, size in self.files)


def _at(root: ProjectPath, rel: Rel) -> ProjectPath:
    return ProjectPath((*root.parts, *rel))


async def survey(files: ProjectFiles, root: ProjectPath) -> Tree:
    """List everything at ``root`` (a file, or a folder and all below it), reading no content.

    Refuses ``file-not-found``; a name inside the folder that the path rule refuses
    (``path-invalid``/``path-reserved``: another program's ``CON``, ``.vbx-tmp-…``), and an
    entry the storage does not list (a symbolic link, a special file: ``path-reserved``), are
    refused with that code, naming them — the host moves or deletes nothing it could not put
    back, and leaves nothing behind in a folder it says it moved.
    ``file-too-large`` beyond :data:`MAX_TREE_ENTRIES`."""
    entry = await files.stat(root)
    if entry is None:
        raise Refused(Code.FILE_NOT_FOUND, f"Nothing is at '{root}'.", field="path")
    if entry.kind == "file":
        return Tree(root, "file", (((), entry.size or 0),), ())
    found: list[tuple[Rel, int]] = []
    folders: list[Rel] = []
    stack: list[Rel] = [()]
    while stack:
        rel = stack.pop()
        children = await files.list_dir(_at(root, rel).parts)
        listed = {c.name for c in children}
        for other in await files.names(_at(root, rel).parts):
            if other not in listed and not fold(other).startswith(_TEMP_FOLDED):
                raise Refused(
                    Code.PATH_RESERVED,
                    f"'{'/'.join((*rel, other))}' in '{root}' is a link or a special file, which "
                    "the host never follows or moves; remove it outside Voicebox first. "
                    "Nothing was changed.",
                    field="path",
                )
        for child in children:
            where = (*rel, child.name)
            try:
                parse_path("/".join((*root.parts, *where)), allow_meta=root.is_meta)
            except Refused as exc:
                raise Refused(
                    exc.code,
                    f"'{'/'.join(where)}' in '{root}' has a name the host does not touch "
                    f"({exc.message.rstrip('.')}); rename or remove it outside Voicebox first. "
                    "Nothing was changed.",
                    field="path",
                ) from None
            if child.kind == "dir":
                folders.append(where)
                stack.append(where)
            else:
                found.append((where, child.size or 0))
            if len(found) + len(folders) > MAX_TREE_ENTRIES:
                raise Refused(Code.FILE_TOO_LARGE, f"'{root}' holds too many entries to move.")
    folders.sort(key=lambda f: (len(f), f))
    found.sort()
    return Tree(root, "dir", tuple(found), tuple(folders))


async def _remove_empty(files: ProjectFiles, root: ProjectPath, folders: tuple[Rel, ...]) -> int:
    """Remove ``folders`` below ``root`` and then ``root``, deepest first, each only if empty;
    returns how many were left because they were not (or could not be removed)."""
    left = 0
    for rel in sorted([*folders, ()], key=len, reverse=True):
        try:
            await files.delete(_at(root, rel))
        except Refused:
            left += 1
    return left


async def move_tree(files: ProjectFiles, tree: Tree, dst: ProjectPath) -> int:
    """Move everything :func:`survey` found at ``tree.root`` to ``dst`` (which must be free);
    returns how many source folders stayed because something else was in them.

    Raises the storage's refusal after rolling back (module docstring), or ``storage-failed``
    naming how many files are where when the rollback failed too."""
    src = tree.root
    moved: list[Rel] = []
    created: list[Rel] = []  # only these folders are removed again on a rollback
    try:
        if tree.kind == "dir":
            for rel in ((), *tree.folders):
                if await files.stat(_at(dst, rel)) is None:
                    await files.mkdir(_at(dst, rel))
                    created.append(rel)
                else:
                    await files.mkdir(_at(dst, rel))  # refuses a file in the way
        for rel, _size in tree.files:
            await files.move(_at(src, rel), _at(dst, rel))
            moved.append(rel)
    except Refused as exc:
        try:
            for rel in reversed(moved):
                await files.move(_at(dst, rel), _at(src, rel))
        except Refused:
            raise Refused(
                Code.STORAGE_FAILED,
                f"Moving '{src}' to '{dst}' failed part-way ({exc.message.rstrip('.')}), and "
                f"moving back failed too: {len(moved)} of {len(tree.files)} files are now under "
                f"'{dst}', the others still under '{src}'. Every file is whole.",
                details={"src": str(src), "dst": str(dst), "moved": len(moved)},
            ) from None
        for rel in sorted(created, key=len, reverse=True):
            with contextlib.suppress(Refused):
                await files.delete(_at(dst, rel))  # empty again: only what this call made
        raise
    if tree.kind == "dir":
        return await _remove_empty(files, src, tree.folders)
    return 0
