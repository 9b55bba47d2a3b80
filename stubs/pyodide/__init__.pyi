# Pyodide's top-level module as browser_host/ reads it (stubs/README.md).
__version__: str
