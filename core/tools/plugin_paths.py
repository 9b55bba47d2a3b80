"""Which arguments of a plugin operation take a project path, and which one "Run with…" fills
with the file a person is on (issue 33 item 5; docs/plugins.md "Run with… a file").

The rule is read from the manifest, never guessed from an argument's name or description: an
argument takes a path exactly when the operation's ``reads`` or ``writes`` names it
(:class:`core.tools.plugin_manifest.PluginOperation` already requires each such argument to be a
required ``string`` of its schema). An operation **runs on a file** when it reads at least one
path: its first declared read is the argument the file fills; every other path argument (a
second read, the write target) is chosen by the person with the project's file picker.

The answer reaches the page in ``plugin.list`` (:class:`core.host.plugin_ops.OperationInfo`
``pathArgs`` / ``fileArg``), so the page asks and never restates the rule.
"""

from __future__ import annotations

from core.tools.plugin_manifest import PluginOperation

__all__ = ["file_arg", "path_args"]


def path_args(op: PluginOperation) -> tuple[str, ...]:
    """The names of ``op``'s arguments that take a project path: its reads in the manifest's
    order, then its write target; each name once. Empty when ``op`` touches no file."""
    names: list[str] = []
    for cap in (*op.reads, *op.writes):
        if cap.arg not in names:
            names.append(cap.arg)
    return tuple(names)


def file_arg(op: PluginOperation) -> str | None:
    """The argument "Run with…" fills with the file a person is on: ``op``'s first declared
    read, or ``None`` when it reads no file (then it is not offered on a file)."""
    return op.reads[0].arg if op.reads else None
