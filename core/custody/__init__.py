"""Custody and pairing (seed 002): environments, bearers, host tokens, pairing, the hello
gate, execute authorisation, routing and calls to peers, the wire frames, the peer's server.
"""
