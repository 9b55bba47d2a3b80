"""The environment server under CPython: core's ports on a real directory, SQLite and a
``0600`` key file, served over HTTP(S) and WebSocket by Starlette and uvicorn (SPEC §6;
issue 15). ``voicebox-env`` (:mod:`server_host.cli`) runs it.

It ships in the project's wheel (``pip install '.[server]'`` adds Starlette and uvicorn) but
the browser never imports it: the worker imports ``browser_host`` only, and a test keeps
``core`` and ``browser_host`` from importing this package.
"""
