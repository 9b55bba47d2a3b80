"""Project storage and HOST_DIR on a real directory (POSIX), SPEC §3 and §6, seed 002 §2.

**No symlink is ever followed.** Every path is walked one segment at a time from an open
descriptor of the project root, ``openat``-style (``os.open(segment, dir_fd=parent)``), each
folder opened with ``O_DIRECTORY | O_NOFOLLOW`` and each file with ``O_NOFOLLOW``: a symbolic
link anywhere on the way — a folder or the file itself — is refused ``path-outside-root``
("never followed"), whatever it points at, inside the project or out of it. Listings leave
symbolic links and special files (fifos, sockets, devices) out: they are not project entries,
so no walk and no export reaches them. A delete removes a link itself, never its target
(``shutil.rmtree`` with ``dir_fd``, which does not follow links).

**Atomic writes**: the bytes go to a temporary sibling named by the host's one
:class:`~core.projects.temporaries.Temporaries` (``.vbx-tmp-<marker>-<random>``, created
``O_EXCL``), are ``fsync``-ed, renamed over the target with ``os.replace`` (relative to the
same folder descriptor), and the folder is ``fsync``-ed. A reader sees the old bytes or the
new ones. A crash leaves at most a temporary, which a listing removes. A full disk is
``storage-quota-exceeded`` (507) and nothing is left behind.

**Letter case.** The server's projects are real folders that people also copy to macOS or
Windows disks (where ``README.md`` and ``readme.md`` are one name), so they get a picked
folder's rule: a new name that differs only in letter case from a sibling is refused
``path-case-collision`` (:class:`core.projects.case_guard.CaseGuard`, applied by
:class:`DiskProjectRoots`), whatever the server's own disk does.

**HOST_DIR** (:class:`DiskHostState`) is a folder created ``0700`` whose documents are
created ``0600`` (temporary + ``fsync`` + ``os.replace``), outside every project root. The
host token document is kept as ``.host-token`` (seed 002 §2), in plain text, for the
operator's own use (``curl``, the CLI); it never leaves the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import re
import shutil
import stat as st
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

from core.custody.host_token import HOST_TOKEN_DOC
from core.paths import TEMP_PREFIX, ProjectPath
from core.ports import Entry, ProjectFiles
from core.projects.case_guard import CaseGuard
from core.projects.temporaries import Temporaries
from core.refusals import Code, Refused

__all__ = [
    "DiskHostState",
    "DiskProjectFiles",
    "DiskProjectRoots",
    "ensure_private_dir",
    "write_private",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_FILE_NAMES = {HOST_TOKEN_DOC: ".host-token"}
"""HOST_DIR document names that are stored under another file name (seed 002 §2)."""


def _link_refusal(where: str) -> Refused:
    return Refused(
        Code.PATH_OUTSIDE_ROOT,
        f"'{where}' is a symbolic link; this environment never follows one.",
        field="path",
    )


def _os_refusal(exc: OSError, what: str) -> Refused:
    if exc.errno == errno.ENOSPC or exc.errno == errno.EDQUOT:
        return Refused(Code.STORAGE_QUOTA_EXCEEDED, f"{what}: the disk is full.")
    if exc.errno == errno.ENOENT:
        return Refused(Code.FILE_NOT_FOUND, f"{what}: nothing is there.")
    if exc.errno == errno.EISDIR:
        return Refused(Code.IS_A_DIRECTORY, f"{what}: that is a folder.")
    if exc.errno == errno.ENOTDIR:
        return Refused(Code.NOT_A_DIRECTORY, f"{what}: a part of the path is a file.")
    if exc.errno == errno.ENOTEMPTY:
        return Refused(Code.DIRECTORY_NOT_EMPTY, f"{what}: the folder is not empty.")
    if exc.errno == errno.EEXIST:
        return Refused(Code.ALREADY_EXISTS, f"{what}: something is already there.")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Refused(Code.PERMISSION_DENIED, f"{what}: the server may not do that here.")
    return Refused(
        Code.STORAGE_FAILED,
        f"{what}: the disk refused ({errno.errorcode.get(exc.errno or 0, 'error')}).",
    )


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def _opened(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


def _open_child_dir(parent: int, name: str, where: str, *, create: bool) -> int:
    """The descriptor of folder ``name`` in ``parent``, never through a link."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=parent)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        found = _lstat(name, parent)
        if found is not None and st.S_ISLNK(found.st_mode):
            raise _link_refusal(where) from None
        if exc.errno == errno.ENOENT:
            raise Refused(Code.FILE_NOT_FOUND, f"No folder '{where}'.") from None
        if found is not None and not st.S_ISDIR(found.st_mode):
            raise Refused(Code.NOT_A_DIRECTORY, f"'{where}' is a file, not a folder.") from None
        raise _os_refusal(exc, f"Opening '{where}'") from None


