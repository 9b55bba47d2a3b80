"""Hostile input in the real browser (issue 10; SPEC §3, §4, §11).

- Every host-protocol message type, mutated so it cannot be valid (random JSON, wrong types,
  unknown fields, oversized text, deep nesting, broken JSON, lone surrogates, stray bodies),
  posted through the page's own client in concurrent batches: each gets exactly one answer, a
  refusal from the closed list with its own status — never a result, an ``internal-error``, a
  hang or silence — and the host answers the next call. (The same laws are fuzzed on CPython
  in ``tests/core/test_protocol.py``; this runs them through postMessage, Pyodide and the
  worker's glue.)
- A corpus of hostile file and project names: each is refused by name with the code the one
  name rule (``core/paths.py``) gives it, or stored and shown faithfully — the page's text is
  exactly the name's characters.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.host.registry import OPERATIONS
from core.paths import MAX_SEGMENT_BYTES
from core.protocol import MAX_MESSAGE_BYTES
from core.refusals import REFUSALS, Code
from e2e.hostpage import HostPage
from e2e.site import BASE_URL

OPS = sorted(OPERATIONS)
STATUS = {str(code): info.status for code, info in REFUSALS.items()}

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
WRONG = st.sampled_from([[], [1, "x"], {"nested": {"deep": [None]}}])


def _schema(op: str) -> dict[str, Any]:
    return OPERATIONS[op].args.model_json_schema()


@st.composite
def _mutated_args(draw: st.DrawFn, op: str) -> Any:
    """Arguments for ``op`` that its strict model must refuse."""
    schema = _schema(op)
    props = schema.get("properties", {})
    kind = draw(st.sampled_from(["random", "wrong-type", "unknown-field", "huge-field"]))
    if kind == "random" or not props:
        value = draw(JSON)
        if isinstance(value, dict):
            value[f"__unknown_{draw(st.integers(0, 999))}"] = value.get("x", 1)
        return value
    field = draw(st.sampled_from(sorted(props)))
    if kind == "wrong-type":
        typed = props[field].get("type")
        wrong = draw(WRONG)
        if typed == "object" or (typed is None and isinstance(wrong, dict)):
            wrong = [wrong]
        if typed == "array" and isinstance(wrong, list):
            wrong = {"not": "a list"}
        return {field: wrong}
    if kind == "unknown-field":
        return {field: None, "grant": {"all": True}, draw(st.text(min_size=1, max_size=8)): 1}
    return {field: "x" * draw(st.integers(10_000, 200_000)), "__pad": True}


@st.composite
def _message(draw: st.DrawFn) -> tuple[str, int]:
    """One hostile message: ``(text, body_bytes)``; ``body_bytes`` > 0 sends a body."""
    shape = draw(
        st.sampled_from(
            ["args", "args", "args", "envelope", "raw", "deep", "huge", "surrogate", "body"]
        )
    )
    op = draw(st.sampled_from(OPS))
    rid = f"f{draw(st.integers(0, 10**9))}"
    envelope: dict[str, Any] = {"v": 1, "id": rid, "op": op, "args": {}}
    if shape == "args":
        envelope["args"] = draw(_mutated_args(op))
    elif shape == "envelope":
        key, value = draw(
            st.sampled_from(
                [
                    ("v", 2),
                    ("v", "1"),
                    ("v", None),
                    ("op", 5),
                    ("op", "no.such.op"),
                    ("op", "x" * 300),
                    ("id", {"id": 1}),
                    ("id", "bad id with spaces"),
                    ("origin", "HUMAN-UI"),
                    ("origin", "peer"),
                    ("extra", True),
                    ("args", "not an object"),
                ]
            )
        )
        envelope[key] = value
        if key in ("v", "op", "id", "origin", "extra") and draw(st.booleans()):
            envelope["args"] = draw(_mutated_args(op))
    elif shape == "raw":
        text = draw(
            st.one_of(
                st.text(max_size=200),
                st.sampled_from(
                    ["", "null", "[]", "1e999", '{"v":NaN}', '{"v":1,"v":1}', "\ufeff{}"]
                ),
                st.just(json.dumps(envelope)[: draw(st.integers(0, 30))]),
            )
        )
        return text, 0
    elif shape == "deep":
        depth = draw(st.integers(200, 50_000))
        return (
            '{"v":1,"id":"' + rid + '","op":"host.info","args":' + "[" * depth + "]" * depth + "}",
            0,
        )
    elif shape == "huge":
        envelope["args"] = {"pad": "y" * (MAX_MESSAGE_BYTES + draw(st.integers(1, 4096)))}
    elif shape == "surrogate":
        envelope["args"] = {"name": "a\ud800b", "path": "\udfff"}
        text = json.dumps(envelope, ensure_ascii=False)
        return (text if draw(st.booleans()) else json.dumps(envelope)), 0
    elif shape == "body":
        envelope["args"] = draw(_mutated_args(op))
        return json.dumps(envelope), draw(st.integers(1, 4096))
    return json.dumps(envelope), 0


SEND_BATCH = """async (batch) => {
  const host = window.voicebox.host;
  const timeout = (ms) => new Promise((resolve) => setTimeout(() => resolve({ hung: true }), ms));
  return await Promise.all(batch.map(([text, size], i) => {
    const body = size ? crypto.getRandomValues(new Uint8Array(size)).buffer : null;
    const answered = host.callRaw(text, `fz${i}`, body).then(
      (a) => ({ ok: true, result: a.result }),
      (e) => ({ ok: false, code: e.code, status: e.status, message: e.message }));
    return Promise.race([answered, timeout(30000)]);
  }));
}"""


def _audit_head(host: HostPage) -> int:
    records = host.ok("audit.list", {"limit": 1})["result"]["records"]
    return records[0]["seq"] if records else 0


def _refusals_after(host: HostPage, head: int) -> list[dict]:
    """The refusal records after ``head`` (the page's own start-up calls — ``sandbox.connect``,
    admitted — may be audited meanwhile: since issue 18 the late modules load after ready)."""
    records = host.ok("audit.list", {"limit": 100})["result"]["records"]
    return [r for r in records if r["seq"] > head and r["decision"] == "refused"]


@settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(_message(), min_size=25, max_size=25))
def test_hostile_messages_of_every_type_get_one_refusal_each_and_the_host_answers_on(
    host: HostPage, batch: list[tuple[str, int]]
) -> None:
    """12 batches of 25 concurrent messages (300 in all) against one host page."""
    head = _audit_head(host)
    answers = host.page.evaluate(SEND_BATCH, [list(m) for m in batch])
    for (text, size), answer in zip(batch, answers, strict=True):
        where = (text[:160], size, answer)
        assert not answer.get("hung"), where
        assert answer["ok"] is False, where
        assert answer["code"] in STATUS, where
        assert answer["code"] != str(Code.INTERNAL_ERROR), where
        assert answer["status"] == STATUS[answer["code"]], where
    # the host answers the next call, audited every refusal, and its chain still verifies
    assert host.ok("host.info")["result"]
    assert len(_refusals_after(host, head)) == len(batch)
    assert host.ok("audit.verify")["result"]["ok"]
    assert host.page.get_attribute("#status", "data-state") == "ready"


# ------------------------------------------------------------------------ hostile names
# (name, the code its refusal carries — None when it is stored and shown as it is)

FILE_NAMES: list[tuple[str, str | None]] = [
    ("CON", "path-reserved"),
    ("nul", "path-reserved"),
    ("NUL.txt", "path-reserved"),
    ("COM1", "path-reserved"),
    ("lpt9.log", "path-reserved"),
    ("notes.", "path-invalid"),
    ("notes ", "path-invalid"),
    ("...", "path-invalid"),
    ("x" * (MAX_SEGMENT_BYTES + 1), "path-invalid"),
    ("é" * 128, "path-invalid"),
    ("report.txt\x00.png", "path-invalid"),
    ("line\nbreak", "path-invalid"),
    ("\u202egnp.exe", "path-invalid"),
    ("cafe\u0301.md", "composed"),  # issue 33 item 4: stored as its NFC spelling
    ("lone\ud800", "message-malformed"),  # not even valid JSON text: the envelope refuses it
    ("back\\slash", "path-invalid"),
    ("..", "path-outside-root"),
    (".voicebox", "path-reserved"),
    (".vbx-tmp-0001", "path-reserved"),
    ("x" * MAX_SEGMENT_BYTES, None),
    ("é" * 127, None),
    ("caf\u00e9.md", None),
    ("<img src=x onerror=alert(1)>", "path-invalid"),  # rule 9: < > new
    ('note:b*c?d"e|f', "path-invalid"),  # issue 34: Windows refuses them
    ("  two  spaces inside and before", None),
    ("CONSOLE.log", None),
    ("👩\u200d💻 notes", None),
    ("עברית.txt", None),
]

PROJECT_NAMES: list[tuple[str, str | None]] = [
    ("CON", None),
    ("trailing dot.", None),
    ("  padded  ", "name-invalid"),  # issue 34: no outer space
    ("<script>alert(1)</script>", "name-invalid"),  # its "/"
    ("<script>alert(1)<\\script>", "name-invalid"),
    ("<img src=x onerror=alert(1)>", None),
    ("caf\u00e9", None),
    ("p" * 200, None),
    ("p" * 201, "name-invalid"),
    ("cafe\u0301", "name-invalid"),
    ("\u202eevil", "name-invalid"),
    ("nul\x00inside", "name-invalid"),
    ("lone\udc00", "message-malformed"),
    ("   ", "name-invalid"),
]

# Names cross into the page as JSON text with \\u escapes, so a lone surrogate survives.
CALL_NAMED = """async ([op, argsJson, body]) => {
  const args = JSON.parse(argsJson);
  try {
    const a = await window.voicebox.host.call(op, args, { body: body === null ? null : new TextEncoder().encode(body).buffer });
    return { ok: true, result: a.result };
  } catch (e) { return { ok: false, code: e.code, message: e.message }; }
}"""


READ_NAMED = """async (argsJson) => {
  const answer = await window.voicebox.host.call("file.read", JSON.parse(argsJson));
  return new TextDecoder().decode(answer.body);
}"""


def _call(host: HostPage, op: str, args: dict[str, Any], body: str | None = None) -> dict:
    return host.page.evaluate(CALL_NAMED, [op, json.dumps(args), body])


@pytest.mark.parametrize("where", ["top", "nested"])
def test_hostile_file_names_are_refused_by_name_or_stored_and_shown_as_they_are(
    host: HostPage, where: str
) -> None:
    project = host.ok("project.create", {"name": "hostile names"})["result"]["project"]["id"]
    folder = "" if where == "top" else "inner/"
    if folder:
        host.ok("file.mkdir", {"project": project, "path": "inner"})
    bodies: dict[str, str] = {}  # a stored name -> what was last written (the name as sent)
    for name, code in FILE_NAMES:
        if folder and name == ".voicebox":
            code = None  # only the project's own top-level .voicebox/ is reserved
        answer = _call(host, "file.write", {"project": project, "path": folder + name}, name)
        if code is None:
            assert answer["ok"], (name, answer)
            bodies[name] = name
        elif code == "composed":
            composed = unicodedata.normalize("NFC", name)
            assert answer["ok"] and answer["result"]["path"] == folder + composed, (name, answer)
            bodies[composed] = name  # the same file as its NFC spelling: the last write wins
        else:
            assert (answer["ok"], answer.get("code")) == (False, code), (name, answer)
    kept = list(bodies)
    listed = host.ok("file.list", {"project": project, "folder": folder.rstrip("/")})
    names = [e["name"] for e in listed["result"]["entries"]]
    assert sorted(names) == sorted(kept)  # exactly the accepted names, code point for code point
    for name in kept:
        read = host.page.evaluate(
            READ_NAMED, json.dumps({"project": project, "path": folder + name})
        )
        assert read == bodies[name]

    # the page shows each name as exactly its characters
    page = host.page
    page.click("nav >> text=Projects")
    page.click("button.project-open:text-is('hostile names')")
    page.wait_for_selector("#file-tree")
    if folder:
        page.click("#file-tree .tree-dir[data-path='inner'] > .tree-row")
    page.wait_for_function(
        "(n) => document.querySelectorAll('#file-tree .file-entry').length === n",
        arg=len(kept),
    )
    shown = page.eval_on_selector_all(
        "#file-tree .file-entry", "(nodes) => nodes.map((n) => n.textContent)"
    )
    assert sorted(shown) == sorted(kept)
    assert page.locator("img[src='x']").count() == 0
    host.assert_clean()


def test_hostile_project_names_are_refused_by_name_or_stored_and_shown_as_they_are(
    host: HostPage,
) -> None:
    kept = []
    for name, code in PROJECT_NAMES:
        answer = _call(host, "project.create", {"name": name})
        if code is None:
            assert answer["ok"], (name, answer)
            assert answer["result"]["project"]["name"] == name
            kept.append(name)
        else:
            assert (answer["ok"], answer.get("code")) == (False, code), (name, answer)
    listed = [p["name"] for p in host.ok("project.list")["result"]["projects"]]
    assert sorted(listed) == sorted(kept)
    page = host.page
    page.click("nav >> text=Projects")
    page.wait_for_function(
        "(n) => document.querySelectorAll('button.project-open').length === n", arg=len(kept)
    )
    shown = page.eval_on_selector_all(
        "button.project-open", "(nodes) => nodes.map((n) => n.textContent)"
    )
    assert sorted(shown) == sorted(kept)
    assert page.evaluate("() => document.querySelectorAll('script:not([src])').length") == 0
    host.assert_clean()


def test_a_missing_file_or_folder_is_refused_in_our_words_not_the_browsers(
    host: HostPage,
) -> None:
    """What is not there is ``file-not-found`` with a sentence a person reads — the place and
    the code's meaning — never the browser's ``NotFoundError: A requested file or directory
    could not be found at the time an operation was processed.`` (found by trying, stop 45:
    every missing file, a look-alike ``‥`` folder, a bookmark of a deleted file). The page
    shows the same sentence when a link names a file that is gone."""
    project = host.ok("project.create", {"name": "gone"})["result"]["project"]["id"]
    host.ok("file.write", {"project": project, "path": "here.txt"}, b"x")
    meaning = REFUSALS[Code.FILE_NOT_FOUND].meaning
    for path, said in (
        ("missing.txt", f"No file 'missing.txt': {meaning}"),
        ("old/notes.txt", f"No folder 'old': {meaning}"),
        ("\u2025/x", f"No folder '\u2025': {meaning}"),
    ):
        refusal = host.refused("file.read", {"project": project, "path": path})
        assert (refusal["code"], refusal["message"]) == ("file-not-found", said), refusal
    host.open(f"{BASE_URL}#/files?project={project}&file=old%2Fnotes.txt")
    shown = host.page.locator("#alerts .alert-error", has_text="old/notes.txt")
    shown.wait_for()
    text = shown.text_content() or ""
    assert f"No folder 'old': {meaning}" in text and "NotFoundError" not in text, text
    host.assert_clean()
