"""Contract tests of seeds 002 (custody, pairing) and 003 (tools, plugins, admission)."""
