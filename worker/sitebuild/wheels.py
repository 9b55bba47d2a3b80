"""The worker's pinned wheels: read the lock, fetch each wheel from PyPI by name and version,
check its sha256, and check that the pinned versions satisfy each other's requirements.

Sources (``source`` in ``worker/wheels.lock.json``):

- ``pypi-wheel``: ``pip download`` of exactly that wheel for the Pyodide target (platform tag
  ``pyemscripten_<abi>_wasm32``, Python 3.14 — always 3.14, or pip silently picks old
  releases; PLATFORM.md).
- ``pypi-sdist-pure``: the sdist is downloaded and checked, then built into a pure
  ``py3-none-any`` wheel with the C compiler disabled (markupsafe falls back to pure Python)
  and ``SOURCE_DATE_EPOCH`` fixed, with the build backend pinned by ``build_constraints`` so the
  wheel's bytes — and therefore its pinned sha256 — are reproducible.

Any mismatch stops the build with a message naming the file, the expected and the actual hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Literal

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BuildError", "LockedWheel", "WheelLock", "check_requirements", "fetch_all", "sha256_of"]

SOURCE_DATE_EPOCH = "315532800"  # 1980-01-01, the earliest time a zip can hold


class BuildError(RuntimeError):
    """The site cannot be built; the message names the file and the cause."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Target(_Strict):
    """The Pyodide runtime the wheels are for."""

    pyodide: str
    python_version: str
    implementation: str
    abi: str
    platform: str


class LockedWheel(_Strict):
    """One pinned wheel."""

    name: str
    version: str
    source: Literal["pypi-wheel", "pypi-sdist-pure"]
    file: str
    sha256: str = Field(pattern="^[0-9a-f]{64}$")
    imports: list[str]
    sdist: str | None = None
    sdist_sha256: str | None = Field(default=None, pattern="^[0-9a-f]{64}$")
    build_constraints: list[str] = []
    offline_set: bool = False
    """A runtime wheel of the offline set (issue 32): loaded when a project's requirements name
    it (``core/tools/python_requirements.py``), not at boot; listed in
    ``runtime/wheels/offline-set.json``."""


