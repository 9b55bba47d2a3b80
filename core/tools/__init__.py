"""Tools and plugins (seed 003): the operation registry, admission, the capability broker,
receipts and their rungs, the built-in tools, the port tools run through, the create-asset
output check.

``import core.tools`` is enough to list the built-in tools (:data:`BUILTIN_TOOLS`).
"""

from core.tools.builtin import BUILTIN_TOOLS, DESCRIBE, BuiltinTool

__all__ = ["BUILTIN_TOOLS", "DESCRIBE", "BuiltinTool"]
