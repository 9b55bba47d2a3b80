"""Export → import gives back byte-identical files (SPEC §10), also for random trees."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.archive.apply import apply_import
from core.archive.plan import plan_import
from core.memory.adapters import MemoryProjectFiles
from core.paths import META_DIR, parse_path
from core.refusals import Refused
from tests.archive.kit import BINARY, UNICODE_PATH, export, new_project, project, sample, tree
from tests.support import HostHarness, run


def round_trip(files: MemoryProjectFiles, **plan_args: bool) -> MemoryProjectFiles:
    plan = plan_import(export(files)[0], **plan_args)
    target = MemoryProjectFiles()
    run(apply_import(plan, target))
    return target


def test_round_trip_is_byte_identical_with_unicode_names_binary_and_empty_folders() -> None:
    files = sample()
    back = round_trip(files)
    assert tree(back) == tree(files)
    assert tree(back)[UNICODE_PATH] == "Привет, мир — ü 📦\n".encode()
    assert tree(back)["assets/logo.bin"] == BINARY
    assert tree(back)["empty/inner"] is None


def test_round_trip_through_the_host_operations() -> None:
    h = HostHarness()
    content = {UNICODE_PATH: "файл".encode(), "bin/blob.bin": BINARY, "z/y/x/w.txt": b""}
    source = new_project(h, "Проект-ü-📦", content)
    _, body = h.call("project.export", project=source)
    copy = h.ok("project.import", body, name="Copy")["project"]["id"]
    assert tree(h.roots.roots[copy]) == tree(h.roots.roots[source])
    _, again = h.call("project.export", project=copy)
    assert again is not None and body is not None
    # the copy is a different project exported by the same host: only the manifest's
    # name and source project differ, every file entry is the same
    assert again[: again.index(b".voicebox/")] == body[: body.index(b".voicebox/")]


def test_a_reimported_export_exports_to_the_same_files() -> None:
    files = sample()
    first, _, _ = export(files)
    second, _, _ = export(round_trip(files))
    assert first == second


# -- property: random trees ------------------------------------------------------------------

_alphabet = st.characters(
    blacklist_categories=("Cc", "Cs"), blacklist_characters="/\\", max_codepoint=0x1FFFF
)


def _a_valid_name(segment: str) -> bool:
    """The one name rule (core/paths.py) decides which random names a project can hold."""
    try:
        parse_path(segment)
    except Refused:
        return False
    return True


_segment = st.text(_alphabet, min_size=1, max_size=12).filter(_a_valid_name)
_path = st.lists(_segment, min_size=1, max_size=4).filter(lambda p: p[0] != META_DIR)
_trees = st.dictionaries(_path.map(tuple), st.binary(max_size=300), max_size=12).filter(
    # a path may not be both a file and the folder of another file
    lambda d: not any(a != b and b[: len(a)] == a for a in d for b in d)
)


@settings(max_examples=60, deadline=None, database=None)
@given(_trees)
def test_random_trees_round_trip_byte_identical(files: dict[tuple[str, ...], bytes]) -> None:
    content = {"/".join(parts): data for parts, data in files.items()}
    source = project(content)
    back = round_trip(source, case_insensitive_target=False)
    assert tree(back) == tree(source)
    assert export(back)[0] == export(source)[0]
