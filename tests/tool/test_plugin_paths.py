"""Which plugin arguments take a path (issue 33 item 5; docs/plugins.md "Run with… a file"):
the manifest's ``reads`` and ``writes`` decide, never an argument's name; the first read is the
argument "Run with…" fills with the file a person is on; ``plugin.list`` carries both, so the
page asks core instead of restating the rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.tools.plugin_manifest import parse_manifest
from core.tools.plugin_paths import file_arg, path_args
from tests.tool.test_plugin_host import World, package

ROOT = Path(__file__).resolve().parents[2]


def _operation(**changes: Any) -> dict[str, Any]:
    """tidy.text's operation from the committed manifest, with ``changes`` applied."""
    manifest = json.loads((ROOT / "wasm_tools/plugins/tidy/voicebox-plugin.json").read_bytes())
    return manifest["operations"][0] | changes


def _parsed(op: dict[str, Any]) -> Any:
    manifest = json.loads((ROOT / "wasm_tools/plugins/tidy/voicebox-plugin.json").read_bytes())
    manifest["operations"] = [op]
    return parse_manifest(json.dumps(manifest).encode()).operations[0]


def test_an_argument_takes_a_path_exactly_where_the_manifest_declares_a_read_or_write() -> None:
    tidy = _parsed(_operation())
    assert path_args(tidy) == ("path", "target")
    assert file_arg(tidy) == "path"
    # a string argument named like a path but declared neither read nor write is not a path:
    # the host never reads it, so no picker and no "Run with…" for it
    args = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "note": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    }
    undeclared = _parsed(
        _operation(
            name="tidy.echo", args=args, effect="read", receipt="internal-read", writes=[], reads=[]
        )
    )
    assert path_args(undeclared) == () and file_arg(undeclared) is None
    # a writer that reads nothing takes a path (its target) but does not run on a file
    writer = _parsed(
        _operation(
            args={
                "type": "object",
                "properties": {"target": {"type": "string"}},
                "required": ["target"],
                "additionalProperties": False,
            },
            reads=[],
        )
    )
    assert path_args(writer) == ("target",) and file_arg(writer) is None


def test_the_plugin_list_tells_the_page_which_arguments_take_a_path(plugins_dir: Path) -> None:
    world = World()
    for plugin in ("textstats", "tidy"):
        assert world.install(package(plugins_dir, plugin))["ok"]
    listed = {
        op["name"]: (op["pathArgs"], op["fileArg"])
        for p in world.h.ok("plugin.list")["plugins"]
        for op in p["operations"]
    }
    assert listed == {
        "textstats.count": (["path"], "path"),
        "textstats.outline": (["path"], "path"),
        "tidy.text": (["path", "target"], "path"),
    }
