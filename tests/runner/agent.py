"""A scripted, deterministic agent for the runner's tests (issue 30, "Agents to test with").

``python3 agent.py MODE PACKET_FILE [ARG]`` — run in the mission's worktree as its cwd:

- ``ok``: read the packet, write ``AGENT.md`` naming the mission id it found there and the
  packet's line count, and append a line to ``README.md`` (a real change for the gate and
  the review); exit 0;
- ``slow``: print a line, wait ``ARG`` seconds (default 1), then do what ``ok`` does (the
  browser e2e watches the card pass ``executing``);
- ``ticks``: print ``ARG`` lines (default 20) ``tick <n> <epoch ms>``, 0.2 s apart, each
  flushed as it is printed (the bench measures a printed line → shown in the page), then do
  what ``ok`` does;
- ``fail``: print a line and exit 3;
- ``hang``: print ``hanging`` and sleep for an hour;
- ``flood``: print ``ARG`` bytes (default 3 MiB) of text, then exit 0;
- ``ignore-term``: start a child that ignores SIGINT and SIGTERM (its argv carries ``ARG``,
  a token the test looks for among the machine's processes), write ``child-started``, then
  sleep for an hour;
- ``read``: try to read the file ``ARG`` and list the folder ``ARG`` names; print
  ``READ-OK`` or ``READ-DENIED <errno name>`` (the sandbox tests read HOST_DIR and another
  worktree this way); exit 0;
- ``env``: print ``ENV`` and the names of its environment variables;
- ``keys``: the value of the variable ``ARG`` (issue 31's canary): print it raw, in base64
  (standard and URL-safe, at each of the three alignments), hex (both cases), percent-encoded
  (``quote`` and every byte), JSON-escaped (``\\u00xx`` each character), and split across
  two writes; write its sha256 to ``KEY.sha256`` and ``AGENT.md``; then, given a fourth
  argument, stay alive that many seconds; exit 0;
- ``keys-file``: as ``keys``, and also write the value into ``LEAK.txt`` of its worktree (the
  review's diff then carries it to the browser host, which must redact it);
- ``hostile-git``: point the worktree's ``.git`` at a repository of its own with hooks and an
  fsmonitor that would write the file ``ARG``, and write ``AGENT.md``.

It uses the standard library only and nothing of the repository, so it runs in any sandbox.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path


def main(argv: list[str]) -> int:
    mode, packet_file = argv[0], Path(argv[1])
    arg = argv[2] if len(argv) > 2 else ""
    packet = packet_file.read_text(encoding="utf-8")
    print(f"agent {mode}: packet of {len(packet)} characters", flush=True)
    if mode == "slow":
        print("agent: working on it", flush=True)
        time.sleep(float(arg or 1))
        mode = "ok"
    if mode == "ticks":
        for n in range(int(arg or 20)):
            print(f"tick {n} {time.time() * 1000:.0f}", flush=True)
            time.sleep(0.2)
        mode = "ok"
    if mode == "ok":
        found = re.search(r"msn_[0-9a-f]{12}", packet)
        mission = found.group(0) if found else "unknown"
        Path("AGENT.md").write_text(
            f"mission {mission}\npacket lines {len(packet.splitlines())}\n", encoding="utf-8"
        )
        with open("README.md", "a", encoding="utf-8") as out:
            out.write(f"\nTouched by the scripted agent for {mission}.\n")
        return 0
    if mode == "fail":
        print("agent: I could not do it", flush=True)
        return 3
    if mode == "hang":
        print("hanging", flush=True)
        time.sleep(3600)
        return 0
    if mode == "flood":
        size = int(arg or 3 << 20)
        line = b"x" * 1023 + b"\n"
        out = sys.stdout.buffer
        for _ in range(size // 1024):
            out.write(line)
        out.flush()
        return 0
    if mode == "ignore-term":
        code = (
            "import signal,time\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "time.sleep(3600)\n"
        )
        subprocess.Popen([sys.executable, "-c", code, arg], start_new_session=True, close_fds=True)
        Path("child-started").write_text("yes", encoding="utf-8")
        print("child started", flush=True)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
        return 0
    if mode == "read":
        try:
            if Path(arg).is_dir():
                names = os.listdir(arg)
                if not names:
                    raise OSError(errno.ENOENT, "empty")
            else:
                Path(arg).read_bytes()
        except OSError as exc:
            print(f"READ-DENIED {errno.errorcode.get(exc.errno or 0, 'ERR')}", flush=True)
            return 0
        print("READ-OK", flush=True)
        return 0
    if mode == "hostile-git":
        # point the worktree's .git file at a repository of the agent's making whose hooks and
        # fsmonitor would write ARG if the runner's own git ever trusted it
        evil = Path("evil").resolve()
        subprocess.run(["git", "init", "-q", str(evil)], check=True)
        script = f"#!/bin/sh\necho pwned > {arg}\n"
        for name in ("fsm.sh", ".git/hooks/post-commit", ".git/hooks/pre-commit"):
            (evil / name).write_text(script, encoding="utf-8")
            (evil / name).chmod(0o755)
        with open(evil / ".git" / "config", "a", encoding="utf-8") as out:
            out.write(f"[core]\n\tfsmonitor = {evil / 'fsm.sh'}\n")
        Path(".git").write_text(f"gitdir: {evil / '.git'}\n", encoding="utf-8")
        Path("AGENT.md").write_text("changed\n", encoding="utf-8")
        return 0
    if mode in ("keys", "keys-file"):
        value = os.environ.get(arg, "")
        raw = value.encode()
        forms = [value, raw.hex(), raw.hex().upper(), urllib.parse.quote(value, safe="")]
        forms.append("".join(f"%{b:02X}" for b in raw))
        forms.append("".join(f"\\u{ord(c):04x}" for c in value))
        for lead in (b"", b"a", b"ab"):
            forms.append(base64.b64encode(lead + raw + b"z").decode())
            forms.append(base64.urlsafe_b64encode(lead + raw).decode())
        out = sys.stdout
        for form in forms:
            out.write(f"leak {form} end\n")
        out.flush()
        half = len(value) // 2
        out.write("split " + value[:half])
        out.flush()
        time.sleep(0.3)  # the runner reads the two halves as two chunks
        out.write(value[half:] + " end\n")
        out.flush()
        digest = hashlib.sha256(raw).hexdigest()
        Path("KEY.sha256").write_text(digest, encoding="utf-8")
        if mode == "keys-file":  # the value in a file of its own: the review's diff shows it
            Path("LEAK.txt").write_text(f"the key: {value}\n", encoding="utf-8")
        Path("AGENT.md").write_text("keys\n", encoding="utf-8")
        if len(argv) > 3:  # stay alive a while: the e2e test reads every argv meanwhile
            time.sleep(float(argv[3]))
        return 0
    if mode == "env":
        print("ENV " + " ".join(sorted(os.environ)), flush=True)
        return 0
    print(f"unknown mode {mode}", flush=True)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
