"""Small helpers at the JavaScript edge: option objects, awaiting browser promises, and
DOMException → refusal codes (SPEC §3, §4: every storage failure is a named refusal)."""

from __future__ import annotations

from typing import Any

import js
from js import Object
from pyodide.ffi import JsException, to_js

from core.refusals import REFUSALS, Code, Refused

__all__ = ["JS_ERRORS", "BrowserError", "js_options", "refusal_from_js", "settle"]

_BY_NAME = {
    "NotFoundError": Code.FILE_NOT_FOUND,
    "QuotaExceededError": Code.STORAGE_QUOTA_EXCEEDED,
    "InvalidModificationError": Code.DIRECTORY_NOT_EMPTY,
    "NotAllowedError": Code.PERMISSION_REQUIRED,
    "SecurityError": Code.PERMISSION_REQUIRED,
    "NoModificationAllowedError": Code.STORAGE_FAILED,
    "TypeError": Code.PATH_INVALID,
}
_IN_OUR_WORDS = frozenset({"NotFoundError", "QuotaExceededError"})
"""The DOMException names whose meaning our refusal says fully (the browser's text adds only
jargon); see :func:`refusal_from_js`."""


class BrowserError(Exception):
    """A browser promise that rejected, as the rejection's ``name`` and ``message`` (text)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


JS_ERRORS = (JsException, BrowserError)
"""What a call into the browser raises: a synchronous throw, or a settled rejection."""


async def settle(promise: Any) -> Any:
    """Await a browser promise; return its value, or raise :class:`BrowserError`.

    Why not a plain ``await``: Pyodide 314 never resumes an ``await`` on a promise rejected
    with a value it does not take for an ``Error`` — a string, a plain object, or Chromium
    156's ``QuotaExceededError`` class, which is what a full disk gives (checked: the coroutine
    hangs forever, and the host's write lock with it). ``then(Array.of, String)`` turns both
    outcomes into plain values in JavaScript before Python sees them: ``[value]`` when the
    promise fulfils, the text ``"Name: message"`` when it rejects.
    """
    outcome = await promise.then(js.Array.of, js.String)
    if isinstance(outcome, str):
        name, sep, message = outcome.partition(": ")
        if not sep or not name.isidentifier():
            name, message = "Error", outcome
        raise BrowserError(name, message)
    return outcome[0]


def js_options(**kwargs: Any) -> Any:
    """A plain JS object from keyword arguments (for ``{create: true}`` and the like)."""
    return to_js(kwargs, dict_converter=Object.fromEntries)


def refusal_from_js(exc: JsException | BrowserError, what: str, **overrides: Code) -> Refused:
    """Map a DOMException from a storage call to a :class:`Refused`.

    ``overrides`` maps DOMException names to codes for this call site (e.g.
    ``TypeMismatchError=Code.IS_A_DIRECTORY``). ``QuotaExceededError`` is
    ``storage-quota-exceeded`` (507); unknown names become ``storage-failed`` (500). An
    overridden name, and a name of :data:`_IN_OUR_WORDS`, is told in the refusal's own words,
    not the browser's: a person reads "No file 'a.txt': There is no file or folder at that
    path.", not the browser's "NotFoundError: A requested file or directory could not be found
    at the time an operation was processed." (found by trying, stop 45). Any other name keeps
    the browser's name and message — for a storage failure they are the only clue — kept short;
    they never hold a secret (they name our own paths only).
    """
    name = str(getattr(exc, "name", "") or "")
    if name in overrides:  # this call site knows what the browser meant: say it in our words
        return Refused(overrides[name], f"{what}: {REFUSALS[overrides[name]].meaning}")
    if name in _IN_OUR_WORDS:
        return Refused(_BY_NAME[name], f"{what}: {REFUSALS[_BY_NAME[name]].meaning}")
    code = _BY_NAME.get(name) or Code.STORAGE_FAILED
    detail = str(getattr(exc, "message", "") or "")[:200]
    return Refused(code, f"{what}: {name or 'error'}{': ' + detail if detail else ''}")