class WheelLock(_Strict):
    """``worker/wheels.lock.json``. ``wheels``: what the host worker installs.
    ``runtime_wheels``: what only the person's Python runtime gets (issue 32: ``micropip``),
    shipped under ``runtime/wheels/`` and never in the host's ``pyodide-lock.json``."""

    schema_: Literal["voicebox-wheel-lock-v1"] = Field(alias="schema")
    comment: str = ""
    target: Target
    runtime_wheels: list[LockedWheel] = []
    wheels: list[LockedWheel]

    @classmethod
    def read(cls, path: Path) -> WheelLock:
        """Parse the lock file at ``path``."""
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _pip(*args: str, env: dict[str, str] | None = None) -> None:
    cmd = [sys.executable, "-m", "pip", *args, "--no-deps", "--disable-pip-version-check", "-q"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BuildError(f"pip {args[0]} failed:\n{done.stdout}\n{done.stderr}")


def _check(path: Path, expected: str) -> None:
    actual = sha256_of(path)
    if actual != expected:
        raise BuildError(
            f"{path.name}: sha256 {actual} does not match the pinned {expected}. "
            "Refusing to ship it (worker/wheels.lock.json)."
        )


def _download_wheel(w: LockedWheel, target: Target, cache: Path) -> Path:
    dest = cache / w.file
    if not dest.exists():
        with tempfile.TemporaryDirectory() as tmp:
            args = [
                "download",
                "--only-binary=:all:",
                "--python-version",
                target.python_version,
                "--implementation",
                target.implementation,
                "-d",
                tmp,
            ]
            if "wasm32" in w.file:
                args += ["--platform", target.platform, "--abi", target.abi]
            _pip(*args, f"{w.name}=={w.version}")
            got = Path(tmp) / w.file
            if not got.exists():
                raise BuildError(f"{w.file}: pip did not produce this file (got {os.listdir(tmp)})")
            shutil.move(got, dest)
    _check(dest, w.sha256)
    return dest


def _build_pure(w: LockedWheel, cache: Path) -> Path:
    dest = cache / w.file
    if dest.exists():
        _check(dest, w.sha256)
        return dest
    if not w.sdist or not w.sdist_sha256:
        raise BuildError(f"{w.file}: a pypi-sdist-pure entry needs sdist and sdist_sha256")
    sdist = cache / w.sdist
    if not sdist.exists():
        with tempfile.TemporaryDirectory() as tmp:
            _pip("download", "--no-binary=:all:", "-d", tmp, f"{w.name}=={w.version}")
            shutil.move(Path(tmp) / w.sdist, sdist)
    _check(sdist, w.sdist_sha256)
    with tempfile.TemporaryDirectory() as tmp:
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("\n".join(w.build_constraints) + "\n", encoding="utf-8")
        env = dict(
            os.environ,
            CC="/bin/false",
            SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH,
            PIP_CONSTRAINT=str(constraints),
        )
        _pip("wheel", "--no-cache-dir", "-w", tmp, str(sdist), env=env)
        built = Path(tmp) / w.file
        if not built.exists():
            raise BuildError(f"{w.file}: building {w.sdist} did not give a pure wheel")
        with zipfile.ZipFile(built) as zf:
            native = [n for n in zf.namelist() if n.endswith((".so", ".pyd"))]
        if native:
            raise BuildError(f"{w.file}: holds native code {native}; expected pure Python")
        shutil.move(built, dest)
    _check(dest, w.sha256)
    return dest


def fetch_all(lock: WheelLock, cache: Path, *, runtime: bool = False) -> dict[str, Path]:
    """Fetch (or reuse from ``cache``) and check every locked wheel of the host (or, with
    ``runtime``, of the person's Python runtime: ``runtime_wheels``); name → path."""
    cache.mkdir(parents=True, exist_ok=True)
    out = {}
    for w in lock.runtime_wheels if runtime else lock.wheels:
        fetch = _download_wheel if w.source == "pypi-wheel" else None
        out[w.name] = fetch(w, lock.target, cache) if fetch else _build_pure(w, cache)
    return out


def wheel_metadata(path: Path) -> tuple[str, str, list[str]]:
    """(name, version, Requires-Dist lines) read from a wheel's METADATA."""
    with zipfile.ZipFile(path) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        msg = Parser().parsestr(zf.read(meta_name).decode("utf-8"))
    return msg["Name"], msg["Version"], msg.get_all("Requires-Dist") or []


def check_requirements(wheels: dict[str, Path], python_version: str) -> dict[str, list[str]]:
    """Check every wheel's requirements are met by the other pinned wheels.

    Markers are evaluated for the Pyodide target (Emscripten, ``python_version``), extras are
    ignored. Returns ``{canonical name: [canonical names it depends on]}`` (the lock file's
    ``depends``). Raises :class:`BuildError` naming the unmet requirement.
    """
    versions = {}
    reqs = {}
    for path in wheels.values():
        name, version, requires = wheel_metadata(path)
        versions[canonicalize_name(name)] = version
        reqs[canonicalize_name(name)] = requires
    env = {
        "python_version": python_version,
        "python_full_version": python_version + ".0",
        "sys_platform": "emscripten",
        "platform_system": "Emscripten",
        "implementation_name": "cpython",
        "platform_machine": "wasm32",
        "extra": "",
    }
    depends: dict[str, list[str]] = {}
    for name, lines in reqs.items():
        depends[name] = []
        for line in lines:
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            dep = canonicalize_name(req.name)
            if dep not in versions:
                raise BuildError(f"{name} requires {line!r}, which is not in the lock")
            if not req.specifier.contains(versions[dep], prereleases=True):
                raise BuildError(
                    f"{name} requires {line!r}, but the lock pins {dep} {versions[dep]}"
                )
            depends[name].append(dep)
    return depends


def load_lock(root: Path) -> WheelLock:
    """The repository's wheel lock."""
    return WheelLock.read(root / "worker" / "wheels.lock.json")


if __name__ == "__main__":  # pragma: no cover - debugging aid
    print(json.dumps(load_lock(Path.cwd()).model_dump(by_alias=True), indent=1))
