"""docs/remote.md is an operator's guide (issue 29 item 16): every ``voicebox-env`` command
line it gives — in its code blocks (shell, the systemd unit's ``ExecStart``) and inline — is
one the real CLI accepts, so a copied command never ends in ``unrecognized arguments``; and it
carries the pieces the issue names: a systemd unit, a reverse proxy with the WebSocket upgrade
and the health check, a dedicated user."""

from __future__ import annotations

import re
import shlex

import pytest

from server_host.cli import _parser
from tests.server.harness import ROOT

DOC = (ROOT / "docs" / "remote.md").read_text(encoding="utf-8")
_BLOCK = re.compile(r"^```[a-z]*\n(.*?)^```", re.M | re.S)
_COMMAND = re.compile(r"(?:^|[\s'/])voicebox-env ([^'\n#|&]+)")
SUBCOMMANDS = {"serve", "init", "pair-code", "revoke", "policy", "runner", "audit"}


def _commands() -> list[str]:
    """Each ``voicebox-env …`` command of the doc's code blocks (shell and the systemd unit),
    its continuation lines joined."""
    found = []
    for block in _BLOCK.findall(DOC):
        for match in _COMMAND.finditer(block.replace("\\\n", " ")):
            args = match.group(1).strip()
            if args.split()[0] in SUBCOMMANDS:
                found.append(args)
    return found


def test_the_operator_guide_gives_the_systemd_unit_the_proxy_and_the_dedicated_user() -> None:
    assert "[Service]" in DOC and "ExecStart=" in DOC and "UMask=0077" in DOC
    assert "proxy_set_header Upgrade" in DOC  # nginx: the WebSocket upgrade
    assert "/api/health" in DOC
    assert "useradd" in DOC or "adduser" in DOC


def test_the_operator_guide_gives_commands_to_check() -> None:
    assert len(_commands()) >= 5, _commands()


@pytest.mark.parametrize("command", _commands())
def test_every_command_the_operator_guide_gives_is_one_the_cli_accepts(command: str) -> None:
    words = shlex.split(command)
    try:
        _parser().parse_args(words)
    except SystemExit as ended:  # argparse's way to refuse
        pytest.fail(f"voicebox-env {command!r} is refused by the CLI (exit {ended.code})")
