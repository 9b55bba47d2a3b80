"""The host for the E1 placement: Python running in the dedicated worker (SPEC §1).

Adapters from :mod:`core.ports` to the browser — OPFS and picked directories
(:mod:`browser_host.opfs`), IndexedDB (:mod:`browser_host.idb_audit`) — and the wiring
(:mod:`browser_host.main`) that the worker's JavaScript calls. It may import ``core``; ``core``
never imports it.
"""
