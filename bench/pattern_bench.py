"""Text checks on hostile text: seconds per 10,000 characters, in Pyodide and in CPython
(issue 13 #4: the runner-seat URL pattern was quadratic, ≈ 1 s per 10,000 letters in Pyodide,
and a 1 MB ``blocks.candidate_edit`` held the host for ~100 s).

One snippet (:data:`SNIPPET`) runs in the host's Python — a lab worker of ``bench/tools.html``
booted exactly like the host — and here in CPython. It times, best of three:

- ``hazard_in`` (the runner-seat sanitizer) on 10,000- and 100,000-character texts shaped
  against it: a letter run, a letter run ending ``://``, a mixed-case blob, a hex run;
- ``absolute_path_in`` (the mission letter's path rule) on ``~`` + word runs;
- ``apply_candidate_edit`` on two runner batches: the one of issue 13 (104 ops, each purpose
  10,000 letters: refused by the length cap before anything reads it) and the largest batch
  the caps let through (200 ops, 200-letter names and 2,000-letter purposes: sanitized and
  applied whole).

Linear checks give the same seconds per 10,000 characters at both lengths; a quadratic one
ten times more at the longer. Run alone: ``python -m bench.pattern_bench`` (CPython only).
"""

from __future__ import annotations

import ast
import json
from typing import Any

from playwright.sync_api import Playwright

from bench.browser import Profile
from bench.site import BenchSite

__all__ = ["SNIPPET", "measure", "run_here"]

SNIPPET = """
import json, time
from core.missions.blocks import AddBlock, apply_candidate_edit
from core.missions.letters import absolute_path_in
from core.refusals import Refused
from core.missions.sanitizer import hazard_in

def best(fn, repeat=3):
    out = 1e9
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - start)
    return out

def per_10k(fn, text):
    return round(best(lambda: fn(text)) / len(text) * 10_000, 6)

shapes = {
    "letters": lambda n: "q" * n,
    "letters then ://": lambda n: "q" * (n - 3) + "://",
    "mixed blob": lambda n: ("aB3" * n)[:n],
    "hex run": lambda n: "7" * n,
}
sanitizer = {
    name: {str(n): per_10k(hazard_in, make(n)) for n in (10_000, 100_000)}
    for name, make in shapes.items()
}
home = " ~" + "w" * 300
letters = {str(n): per_10k(absolute_path_in, home * (n // len(home))) for n in (10_000, 100_000)}

def batch(ops):
    def run():
        try:
            apply_candidate_edit(None, ops, seat="runner",
                                 new_block_id=iter(f"sb_{i}" for i in range(10**6)).__next__,
                                 new_skeleton_id=lambda: "sk_bench")
            return "applied"
        except Refused as exc:
            return str(exc.code)
    return run

issue = [AddBlock(op="add", name="n", purpose="q" * 10_000) for _ in range(104)]
capped = [AddBlock(op="add", name="q" * 200, purpose="q" * 2000) for _ in range(200)]
batches = {}
for name, ops in (("issue 13 batch (104 x 10,000-letter purposes)", issue),
                  ("largest batch within the caps (200 x (200 + 2,000) letters)", capped)):
    outcome = batch(ops)()
    batches[name] = {"outcome": outcome, "seconds": round(best(batch(ops)), 4)}
json.dumps({"sanitizer_s_per_10k": sanitizer, "letter_path_rule_s_per_10k": letters,
            "candidate_edit": batches})
"""


def run_here(code: str = SNIPPET) -> Any:
    """Run ``code`` in this Python and return its last expression (as the lab worker does)."""
    tree = ast.parse(code)
    last = tree.body.pop()
    assert isinstance(last, ast.Expr)
    scope: dict[str, Any] = {}
    exec(compile(tree, "<pattern_bench>", "exec"), scope)
    return eval(compile(ast.Expression(last.value), "<pattern_bench>", "eval"), scope)


def measure(playwright: Playwright, site: BenchSite) -> dict[str, Any]:
    """The figures of :data:`SNIPPET` in Pyodide (a lab worker) and in CPython here."""
    with Profile(playwright) as profile:
        profile.open_tools(site.url)
        inside = json.loads(profile.evaluate("(code) => window.benchLab(code)", SNIPPET))
    return {"pyodide": inside, "cpython": json.loads(run_here())}


if __name__ == "__main__":
    print(json.dumps({"cpython": json.loads(run_here())}, indent=1))
