"""Unsaved editor text in other tabs (issue 33, the fresh tester's tryout): each tab tells the
host which project and paths it holds unsaved; the delete confirmation asks which other tabs
do; the host forgets a tab when its life lock is released (``UnsavedTabs.forget``, called by
``browser_host.main`` ``page_gone``)."""

from __future__ import annotations

import uuid

from core.host.unsaved_tabs import MAX_PAGES
from tests.support import HostHarness

A, B = str(uuid.uuid4()), str(uuid.uuid4())


def test_the_host_knows_another_tab_has_unsaved_changes_in_a_project_until_that_tab_goes() -> None:
    h = HostHarness()
    pid = h.ok("project.create", name="alpha")["project"]["id"]
    other = h.ok("project.create", name="beta")["project"]["id"]
    asked = {"project": pid, "page": B}
    assert h.ok("project.unsaved_elsewhere", **asked) == {"tabs": 0, "paths": []}
    assert h.ok("tabs.unsaved", page=A, project=pid, paths=["notes.txt"]) == {"paths": 1}
    assert h.ok("project.unsaved_elsewhere", **asked) == {"tabs": 1, "paths": ["notes.txt"]}
    # the tab holding them is not warned of its own edits; another project has none
    assert h.ok("project.unsaved_elsewhere", project=pid, page=A)["tabs"] == 0
    assert h.ok("project.unsaved_elsewhere", project=other, page=B)["tabs"] == 0
    # saved (or discarded): the tab says it holds none
    h.ok("tabs.unsaved", page=A, project=pid, paths=[])
    assert h.ok("project.unsaved_elsewhere", **asked)["tabs"] == 0
    # the tab closes with unsaved text: its life lock is released, the worker says page_gone
    h.ok("tabs.unsaved", page=A, project=pid, paths=["a.py"])
    assert h.ctx.unsaved.forget(A) is True
    assert h.ok("project.unsaved_elsewhere", **asked)["tabs"] == 0
    assert h.ctx.unsaved.forget(A) is False


def test_what_a_tab_says_of_unsaved_text_is_bounded_and_checked() -> None:
    h = HostHarness()
    pid = h.ok("project.create", name="alpha")["project"]["id"]
    assert h.refused("tabs.unsaved", page="not-a-page", project=pid, paths=["x"])
    assert h.refused("tabs.unsaved", page=A, project=pid, paths=["x"] * 65)
    for _ in range(MAX_PAGES + 5):  # many tabs (or one lying): the oldest are forgotten
        h.ok("tabs.unsaved", page=str(uuid.uuid4()), project=pid, paths=["x"])
    assert h.ok("project.unsaved_elsewhere", project=pid, page=A)["tabs"] == MAX_PAGES
