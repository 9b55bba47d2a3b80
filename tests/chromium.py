"""How every test, journey and benchmark launches the browser: Debian's Chromium, headless,
with nothing that would reach the network on its own (PLATFORM.md; never ``playwright
install``). ``VOICEBOX_CHROMIUM`` names another executable."""

from __future__ import annotations

import os

__all__ = ["CHROMIUM", "CHROMIUM_ARGS"]

CHROMIUM = os.environ.get("VOICEBOX_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
