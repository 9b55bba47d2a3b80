"""Operation entries the registry, admission and broker tests register."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import Field

from core.model import Contract
from core.tools.registry import OperationEntry


class EchoArgs(Contract):
    """Arguments of the test operations: one short text."""

    text: str = Field(max_length=100)


def builtin(name: str = "echo", **changes: Any) -> OperationEntry:
    """A built-in read operation (override any field with ``changes``)."""
    fields: dict[str, Any] = {
        "name": name,
        "origin": "builtin",
        "summary": "Echo the text.",
        "args_model": EchoArgs,
        "effect": "read",
        "receipt_rule": "internal-read",
    }
    return OperationEntry(**{**fields, **changes})


def package_sha(plugin_id: str = "notes", release: str = "1.0.0") -> str:
    """The manifest sha256 :func:`plugin` gives a test package of ``plugin_id`` at
    ``release`` (a stand-in for the bytes of its manifest)."""
    return hashlib.sha256(f"{plugin_id}@{release}".encode()).hexdigest()


def plugin(name: str = "notes.save", plugin_id: str = "notes", **changes: Any) -> OperationEntry:
    """A plugin write operation at release ``1.0.0`` with the files capability; its manifest
    sha256 is :func:`package_sha` of its id and release unless ``changes`` names one."""
    fields: dict[str, Any] = {
        "name": name,
        "origin": f"plugin:{plugin_id}",
        "summary": "Save a note.",
        "args_model": EchoArgs,
        "effect": "write",
        "receipt_rule": "local-write",
        "capabilities": frozenset({"files"}),
        "release": "1.0.0",
    }
    release = changes.get("release", "1.0.0")
    fields["manifest_sha256"] = package_sha(plugin_id, release)
    return OperationEntry(**{**fields, **changes})