def _fsync_dir(fd: int) -> None:
    with contextlib.suppress(OSError):  # some file systems cannot sync a folder
        os.fsync(fd)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _atomic_write(folder: int, name: str, data: bytes, tmp: str, mode: int) -> None:
    """Write ``data`` as ``name`` in ``folder`` through the temporary ``tmp`` (module doc)."""
    fd = os.open(tmp, _NEW_FLAGS, mode, dir_fd=folder)
    try:
        try:
            os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise
    _fsync_dir(folder)


class DiskProjectFiles:
    """:class:`core.ports.ProjectFiles` over one project folder (see the module docstring).

    ``root`` is the project's folder; ``temporaries`` the host's one
    :class:`~core.projects.temporaries.Temporaries`."""

    def __init__(self, root: Path, temporaries: Temporaries) -> None:
        self._root = root
        self._temporaries = temporaries

    @property
    def root(self) -> Path:
        """The project's folder on disk (the working directory of its fenced commands)."""
        return self._root

    def _root_fd(self) -> int:
        try:
            return os.open(self._root, _DIR_FLAGS)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _link_refusal("the project root") from None
            raise Refused(Code.PROJECT_NOT_FOUND, "The project's folder is gone.") from None

    def _dir(self, parts: tuple[str, ...], *, create: bool = False) -> int:
        fd = self._root_fd()
        for depth, seg in enumerate(parts):
            where = "/".join(parts[: depth + 1])
            try:
                child = _open_child_dir(fd, seg, where, create=create)
            finally:
                os.close(fd)
            fd = child
        return fd

    def _open_file(self, path: ProjectPath) -> int:
        with _opened(self._dir(path.parent)) as folder:
            try:
                fd = os.open(path.name, _READ_FLAGS, dir_fd=folder)
            except OSError as exc:
                found = _lstat(path.name, folder)
                if found is not None and st.S_ISLNK(found.st_mode):
                    raise _link_refusal(str(path)) from None
                if exc.errno == errno.ENOENT:
                    raise Refused(Code.FILE_NOT_FOUND, f"No file '{path}'.") from None
                raise _os_refusal(exc, f"Reading '{path}'") from None
        info = os.fstat(fd)
        if st.S_ISDIR(info.st_mode):
            os.close(fd)
            raise Refused(Code.IS_A_DIRECTORY, f"'{path}' is a folder.")
        if not st.S_ISREG(info.st_mode):
            os.close(fd)
            raise Refused(Code.PATH_RESERVED, f"'{path}' is not a regular file.")
        return fd

    def _read(self, path: ProjectPath) -> bytes:
        with _opened(self._open_file(path)) as fd:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)

    async def read(self, path: ProjectPath) -> bytes:
        """See :meth:`core.ports.ProjectFiles.read`."""
        return await asyncio.to_thread(self._read, path)

    def _read_ranges(self, path: ProjectPath, spans: Sequence[tuple[int, int]]) -> list[bytes]:
        with _opened(self._open_file(path)) as fd:
            return [os.pread(fd, max(0, length), offset) for offset, length in spans]

    async def read_ranges(self, path: ProjectPath, spans: Sequence[tuple[int, int]]) -> list[bytes]:
        """See :meth:`core.ports.ProjectFiles.read_ranges` (one ``pread`` per span)."""
        return await asyncio.to_thread(self._read_ranges, path, spans)

    async def read_chunks(
        self, path: ProjectPath, chunk_size: int = 1 << 20
    ) -> AsyncIterator[bytes]:
        """See :meth:`core.ports.ProjectFiles.read_chunks` (one chunk in memory at a time)."""
        fd = self._open_file(path)
        try:
            while chunk := await asyncio.to_thread(os.read, fd, chunk_size):
                yield chunk
        finally:
            os.close(fd)

    def _write(self, path: ProjectPath, data: bytes) -> None:
        with _opened(self._dir(path.parent, create=True)) as folder:
            found = _lstat(path.name, folder)
            mode = 0o644
            if found is not None:
                if st.S_ISLNK(found.st_mode):
                    raise _link_refusal(str(path))
                if st.S_ISDIR(found.st_mode):
                    raise Refused(Code.IS_A_DIRECTORY, f"'{path}' is a folder.")
                if not st.S_ISREG(found.st_mode):
                    raise Refused(Code.PATH_RESERVED, f"'{path}' is not a regular file.")
                mode = st.S_IMODE(found.st_mode)
            with self._temporaries.writing() as tmp:
                try:
                    _atomic_write(folder, path.name, data, tmp, mode)
                except OSError as exc:
                    raise _os_refusal(exc, f"Writing '{path}'") from None

    async def write(self, path: ProjectPath, data: bytes) -> None:
        """See :meth:`core.ports.ProjectFiles.write` (temporary + fsync + ``os.replace``)."""
        await asyncio.to_thread(self._write, path, data)

    async def stat(self, path: ProjectPath) -> Entry | None:
        """See :meth:`core.ports.ProjectFiles.stat`; a symbolic link there is refused
        ``path-outside-root`` (it is never followed, not even to say what it is)."""
        try:
            folder = self._dir(path.parent)
        except Refused as exc:
            if exc.code in (Code.FILE_NOT_FOUND, Code.NOT_A_DIRECTORY):
                return None
            raise
        with _opened(folder):
            found = _lstat(path.name, folder)
        if found is None:
            return None
        if st.S_ISLNK(found.st_mode):
            raise _link_refusal(str(path))
        if st.S_ISDIR(found.st_mode):
            return Entry(path.name, "dir")
        return Entry(path.name, "file", found.st_size, int(found.st_mtime * 1000))

    async def list_dir(self, folder: tuple[str, ...]) -> list[Entry]:
        """See :meth:`core.ports.ProjectFiles.list_dir`: links and special files left out,
        this host's leftover temporaries removed (never anything else)."""
        entries: list[Entry] = []
        with _opened(self._dir(folder)) as fd:
            stale = []
            with os.scandir(fd) as scan:
                for item in scan:
                    if item.is_symlink():
                        continue
                    if item.is_dir(follow_symlinks=False):
                        entries.append(Entry(item.name, "dir"))
                        continue
                    if not item.is_file(follow_symlinks=False):
                        continue
                    if self._temporaries.is_ours(item.name, "file"):
                        if self._temporaries.sweepable(item.name, "file"):
                            stale.append(item.name)
                        continue
                    info = item.stat(follow_symlinks=False)
                    entries.append(
                        Entry(item.name, "file", info.st_size, int(info.st_mtime * 1000))
                    )
            for name in stale:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=fd)
        return sorted(entries, key=lambda e: e.name)

    async def names(self, folder: tuple[str, ...]) -> list[str]:
        """See :meth:`core.ports.ProjectFiles.names` (links included: they hold the name)."""
        with _opened(self._dir(folder)) as fd:
            return sorted(os.listdir(fd))

    async def mkdir(self, path: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.mkdir`."""
        os.close(self._dir(path.parts, create=True))

    async def delete(self, path: ProjectPath, *, recursive: bool = False) -> None:
        """See :meth:`core.ports.ProjectFiles.delete` (a link is removed, never followed)."""
        with _opened(self._dir(path.parent)) as folder:
            found = _lstat(path.name, folder)
            if found is None:
                raise Refused(Code.FILE_NOT_FOUND, f"No file or folder '{path}'.")
            try:
                if not st.S_ISDIR(found.st_mode):
                    os.unlink(path.name, dir_fd=folder)
                elif recursive:
                    shutil.rmtree(path.name, dir_fd=folder)
                else:
                    os.rmdir(path.name, dir_fd=folder)
            except OSError as exc:
                raise _os_refusal(exc, f"Deleting '{path}'") from None
            _fsync_dir(folder)

    async def move(self, src: ProjectPath, dst: ProjectPath) -> None:
        """See :meth:`core.ports.ProjectFiles.move` (files only; ``already-exists``)."""
        os.close(self._open_file(src))  # a regular file, reached through no link
        with (
            _opened(self._dir(src.parent)) as source,
            _opened(self._dir(dst.parent, create=True)) as target,
        ):
            found = _lstat(dst.name, target)
            if found is not None:
                if st.S_ISLNK(found.st_mode):
                    raise _link_refusal(str(dst))
                raise Refused(Code.ALREADY_EXISTS, f"'{dst}' already exists.")
            try:
                os.rename(src.name, dst.name, src_dir_fd=source, dst_dir_fd=target)
            except OSError as exc:
                raise _os_refusal(exc, f"Moving '{src}'") from None
            _fsync_dir(target)
            _fsync_dir(source)


class DiskProjectRoots:
    """:class:`core.ports.ProjectRoots` over ``projects/``: one real folder per project id,
    each served case-guarded (see the module docstring); links are never projects."""

    def __init__(self, projects: Path, temporaries: Temporaries) -> None:
        self._projects = projects
        self._temporaries = temporaries

    def _files(self, project_id: str) -> ProjectFiles:
        return CaseGuard(DiskProjectFiles(self._projects / project_id, self._temporaries))

    def _root(self) -> int:
        return os.open(self._projects, _DIR_FLAGS)

    async def create(self, project_id: str) -> ProjectFiles:
        """See :meth:`core.ports.ProjectRoots.create`."""
        with _opened(self._root()) as fd:
            try:
                os.mkdir(project_id, 0o755, dir_fd=fd)
            except FileExistsError:
                raise Refused(Code.ALREADY_EXISTS, "That project id exists.") from None
            except OSError as exc:
                raise _os_refusal(exc, "Creating the project") from None
            _fsync_dir(fd)
        return self._files(project_id)

    async def open(self, project_id: str) -> ProjectFiles:
        """See :meth:`core.ports.ProjectRoots.open`."""
        with _opened(self._root()) as fd:
            found = _lstat(project_id, fd)
        if found is None or not st.S_ISDIR(found.st_mode):
            raise Refused(Code.PROJECT_NOT_FOUND)
        return self._files(project_id)

    async def remove(self, project_id: str) -> None:
        """See :meth:`core.ports.ProjectRoots.remove`."""
        with _opened(self._root()) as fd:
            found = _lstat(project_id, fd)
            if found is None or not st.S_ISDIR(found.st_mode):
                raise Refused(Code.PROJECT_NOT_FOUND)
            try:
                shutil.rmtree(project_id, dir_fd=fd)
            except OSError as exc:
                raise _os_refusal(exc, "Deleting the project") from None

    async def list_ids(self) -> list[str]:
        """See :meth:`core.ports.ProjectRoots.list_ids`."""
        with _opened(self._root()) as fd, os.scandir(fd) as scan:
            return sorted(e.name for e in scan if e.is_dir(follow_symlinks=False))

    def folder(self, project_id: str) -> Path:
        """The project's folder on disk, if it is a real folder (not a link); else refuses
        ``project-not-found``."""
        path = self._projects / project_id
        if not path.is_dir() or path.is_symlink():
            raise Refused(Code.PROJECT_NOT_FOUND)
        return path


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` as a ``0700`` folder (or make an existing one ``0700``); refuses a
    symbolic link there."""
    if path.is_symlink():
        raise Refused(Code.STORAGE_FAILED, f"{path} is a symbolic link; it must be a folder.")
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def write_private(folder: Path, name: str, data: bytes) -> None:
    """Write ``folder/name`` atomically as a ``0600`` file (temporary + fsync + replace)."""
    with _opened(os.open(folder, _DIR_FLAGS)) as fd:
        tmp = f"{TEMP_PREFIX}{os.urandom(8).hex()}"
        _atomic_write(fd, name, data, tmp, 0o600)


class DiskHostState:
    """:class:`core.ports.HostState` over HOST_DIR (``0700``, documents ``0600``, atomic)."""

    def __init__(self, host_dir: Path) -> None:
        ensure_private_dir(host_dir)
        self._dir = host_dir

    @property
    def path(self) -> Path:
        """HOST_DIR on disk."""
        return self._dir

    def _file(self, name: str) -> str:
        file = _FILE_NAMES.get(name, name)
        if not _NAME.fullmatch(file.lstrip(".")):
            raise ValueError("not a HOST_DIR document name")
        return file

    async def load(self, name: str) -> bytes | None:
        """See :meth:`core.ports.HostState.load`."""
        file = self._file(name)
        try:
            with _opened(os.open(self._dir, _DIR_FLAGS)) as folder:
                fd = os.open(file, _READ_FLAGS, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise Refused(Code.STORAGE_FAILED, f"HOST_DIR {file} does not open.") from exc
        with _opened(fd):
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)

    async def store(self, name: str, data: bytes) -> None:
        """See :meth:`core.ports.HostState.store`."""
        try:
            write_private(self._dir, self._file(name), data)
        except OSError as exc:
            raise _os_refusal(exc, f"Writing HOST_DIR {self._file(name)}") from None
