"""Hypothesis profiles. ``nox -s tests`` (and so CI) runs the ``ci`` profile: the property
tests draw the same examples on every run, so a run fails because of the code, never because
of the draw. A plain ``pytest`` keeps the default, random draws, so local runs keep exploring;
a failure there prints the example to add as a regression test."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
