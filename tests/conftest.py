"""Hypothesis profiles. ``nox -s tests`` (and so CI) runs the ``ci`` profile: the property
tests draw the same examples on every run, so a run fails because of the code, never because
of the draw. A plain ``pytest`` keeps the default, random draws, so local runs keep exploring;
a failure there prints the example to add as a regression test.

Neither profile has a deadline: a property test asserts what the code does, never how fast it
does it (speed is measured by ``nox -s bench``), and a deadline fails runs on a loaded machine
— inside Pyodide a 20 ms example took 280 ms while CI shared its two cores."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("default", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
