"""Project archives (SPEC §10; docs/archives.md): the manifest, the streamed deterministic
export, the import plan that checks every entry, and applying it all or nothing.
"""
