"""Properties of posting: random sequences of valid, stale, duplicate, out-of-order and archive
posts never leave two heads for one mission, never append on a refusal, and the mailbox always
reparses to the heads the host reports (seed 004 §1e, §2; :mod:`core.missions.posting`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.missions.letters import letter_id, parse_letter, sha12
from core.missions.mailbox import Mailbox
from tests.missions.kit import HUMAN, Kit
from tests.support import run

MISSIONS = ("msn_00000000000a", "msn_00000000000b", "msn_00000000000c")
PLAIN_PHASES = ("judging", "executing", "gate", "review", "merge_wait", "failed")

mission = st.integers(0, len(MISSIONS) - 1)
action = st.one_of(
    st.tuples(st.just("next"), mission, st.sampled_from(PLAIN_PHASES)),
    st.tuples(st.just("stale"), mission, st.integers(1, 3)),
    st.tuples(st.just("skip"), mission, st.integers(2, 4)),
    st.tuples(st.just("dup"), st.integers(0, 1000), st.just(0)),
    st.tuples(st.just("archive"), mission, st.booleans()),
)


class Oracle:
    """What the mailbox should hold: each mission's accepted chain, in order."""

    def __init__(self) -> None:
        self.chains: dict[str, list[dict]] = {m: [] for m in MISSIONS}
        self.posted: list[dict] = []

    def head(self, m: str) -> dict | None:
        return self.chains[m][-1] if self.chains[m] else None


def build(kit: Kit, m: str, seq: int, prev: str | None, phase: str, salt: int) -> dict:
    return kit.letter(mission=m, seq=seq, prev=prev, phase=phase, tokens_total=salt)


def id_of(body: dict) -> str:
    return letter_id(parse_letter(body))


def expected_and_letter(kit: Kit, oracle: Oracle, step: tuple, salt: int):
    """The letter an action posts, its origin/extra args, and the outcome the laws demand:
    ``"ok"``, ``"duplicate"`` or a refusal code."""
    kind, a, b = step
    if kind == "dup":
        if not oracle.posted:
            return None
        body = oracle.posted[a % len(oracle.posted)]
        if body["phase"] == "archived":  # a replay is a post: the person's gesture is asked again
            return body, {"origin": HUMAN, "archived_via": HUMAN}, "duplicate"
        return body, {}, "duplicate"
    m = MISSIONS[a]
    chain = oracle.chains[m]
    head = oracle.head(m)
    head_seq = 0 if head is None else head["mission_seq"]
    head_phase = None if head is None else head["phase"]
    if kind == "next":
        prev = None if head is None else sha12(id_of(head))
        body = build(kit, m, head_seq + 1, prev, b, salt)
        return body, {}, "invalid_transition" if head_phase == "archived" else "ok"
    if kind == "stale":
        # extend a letter ``b`` places behind the head (or open the mission again)
        base = max(len(chain) - 1 - b, -1)
        prev = None if base < 0 else sha12(id_of(chain[base]))
        body = build(kit, m, base + 2, prev, "executing", salt)
        return body, {}, "stale_head" if head is not None else "ok"
    if kind == "skip":
        prev = "0123456789ab"
        return build(kit, m, head_seq + b, prev, "executing", salt), {}, "stale_head"
    # archive, by a person (b) or not
    prev = None if head is None else sha12(id_of(head))
    body = build(kit, m, head_seq + 1, prev, "archived", salt)
    if not b:
        return body, {"origin": None, "archived_via": "human-ui"}, "human_gesture_required"
    outcome = "ok" if head_phase == "merge_wait" else "invalid_transition"
    return body, {"origin": HUMAN, "archived_via": HUMAN}, outcome


def reparsed_heads(kit: Kit) -> dict[str, str]:
    box = run(Mailbox.open(kit.files))
    return {s.head.letter.mission_id: s.head.letter_id for s in run(box.missions())}


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(action, min_size=1, max_size=25))
def test_random_posts_keep_one_head_per_mission_and_never_append_on_refusal(steps):
    kit = Kit()
    oracle = Oracle()
    for salt, step in enumerate(steps):
        made = expected_and_letter(kit, oracle, step, salt)
        if made is None:
            continue
        body, extra, expected = made
        origin = extra.pop("origin", None)
        before = kit.mailbox_bytes()
        answer = kit.call("mission.post", origin, agent_id="hand-1", letter=body, **extra)
        after = kit.mailbox_bytes()
        if expected == "ok":
            assert answer["ok"], (step, answer)
            assert answer["result"]["duplicate"] is False
            assert after.startswith(before)
            assert len(after.splitlines()) == len(before.splitlines()) + 1
            oracle.chains[body["mission_id"]].append(body)
            oracle.posted.append(body)
        elif expected == "duplicate":
            assert answer["ok"], (step, answer)
            assert answer["result"]["duplicate"] is True
            assert after == before
        else:
            assert not answer["ok"], (step, answer)
            assert answer["refusal"]["code"] == expected, (step, answer)
            assert after == before
        read = kit.ok("mailbox.read", kind="mission")
        ids = [h["mission_id"] for h in read["heads"]]
        assert len(ids) == len(set(ids))  # never two heads for one mission
        live = {h["mission_id"]: h["letter_id"] for h in read["heads"]}
        want = {m: id_of(c[-1]) for m, c in oracle.chains.items() if c}
        assert live == want
        assert reparsed_heads(kit) == want
        for h in read["heads"]:
            assert h["superseded_count"] == len(oracle.chains[h["mission_id"]]) - 1
            assert h["off_chain_count"] == 0
