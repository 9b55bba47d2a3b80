# The browser's global scope as Pyodide exposes it (stubs/README.md): the names
# browser_host/ imports by name, and any other global through __getattr__.
from typing import Any

from pyodide.ffi import JsProxy

Object: Any
Uint8Array: Any
MessageChannel: Any
Worker: Any
Array: Any
URL: Any
location: JsProxy
navigator: JsProxy

def fetch(resource: object, options: object = ..., /) -> Any: ...
def __getattr__(name: str) -> Any: ...
