"""The mailbox warm-up after ready (issue 18, :func:`core.host.mailbox_ops.warm_mailboxes`):
it moves the opening of the projects' mailboxes — the persisted index's header, table and
tail — from the first post to the time after ready, and changes no answer: a warmed host
answers every call exactly as a cold one, a post that arrives while the warm-up is opening
its mailbox waits for that one open, and storage changed under a warmed mailbox is still
seen. Over the in-memory ports; the races run their own event loop (CPython only)."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

from core.audit import AuditLog
from core.host.context import HostContext, HostServices
from core.host.mailbox_ops import warm_mailboxes
from core.host.pipeline import Host
from core.host.registry import OPERATIONS
from core.memory.adapters import MemoryProjectFiles, SeededRandomness
from core.missions.blocks import SKELETON_PATH
from core.missions.letters import MissionLetter
from core.missions.mailbox import INDEX_PATH, Mailbox, encode_line, mission_line, segment_path
from core.refusals import Code, Refused
from tests.missions.kit import BRAIN, letter
from tests.support import HostHarness, run

AGENT = "hand-1"
AT = "2026-01-01T00:00:00.000Z"


class Spy:
    """The storage port over ``inner``, recording each call as ``(method, path)``; a call may
    be held at a gate (:meth:`hold`) until the test lets it go."""

    def __init__(self, inner: MemoryProjectFiles) -> None:
        self.inner = inner
        self.calls: list[tuple[str, str]] = []
        self._held: tuple[str, str] | None = None
        self.gate: asyncio.Event | None = None
        self.waiting: asyncio.Event | None = None
        self.broken = False  # every call refused storage-failed

    def hold(self, method: str, path: str) -> None:
        """Hold every ``method`` call on ``path`` until :attr:`gate` is set (needs a loop)."""
        self._held = (method, path)
        self.gate, self.waiting = asyncio.Event(), asyncio.Event()

    async def _note(self, method: str, path: object) -> None:
        where = "/".join(path) if isinstance(path, tuple) else str(path)
        self.calls.append((method, where))
        if self.broken:
            raise Refused(Code.STORAGE_FAILED, "Storage is broken here.")
        if self._held == (method, where):
            assert self.gate is not None and self.waiting is not None
            self.waiting.set()
            await self.gate.wait()

    def __getattr__(self, name: str) -> Any:
        inner = getattr(self.inner, name)
        if name not in {"read", "read_ranges", "stat", "names", "list_dir", "write"}:
            return inner

        async def noted(path: Any, *args: Any, **kwargs: Any) -> Any:
            await self._note(name, path)
            return await inner(path, *args, **kwargs)

        return noted


class World:
    """A host over in-memory ports with projects whose mailboxes already hold letters (what a
    reload finds), restartable: :meth:`restart` is a fresh host over the same storage."""

    def __init__(self, projects: int = 2, letters: int = 30) -> None:
        self.h = HostHarness()
        self.ids: list[str] = []
        self.heads: dict[tuple[str, str], dict[str, Any]] = {}
        for p in range(projects):
            self.h.clock.advance(1_000)  # each project updated after the one before
            pid = self.h.ok("project.create", name=f"{BRAIN} {p}")["project"]["id"]
            self.ids.append(pid)
            for i in range(letters):
                self.post(self.h, pid, f"msn_{i % 6:012x}")
            run(Mailbox.open(run(self.h.roots.open(pid))))  # writes the index, as a reopen does
        self.spies: dict[str, Spy] = {}

    def post_args(self, pid: str, mission: str, *, stale: bool = False) -> dict[str, Any]:
        head = self.heads.get((pid, mission))
        seq = 0 if head is None else head["mission_seq"]
        prev = None if head is None else head["sha12"]
        if stale and head is not None:
            seq, prev = seq - 1, "0" * 12
        name = self.ids.index(pid)
        body = letter(mission=mission, seq=seq + 1, prev=prev, brain=f"{BRAIN} {name}")
        body["tokens_total"] = len(self.heads) + seq
        return {"project": pid, "agent_id": AGENT, "letter": body}

    def post(self, h: HostHarness, pid: str, mission: str) -> dict[str, Any]:
        posted = h.ok("mission.post", **self.post_args(pid, mission))
        self.heads[(pid, mission)] = posted
        return posted

    def restart(self) -> HostHarness:
        """A fresh host (nothing open, nothing cached) over this world's storage, whose project
        roots are :class:`Spy` wrappers (in :attr:`spies`)."""
        old = self.h
        again = HostHarness()
        again.roots, again.state, again.sink = old.roots, old.state, old.sink
        again.clock, again.audit_key, again.folders = old.clock, old.audit_key, old.folders
        inner_open = old.roots.open

        async def spied_open(project_id: str) -> Any:
            if project_id not in self.spies:
                self.spies[project_id] = Spy(await inner_open(project_id))
            return self.spies[project_id]

        roots = copy.copy(old.roots)
        roots.open = spied_open  # type: ignore[method-assign]
        again.ctx = HostContext(
            roots=roots,
            state=old.state,
            audit=AuditLog(old.sink, old.clock, key=old.audit_key, state=old.state),
            clock=old.clock,
            random=SeededRandomness(),
            services=HostServices(folders=old.folders),
        )
        again.host = Host(again.ctx, OPERATIONS)
        self.spies.clear()
        return again


def message(n: int, args: dict[str, Any]) -> str:
    return json.dumps({"v": 1, "id": f"w{n}", "op": "mission.post", "args": args})


def test_the_warm_up_opens_each_mailbox_so_the_first_post_opens_none() -> None:
    """What moved: after the warm-up, the first post into each project neither lists the
    mailbox nor reads the index's header or the tail segment — it makes the calls of any later
    post (the cheap storage check, the one id bucket, the one mission document, the write)."""
    world = World()
    h = world.restart()
    assert run(warm_mailboxes(h.ctx)) == list(reversed(world.ids))  # newest first
    for pid in world.ids:
        spy = world.spies[pid]
        assert ("names", ".voicebox/mailbox") in spy.calls  # the warm-up opened it
        spy.calls.clear()
        world.post(h, pid, "msn_000000000001")
        first = list(spy.calls)
        spy.calls.clear()
        world.post(h, pid, "msn_000000000002")
        assert ("names", ".voicebox/mailbox") not in first
        assert ("stat", str(INDEX_PATH)) not in first
        assert ("read", str(segment_path(0))) not in first
        assert set(first) <= set(spy.calls) | {("read_ranges", str(INDEX_PATH))}
    assert run(warm_mailboxes(h.ctx)) == []  # nothing left to open


def _spoil(world: World, how: str) -> None:
    """Leave each project's persisted index ``how``: current, cut short, stale (a tail line it
    covered is gone), or missing (an old mailbox)."""
    for pid in world.ids:
        tree = run(world.h.roots.open(pid)).tree[".voicebox"]
        if how == "truncated":
            tree["mailbox.index"] = bytes(tree["mailbox.index"])[:-7]
        elif how == "stale":
            folder = tree["mailbox"]
            tail = max(folder)
            folder[tail] = b"".join(bytes(folder[tail]).splitlines(keepends=True)[:-1])
        elif how == "missing":
            del tree["mailbox.index"]


@pytest.mark.parametrize("index", ["current", "truncated", "stale", "missing"])
def test_a_warmed_host_answers_every_call_exactly_as_a_cold_one(index: str) -> None:
    """The same calls after a restart — fresh posts, a replay (duplicate), a stale head, a
    listing of heads — answer byte for byte the same whether the warm-up ran first or not,
    whatever state the persisted index was left in (a stale or truncated one is rebuilt by
    whichever opens it first)."""
    answers = []
    for warmed in (False, True):
        twin = World()  # the same storage each time (fixed clock, seeded ids)
        _spoil(twin, index)
        h = twin.restart()
        if warmed:
            assert run(warm_mailboxes(h.ctx))
        out = []
        for n, pid in enumerate(twin.ids):
            fresh = twin.post_args(pid, "msn_000000000003")
            stale = twin.post_args(pid, "msn_000000000004", stale=True)
            for i, args in enumerate((fresh, fresh, stale)):
                out.append(h.raw(message(10 * n + i, args))[0])
            read = {"v": 1, "id": f"r{n}", "op": "mailbox.read"}
            read["args"] = {"project": pid, "kind": "mission"}
            out.append(h.raw(json.dumps(read))[0])
        answers.append(out)
    cold, warm = answers
    assert warm == cold
    assert [a["ok"] for a in cold[:4]] == [True, True, False, True]
    assert cold[1]["result"]["duplicate"] and cold[2]["refusal"]["code"] == "stale_head"


def test_a_letter_appended_by_another_writer_after_the_warm_up_is_seen() -> None:
    """The warm-up opens a mailbox; a foreign writer then extends a mission's head on storage.
    A post built on the head the warm-up saw is refused ``stale_head`` naming the new head —
    the warmed mailbox is checked against storage before use, never believed."""
    world = World(projects=1)
    h = world.restart()
    (pid,) = world.ids
    run(warm_mailboxes(h.ctx))
    mission = "msn_000000000001"
    old = world.post_args(pid, mission)
    foreign = MissionLetter.model_validate(old["letter"])
    files = world.spies[pid].inner
    tail = max(files.tree[".voicebox"]["mailbox"])
    folder = files.tree[".voicebox"]["mailbox"]
    folder[tail] = bytes(folder[tail]) + encode_line(mission_line(foreign, "hand-9", AT))
    again = dict(old, letter=dict(old["letter"], tokens_total=99))
    refusal = h.refused("mission.post", **again)
    assert refusal["code"] == "stale_head"
    assert refusal["details"]["head_seq"] == old["letter"]["mission_seq"]


def test_the_warm_up_leaves_picked_folders_alone_and_skips_a_refused_open() -> None:
    """A picked folder is never opened by the warm-up (that may need a permission); a project
    whose storage refuses is skipped, and its first call refuses as it would have."""
    world = World(projects=2, letters=3)
    picked = world.h.attach("project.add_folder", MemoryProjectFiles(), name="picked")
    assert picked["ok"], picked
    h = world.restart()
    broken, fine = world.ids
    run(h.ctx.catalog.open(broken))
    world.spies[broken].broken = True
    folders = h.ctx.services.folders
    assert folders is not None
    opened_folders: list[str] = []
    real_open = folders.open

    async def folder_open(project_id: str) -> Any:
        opened_folders.append(project_id)
        return await real_open(project_id)

    folders.open = folder_open  # type: ignore[method-assign]
    assert run(warm_mailboxes(h.ctx)) == [fine]
    assert opened_folders == []  # the picked folder was not touched
    refusal = h.refused("mission.post", **world.post_args(broken, "msn_000000000001"))
    assert refusal["code"] == "storage-failed"


# ---- races: a real event loop (CPython only; inside Pyodide the runner is the one loop) -----


async def _turns(n: int = 50) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


@pytest.mark.cpython_only
def test_a_post_that_arrives_while_the_warm_up_opens_its_mailbox_waits_for_that_open() -> None:
    """The warm-up is held inside its open (listing the segments); a post and a stale post
    into that project arrive meanwhile. Neither is answered before the open finishes, both
    are answered right (the post extends the head, the stale one is refused with the head it
    missed), and the mailbox was opened once, not once per caller."""
    world = World(projects=1)
    h = world.restart()
    (pid,) = world.ids
    run(h.ctx.catalog.open(pid))  # the spy exists before the warm-up starts
    spy = world.spies[pid]
    spy.hold("names", ".voicebox/mailbox")
    mission = "msn_000000000005"
    fresh = world.post_args(pid, mission)
    stale = world.post_args(pid, "msn_000000000000", stale=True)

    async def scenario() -> tuple[list[str], list[dict[str, Any]]]:
        warm = asyncio.ensure_future(warm_mailboxes(h.ctx))
        assert spy.waiting is not None and spy.gate is not None
        await spy.waiting.wait()
        posts = [
            asyncio.ensure_future(h.host.handle(message(i, a)))
            for i, a in enumerate((fresh, stale))
        ]
        await _turns()
        assert not any(p.done() for p in posts)  # they wait for the open under way
        spy.gate.set()
        opened = await warm
        return opened, [json.loads((await p)[0]) for p in posts]

    opened, (posted, refused) = asyncio.run(scenario())
    assert opened == [pid]
    assert posted["ok"] and posted["result"]["mission_seq"] == fresh["letter"]["mission_seq"]
    assert not posted["result"]["duplicate"]
    assert refused["refusal"]["code"] == "stale_head"
    assert spy.calls.count(("names", ".voicebox/mailbox")) == 1  # one open for all three
    cold = world.restart()  # and what storage holds is what a cold host reads
    assert cold.ok("mailbox.read", project=pid, kind="mission") == h.ok(
        "mailbox.read", project=pid, kind="mission"
    )


@pytest.mark.cpython_only
def test_a_post_into_another_project_is_not_held_up_by_the_warm_up() -> None:
    """The warm-up is held inside the newest project's open; a post into the other project is
    answered meanwhile (it opens its own mailbox), and the warm-up then skips that one."""
    world = World(projects=2)
    h = world.restart()
    older, newer = world.ids
    run(h.ctx.catalog.open(newer))
    world.spies[newer].hold("names", ".voicebox/mailbox")
    args = world.post_args(older, "msn_000000000002")

    async def scenario() -> tuple[list[str], dict[str, Any]]:
        spy = world.spies[newer]
        assert spy.waiting is not None and spy.gate is not None
        warm = asyncio.ensure_future(warm_mailboxes(h.ctx))
        await spy.waiting.wait()
        answer = json.loads((await h.host.handle(message(1, args)))[0])
        assert not warm.done()
        spy.gate.set()
        return await warm, answer

    opened, answer = asyncio.run(scenario())
    assert answer["ok"] and answer["result"]["mission_seq"] == args["letter"]["mission_seq"]
    assert opened == [newer]  # the older one was open already: not opened twice


@pytest.mark.cpython_only
def test_the_warm_up_ends_only_after_every_picked_mailbox_is_open_even_one_a_call_began() -> None:
    """Issue 34 (the worker posts ``settled`` when the warm-up ends): a call is opening the
    only project's mailbox (held inside its open) when the warm-up reaches it. The warm-up
    does not pass it by: it ends only once that open is over — and then reads the project's
    block store too (what a post reads beside the mailbox), though the call opened it."""
    world = World(projects=1)
    h = world.restart()
    (pid,) = world.ids
    run(h.ctx.catalog.open(pid))  # the spy exists before the call starts
    spy = world.spies[pid]
    spy.hold("names", ".voicebox/mailbox")
    read = {"v": 1, "id": "r1", "op": "mailbox.read", "args": {"project": pid, "kind": "mission"}}

    async def scenario() -> tuple[list[str], dict[str, Any], bool]:
        assert spy.waiting is not None and spy.gate is not None
        call = asyncio.ensure_future(h.host.handle(json.dumps(read)))
        await spy.waiting.wait()  # the call's open is under way
        warm = asyncio.ensure_future(warm_mailboxes(h.ctx))
        await _turns()
        assert not warm.done()  # it waits for the open under way, not past it
        assert ("read", str(SKELETON_PATH)) not in spy.calls
        spy.gate.set()
        opened = await warm
        open_when_done = h.ctx.mailboxes.is_open(pid)
        return opened, json.loads((await call)[0]), open_when_done

    opened, answer, open_when_done = asyncio.run(scenario())
    assert answer["ok"], answer
    assert opened == []  # the call opened it, not the warm-up
    assert open_when_done
    assert spy.calls.count(("names", ".voicebox/mailbox")) == 1  # one open, the call's
    assert ("read", str(SKELETON_PATH)) in spy.calls  # the warm-up read the block store


@pytest.mark.cpython_only
def test_settled_is_posted_only_after_every_warmed_mailbox_is_open() -> None:
    """Issue 34: ``Host.after_ready`` (what the worker calls once it has posted ``ready``)
    calls ``settled`` only when the late imports and the warm-up are both done — and the
    warm-up is done only when every mailbox it picked is open. Here a call is opening the
    older project's mailbox (held inside its open) when the host becomes ready: the warm-up
    opens the newer one, then waits for that open, and ``settled`` comes after both."""
    world = World(projects=2)
    h = world.restart()
    older, newer = world.ids
    run(h.ctx.catalog.open(older))
    spy = world.spies[older]
    spy.hold("names", ".voicebox/mailbox")
    read = {"v": 1, "id": "r1", "op": "mailbox.read", "args": {"project": older}}
    seen: list[tuple[bool, bool]] = []

    def settled() -> None:
        seen.append((h.ctx.mailboxes.is_open(newer), h.ctx.mailboxes.is_open(older)))

    async def scenario() -> dict[str, Any]:
        assert spy.waiting is not None and spy.gate is not None
        call = asyncio.ensure_future(h.host.handle(json.dumps(read)))
        await spy.waiting.wait()  # the call's open of the older mailbox is under way
        both = h.host.after_ready(settled)
        for _ in range(200):
            if h.ctx.mailboxes.is_open(newer):
                break
            await asyncio.sleep(0)
        await _turns()
        assert h.ctx.mailboxes.is_open(newer)  # the warm-up went on with the other project
        assert seen == []  # but is not done: the older mailbox's open is under way
        spy.gate.set()
        await both
        await _turns(5)  # the done callback's turn
        return json.loads((await call)[0])

    answer = asyncio.run(scenario())
    assert answer["ok"], answer
    assert seen == [(True, True)]  # once, with every picked mailbox open
