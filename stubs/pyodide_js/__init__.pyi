# The Pyodide JavaScript API object as browser_host/diagnostics.py reads it (stubs/README.md).
from typing import Any

def __getattr__(name: str) -> Any: ...
