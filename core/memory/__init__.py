"""In-memory adapters (STYLE §1): real implementations of every port and in-process environment
servers, for the tests and any placement without a browser. Adapters may use the host.
"""
