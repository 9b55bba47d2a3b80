"""Every tab follows another tab's changes without a reload (issue 33 item 2;
core/host/tab_events.py): each call that changes a project's files or the list of projects
posts an event naming only the project and the paths — no bytes, no secret."""

from __future__ import annotations

import json

from core.model import Contract
from tests.support import HostHarness


class Events:
    """:class:`core.ports.PageEvents` keeping what every tab would get."""

    def __init__(self) -> None:
        self.posted: list[dict[str, object]] = []

    def post(self, event: Contract) -> None:
        self.posted.append(event.model_dump(mode="json"))

    def take(self) -> list[dict[str, object]]:
        got, self.posted = self.posted, []
        return got


def test_every_change_to_the_tree_is_told_to_every_tab() -> None:
    h = HostHarness()
    events = Events()
    h.ctx.services.events = events
    pid = h.ok("project.create", name="p")["project"]["id"]
    assert events.take() == [{"type": "projects.changed", "project": pid, "how": "created"}]
    h.ok("file.write", b"secret-bytes", project=pid, path="a.txt")
    assert [e["type"] for e in events.take()] == ["file.changed"]

    def told(how: str, paths: list[str]) -> None:
        assert events.take() == [
            {"type": "files.changed", "project": pid, "paths": paths, "how": how}
        ]

    h.ok("file.mkdir", project=pid, path="docs")
    told("mkdir", ["docs"])
    h.ok("file.move", project=pid, src="a.txt", dst="docs/b.txt")
    told("move", ["a.txt", "docs/b.txt"])
    trashed = h.ok("file.delete", project=pid, path="docs/b.txt")
    told("delete", ["docs/b.txt"])
    h.ok("trash.restore", project=pid, id=trashed["trash_id"])
    told("restore", ["docs/b.txt"])
    listed = [{"path": "up/x.txt", "size": 3}, {"path": "up/y.txt", "size": 3}]
    h.ok("file.write_batch", b"xxxyyy", project=pid, files=listed)
    told("batch", ["up/x.txt", "up/y.txt"])
    h.ok("project.rename", project=pid, name="q")
    assert events.take() == [{"type": "projects.changed", "project": pid, "how": "renamed"}]
    h.ok("project.delete", project=pid)
    assert events.take() == [{"type": "projects.changed", "project": pid, "how": "removed"}]


def test_a_refused_change_tells_no_tab_and_no_event_holds_bytes() -> None:
    h = HostHarness()
    events = Events()
    h.ctx.services.events = events
    pid = h.ok("project.create", name="p")["project"]["id"]
    h.ok("file.write", b"secret-bytes", project=pid, path="a.txt")
    events.take()
    h.refused("file.delete", project=pid, path="nothing.txt")
    h.refused("file.move", project=pid, src="nothing.txt", dst="b.txt")
    assert events.take() == []
    h.ok("file.move", project=pid, src="a.txt", dst="b.txt")
    h.ok("file.delete", project=pid, path="b.txt")
    assert "secret-bytes" not in json.dumps(events.take())
