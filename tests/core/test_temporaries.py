"""This host's atomic-write temporaries (core/projects/temporaries.py; SPEC §3, issue 13 finding 1).

A listing may remove a leftover temporary only when this host provably made it: a FILE whose
name is exactly this host's marked shape and that no call has in flight. Anything merely shaped
like one — a person's ``.vbx-tmp-my-draft.md``, a file named ``.vbx-tmp-``, a folder, another
host's temporary — is never removed.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from core.memory.adapters import MemoryHostState, SeededRandomness
from core.paths import TEMP_PREFIX
from core.projects.temporaries import MARKER_DOCUMENT, Temporaries, load_temporaries
from tests.support import run


@pytest.fixture
def temps() -> Temporaries:
    return run(load_temporaries(MemoryHostState(), SeededRandomness()))


def test_a_temporary_carries_this_hosts_marker_and_a_fresh_random_part(
    temps: Temporaries,
) -> None:
    with temps.writing() as first, temps.writing() as second:
        assert first != second
        for name in (first, second):
            assert name.startswith(f"{TEMP_PREFIX}{temps.marker}-")
            assert temps.is_ours(name, "file")


def test_a_listing_may_remove_only_this_hosts_temporary_files_not_in_flight(
    temps: Temporaries,
) -> None:
    with temps.writing() as finished:
        assert not temps.sweepable(finished, "file")  # in flight: never touched
    assert temps.sweepable(finished, "file")  # a leftover (its writer is gone)
    other_host = run(load_temporaries(MemoryHostState(), SeededRandomness(seed=99)))
    with other_host.writing() as theirs:
        pass
    with temps.writing() as live:
        assert not temps.sweepable(live, "file")
        for name, kind in [
            (finished, "dir"),  # this host never makes a folder: a folder is the person's
            (".vbx-tmp-my-draft.md", "file"),
            (".vbx-tmp-", "file"),
            (".vbx-tmp-empty-dir", "dir"),
            (f"{TEMP_PREFIX}{temps.marker}-", "file"),
            (f"{TEMP_PREFIX}{temps.marker}-{'g' * 16}", "file"),
            (f"{finished}.md", "file"),
            (finished.upper(), "file"),
            (f"copy of {finished}", "file"),
            (theirs, "file"),  # another host's (another profile sharing the folder)
        ]:
            assert not temps.sweepable(name, kind), name
            assert not temps.is_ours(name, kind), name


@given(st.text(max_size=80), st.sampled_from(["file", "dir"]))
def test_no_name_chosen_without_this_hosts_marker_is_ever_swept(name: str, kind: str) -> None:
    temps = run(load_temporaries(MemoryHostState(), SeededRandomness()))
    assume(temps.marker not in name)
    assert not temps.sweepable(f"{TEMP_PREFIX}{name}", kind)
    assert not temps.sweepable(name, kind)


def test_the_marker_is_drawn_once_per_host_and_kept() -> None:
    state = MemoryHostState()
    first = run(load_temporaries(state, SeededRandomness(seed=1)))
    again = run(load_temporaries(state, SeededRandomness(seed=2)))
    assert again.marker == first.marker
    assert MARKER_DOCUMENT in state.docs
    elsewhere = run(load_temporaries(MemoryHostState(), SeededRandomness(seed=2)))
    assert elsewhere.marker != first.marker


def test_an_unreadable_marker_document_is_replaced_by_a_fresh_marker() -> None:
    state = MemoryHostState()
    state.docs[MARKER_DOCUMENT] = b"not json"
    temps = run(load_temporaries(state, SeededRandomness()))
    assert run(load_temporaries(state, SeededRandomness(seed=5))).marker == temps.marker
    assert state.docs[MARKER_DOCUMENT] != b"not json"
