"""Voicebox shared core: the contracts of custody, admission, receipts, letters and audit.

Pure Python: runs on CPython >= 3.11 and in Pyodide. It never imports ``js``, ``pyodide`` or
``browser_host``; every capability it needs from a runtime is a port (:mod:`core.ports`).
"""

__version__ = "0.1.0"
