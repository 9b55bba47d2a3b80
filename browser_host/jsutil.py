"""Small helpers at the JavaScript edge: option objects and DOMException → refusal codes."""

from __future__ import annotations

from typing import Any

from js import Object
from pyodide.ffi import JsException, to_js

from core.refusals import Code, Refused

__all__ = ["js_options", "refusal_from_js"]

_BY_NAME = {
    "NotFoundError": Code.FILE_NOT_FOUND,
    "QuotaExceededError": Code.STORAGE_QUOTA_EXCEEDED,
    "InvalidModificationError": Code.DIRECTORY_NOT_EMPTY,
    "NotAllowedError": Code.PERMISSION_REQUIRED,
    "SecurityError": Code.PERMISSION_REQUIRED,
    "NoModificationAllowedError": Code.STORAGE_FAILED,
    "TypeError": Code.PATH_INVALID,
}


def js_options(**kwargs: Any) -> Any:
    """A plain JS object from keyword arguments (for ``{create: true}`` and the like)."""
    return to_js(kwargs, dict_converter=Object.fromEntries)


def refusal_from_js(exc: JsException, what: str, **overrides: Code) -> Refused:
    """Map a DOMException from a storage call to a :class:`Refused`.

    ``overrides`` maps DOMException names to codes for this call site (e.g.
    ``TypeMismatchError=Code.IS_A_DIRECTORY``). Unknown names become ``storage-failed``; the
    browser's message is kept short and never holds a secret (it names our own paths only).
    """
    name = str(getattr(exc, "name", "") or "")
    code = overrides.get(name) or _BY_NAME.get(name) or Code.STORAGE_FAILED
    detail = str(getattr(exc, "message", "") or "")[:200]
    return Refused(code, f"{what}: {name or 'error'}{': ' + detail if detail else ''}")
