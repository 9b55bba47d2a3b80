"""What each tab said its editor holds unsaved (issue 33; the operations are
:mod:`core.host.unsaved_ops`). Kept in memory by the host, per page id, never stored."""

from __future__ import annotations

from core.model import Contract

__all__ = ["MAX_PAGES", "MAX_PATHS", "PAGE_ID_PATTERN", "UnsavedElsewhere", "UnsavedTabs"]

PAGE_ID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
"""A page's id: the random UUID of its life lock (``page/host-client.mjs``)."""
MAX_PATHS = 64
"""The most paths one tab reports (the editor holds one file; room for more)."""
MAX_PAGES = 256
"""The most pages kept; past it the page that reported longest ago is forgotten."""


class UnsavedElsewhere(Contract):
    """``tabs``: how many other tabs hold unsaved text in the project; ``paths``: which."""

    tabs: int
    paths: list[str]


class UnsavedTabs:
    """Per page id, the project and paths that tab's editor holds unsaved (in memory only)."""

    def __init__(self) -> None:
        self._pages: dict[str, tuple[str, tuple[str, ...]]] = {}

    def report(self, page: str, project: str | None, paths: list[str]) -> int:
        """Keep what ``page`` said (replacing what it said before); returns the paths kept."""
        self._pages.pop(page, None)
        if project is None or not paths:
            return 0
        self._pages[page] = (project, tuple(dict.fromkeys(paths)))
        while len(self._pages) > MAX_PAGES:
            self._pages.pop(next(iter(self._pages)))
        return len(self._pages[page][1])

    def forget(self, page: str) -> bool:
        """``page`` is gone (its life lock was released): drop it; True when it had any."""
        return self._pages.pop(page, None) is not None

    def elsewhere(self, project: str, page: str) -> UnsavedElsewhere:
        """The tabs other than ``page`` holding unsaved text in ``project``."""
        held = [paths for p, (proj, paths) in self._pages.items() if proj == project and p != page]
        return UnsavedElsewhere(tabs=len(held), paths=sorted({x for ps in held for x in ps}))
