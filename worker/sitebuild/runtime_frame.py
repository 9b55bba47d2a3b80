"""The Python runtime's frame page (issue 32; docs/python.md): ``dist/runtime/python.html``.

``runtime/python.template.html`` with ``runtime/python-frame.js`` inlined and that script's
sha256 in the page's ``script-src``, so nothing else — not even a file of this site — can run
in the frame (the create-asset sandbox is built the same way, ``wasm_tools/build.py``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from worker.sitebuild.wheels import BuildError

__all__ = ["build_runtime_frame", "frame_script"]


def frame_script(root: Path) -> str:
    """The frame's one script, exactly as inlined."""
    return (root / "runtime" / "python-frame.js").read_text(encoding="utf-8")


def build_runtime_frame(root: Path, dest: Path) -> Path:
    """Write ``dest/python.html``; raises :class:`BuildError` if the script could end its own
    ``<script>`` element early or the template lost a placeholder."""
    script = frame_script(root)
    if re.search(r"</script|<!--", script, re.I):
        raise BuildError("runtime/python-frame.js must not contain '</script' or '<!--'")
    template = (root / "runtime" / "python.template.html").read_text(encoding="utf-8")
    if template.count("@SCRIPT_HASH@") != 1 or template.count("<script>@SCRIPT@</script>") != 1:
        raise BuildError("runtime/python.template.html lost a placeholder")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    out = dest / "python.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    html = template.replace("@SCRIPT_HASH@", digest).replace("@SCRIPT@", script)
    out.write_text(html, encoding="utf-8", newline="\n")
    return out
