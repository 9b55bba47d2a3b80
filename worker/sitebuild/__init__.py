"""Build the static site (``dist/``) from the page, the worker, the pinned Pyodide runtime and
the pinned wheels. Run as ``python -m worker.sitebuild`` from the repository root (``nox -s
build`` does)."""
