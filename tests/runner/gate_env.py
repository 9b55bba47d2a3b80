"""A gate for the key tests (issue 31): prints ``GATE-ENV`` and the names of its environment
variables, then passes when the agent wrote ``AGENT.md``. Standard library only."""

import os
import pathlib
import sys

print("GATE-ENV " + " ".join(sorted(os.environ)), flush=True)
sys.exit(0 if pathlib.Path("AGENT.md").exists() else 1)
