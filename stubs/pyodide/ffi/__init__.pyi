# The part of pyodide.ffi browser_host/ uses (stubs/README.md).
from collections.abc import Callable
from typing import Any

class JsProxy:
    """A JavaScript value: any attribute, any call, awaitable; checked where it enters Python."""

    def __getattr__(self, name: str) -> Any: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def to_py(self, *, depth: int = ..., default_converter: Any = ...) -> Any: ...
    def to_bytes(self) -> bytes: ...
    def destroy(self) -> None: ...

class JsException(Exception):
    name: str
    message: str

def to_js(
    obj: object,
    /,
    *,
    depth: int = ...,
    pyproxies: object = ...,
    create_pyproxies: bool = ...,
    dict_converter: Callable[..., Any] | None = ...,
    default_converter: Callable[..., Any] | None = ...,
) -> Any: ...
def create_proxy(obj: object, /, *, capture_this: bool = ..., roundtrip: bool = ...) -> Any: ...
