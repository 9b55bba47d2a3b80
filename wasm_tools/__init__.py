"""The create-asset tool: C source, its reproducible build and its sandbox (SPEC §8).

Not part of the wheel; ``build.py`` is importable so the test suite can build the modules.
"""
