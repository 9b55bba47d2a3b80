"""Projects (SPEC §3): the project manifest, the catalog of both kinds, the letter-case guard of
picked folders and the registry of atomic-write temporaries.
"""
