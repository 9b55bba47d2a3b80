"""Custody and pairing (seed 002): the rules that keep an environment's credentials with the
host that holds them. New custody rules live here; issue 14 moves the rest of seed 002's
modules beside them."""
