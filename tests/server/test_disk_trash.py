"""Folder moves and the project trash over the environment server's real disk storage
(server_host/disk.py, served case-guarded as DiskProjectRoots does; issue 17): a renamed
folder is the same bytes on disk, a delete lands under ``.voicebox/trash/`` and a restore gives
the same sha256 back; a symlink inside a folder stops the move, which is rolled back."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest

from core.memory.adapters import FixedClock, SeededRandomness
from core.paths import ProjectPath, parse_path
from core.projects.case_guard import CaseGuard
from core.projects.temporaries import Temporaries
from core.projects.trash import Trash
from core.projects.tree import move_tree, survey
from core.refusals import Refused
from server_host.disk import DiskProjectFiles

TREE = {"src/a.txt": b"alpha", "src/lib/b.bin": bytes(range(256)) * 9, "src/lib/deep/c.md": b"#"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for path, data in TREE.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    return tmp_path


def run(coro):  # type: ignore[no-untyped-def]
    """The disk adapter hands blocking calls to threads: a real event loop is needed."""
    return asyncio.run(coro)


def files_of(root: Path) -> CaseGuard:
    return CaseGuard(DiskProjectFiles(root, Temporaries("0123456789abcdef", SeededRandomness())))


def on_disk(root: Path) -> dict[str, str]:
    """Every file under ``root`` outside ``.voicebox`` → its sha256."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != ".voicebox"
    }


def test_a_folder_rename_on_disk_moves_every_byte_and_leaves_no_source(root: Path) -> None:
    files = files_of(root)
    before = on_disk(root)
    tree = run(survey(files, parse_path("src")))
    assert run(move_tree(files, tree, parse_path("code"))) == 0
    assert on_disk(root) == {k.replace("src/", "code/", 1): v for k, v in before.items()}
    assert not (root / "src").exists()


def test_delete_and_restore_on_disk_are_byte_identical(root: Path) -> None:
    files = files_of(root)
    before = on_disk(root)
    trash = Trash(files, FixedClock(), SeededRandomness())
    entry = run(trash.put(parse_path("src")))
    assert on_disk(root) == {} and not (root / "src").exists()
    assert (root / ".voicebox" / "trash" / entry.id / "entry.json").is_file()
    _, back = run(trash.restore(entry.id))
    assert str(back) == "src" and on_disk(root) == before
    assert list((root / ".voicebox" / "trash").iterdir()) == []


def test_a_symlink_inside_a_folder_refuses_its_move_and_delete_untouched(root: Path) -> None:
    os.symlink(root / "src" / "a.txt", root / "src" / "lib" / "z-link")
    files = files_of(root)
    before = on_disk(root)
    trash = Trash(files, FixedClock(), SeededRandomness())
    for attempt in (survey(files, parse_path("src")), trash.put(parse_path("src"))):
        with pytest.raises(Refused) as refused:
            run(attempt)
        assert refused.value.code == "path-reserved" and "lib/z-link" in refused.value.message
    assert on_disk(root) == before and (root / "src" / "lib" / "z-link").is_symlink()
    assert not (root / ".voicebox").exists()


def test_a_refused_folder_move_leaves_a_file_in_the_way_untouched(root: Path) -> None:
    files = files_of(root)
    before = on_disk(root)
    tree = run(survey(files, parse_path("src")))
    (root / "dest").mkdir()
    (root / "dest" / "src").write_bytes(b"a file where the folder must go")
    with pytest.raises(Refused):
        run(move_tree(files, tree, ProjectPath(("dest", "src"))))
    after = on_disk(root)
    assert (root / "dest" / "src").read_bytes() == b"a file where the folder must go"
    assert {k: v for k, v in after.items() if k != "dest/src"} == before
