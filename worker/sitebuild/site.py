"""Assemble ``dist/``: one self-contained folder of static files with relative URLs only.

Layout::

    dist/index.html, app files      ← page/ (its contract.gen.mjs written first, from core)
    dist/worker/*.mjs               ← worker/*.mjs
    dist/pyodide/                   ← the pinned npm ``pyodide`` runtime (no CDN, ever)
    dist/pyodide/*.whl              ← the locked wheels and our own wheel
    dist/pyodide/pyodide-lock.json  ← written here: our wheels with sha256 (browser SRI)
    dist/pyodide/site-bytecode.zip.gz  ← the wheels' modules compiled by the pinned CPython
    dist/pyodide/python-snapshot.bin.gz ← a started Python's memory, restored by every boot
    dist/tools/                     ← the create-asset module and its (plugin) sandbox
    dist/plugins/examples/*.zip     ← the example plugin packages, to download and install
    dist/plugins/examples/index.json ← what the empty Plugins surface offers (issue 33 item 5)
    dist/vendor/codemirror.mjs      ← the editor: pinned CodeMirror 6, bundled by esbuild
    dist/vendor/codemirror.LICENSES.txt ← the bundled packages' licences
    dist/vendor/hash-wasm.mjs       ← the byte path's sha256 and crc32: pinned hash-wasm, bundled
    dist/vendor/fflate.mjs          ← the boot's zip reader (the bytecode archive): pinned fflate
    dist/sw.js                      ← page/sw.js stamped with the build and its files
    dist/site-manifest.json         ← every file with size and sha256 (progress, precache)
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from packaging.utils import canonicalize_name
from pyodide_lock.spec import InfoSpec, PackageSpec, PyodideLockSpec

from worker.sitebuild.bundle import bundle_editor, bundle_hashes, bundle_unzip
from worker.sitebuild.bytecode import compile_bytecode
from worker.sitebuild.offline import SW_NAME, stamp_service_worker
from worker.sitebuild.runtime_frame import build_runtime_frame
from worker.sitebuild.snapshot import make_snapshot
from worker.sitebuild.wheels import (
    SOURCE_DATE_EPOCH,
    BuildError,
    WheelLock,
    check_requirements,
    fetch_all,
    load_lock,
    sha256_of,
    wheel_metadata,
)

__all__ = ["build_site", "check_plugin_package", "example_index", "write_offline_set"]

PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
OWN_IMPORTS = ["core", "browser_host"]


def _pinned_pyodide(root: Path) -> str:
    pkg = json.loads((root / "package.json").read_text(encoding="utf-8"))
    return pkg["dependencies"]["pyodide"]


def _check_runtime(root: Path, lock: WheelLock) -> Path:
    runtime = root / "node_modules" / "pyodide"
    pinned = _pinned_pyodide(root)
    if pinned != lock.target.pyodide:
        raise BuildError(
            f"package.json pins pyodide {pinned} but worker/wheels.lock.json targets "
            f"{lock.target.pyodide}"
        )
    if not (runtime / "package.json").exists():
        raise BuildError("node_modules/pyodide is missing: run `npm ci` first")
    installed = json.loads((runtime / "package.json").read_text(encoding="utf-8"))["version"]
    if installed != pinned:
        raise BuildError(f"node_modules has pyodide {installed}, package.json pins {pinned}")
    return runtime


def build_own_wheel(root: Path, out: Path) -> Path:
    """Build our pure wheel (``core`` + ``browser_host``) reproducibly; return its path."""
    env = dict(os.environ, SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "build",
                "--wheel",
                "--no-isolation",
                "--outdir",
                tmp,
                str(root),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise BuildError(f"building our wheel failed:\n{done.stdout}\n{done.stderr}")
        (wheel,) = Path(tmp).glob("*.whl")
        if not wheel.name.endswith("-py3-none-any.whl"):
            raise BuildError(f"{wheel.name}: our wheel must be pure (py3-none-any)")
        out.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy2(wheel, out / wheel.name))


def _write_pyodide_lock(
    runtime: Path, dest: Path, lock: WheelLock, wheels: dict[str, Path], own: Path
) -> list[str]:
    upstream = json.loads((runtime / "pyodide-lock.json").read_text(encoding="utf-8"))["info"]
    info = InfoSpec(
        arch=upstream.get("arch", "wasm32"),
        platform=upstream["platform"],
        version=lock.target.pyodide,
        python=upstream["python"],
        abi_version=upstream.get("abi_version"),
    )
    all_wheels = {**wheels, "voicebox-e1": own}
    depends = check_requirements(all_wheels, lock.target.python_version)
    imports = {w.name: w.imports for w in lock.wheels} | {"voicebox-e1": OWN_IMPORTS}
    packages = {}
    for name, path in sorted(all_wheels.items()):
        _, version, _ = wheel_metadata(path)
        packages[name] = PackageSpec(
            name=name,
            version=version,
            file_name=path.name,
            install_dir="site",
            sha256=sha256_of(path),
            package_type="package",
            imports=imports[name],
            depends=sorted(depends[name]),
        )
    spec = PyodideLockSpec(info=info, packages=packages)
    spec.check_wheel_filenames()
    spec.to_json(dest / "pyodide-lock.json", indent=1)
    return sorted(packages)


def _copy_tree(src: Path, dst: Path, patterns: tuple[str, ...]) -> None:
    for pattern in patterns:
        for f in sorted(src.glob(pattern)):
            if f.is_file():
                target = dst / f.relative_to(src)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, target)


def _copy_tools(root: Path, dest: Path) -> None:
    """The create-asset module (checked against its pin) and the sandbox page, both built by
    ``wasm_tools/build.py`` (``nox -s build`` runs it first)."""
    out = root / "wasm_tools" / "out"
    module, sandbox = out / "create_asset.wasm", out / "sandbox.html"
    if not module.exists() or not sandbox.exists():
        raise BuildError("wasm_tools/out/ is missing: run `python wasm_tools/build.py` first")
    pin = (root / "wasm_tools" / "create_asset.wasm.sha256").read_text().split()[0]
    if sha256_of(module) != pin:
        raise BuildError(
            f"wasm_tools/out/create_asset.wasm: sha256 {sha256_of(module)} is not the pinned {pin}"
        )
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(module, dest / module.name)
    shutil.copy2(sandbox, dest / sandbox.name)


PLUGIN_MANIFEST = "voicebox-plugin.json"


def check_plugin_package(root: Path, package: Path) -> None:
    """Check one example plugin package built by ``wasm_tools/build.py`` before it ships.

    Its manifest must be byte for byte the committed ``wasm_tools/plugins/<id>/`` manifest (the
    pins), it must hold exactly that manifest and the modules it lists, and each module's sha256
    must be its pin. Raises :class:`BuildError` naming the package and what differs.
    """
    try:
        with zipfile.ZipFile(package) as archive:
            shipped = archive.read(PLUGIN_MANIFEST)
            manifest = json.loads(shipped)
            source = root / "wasm_tools" / "plugins" / manifest["id"] / PLUGIN_MANIFEST
            if not source.is_file() or source.read_bytes() != shipped:
                raise BuildError(f"{package.name}: its manifest is not the committed {source}")
            listed = [m["file"] for m in manifest["modules"]]
            if archive.namelist() != [PLUGIN_MANIFEST, *listed]:
                raise BuildError(f"{package.name}: holds {archive.namelist()}, not {listed}")
            for module in manifest["modules"]:
                digest = hashlib.sha256(archive.read(module["file"])).hexdigest()
                if digest != module["sha256"]:
                    raise BuildError(
                        f"{package.name}: {module['file']} sha256 {digest} is not the pinned "
                        f"{module['sha256']}"
                    )
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise BuildError(f"{package.name}: not a readable plugin package ({exc})") from None


def _copy_plugins(root: Path, dest: Path) -> None:
    """The example plugin packages (``wasm_tools/out/plugins/*.zip``), each checked against the
    committed manifests, for a person to download and install."""
    out = root / "wasm_tools" / "out" / "plugins"
    sources = sorted((root / "wasm_tools" / "plugins").glob(f"*/{PLUGIN_MANIFEST}"))
    packages = sorted(out.glob("*.zip")) if out.is_dir() else []
    if len(packages) != len(sources):
        raise BuildError(
            "wasm_tools/out/plugins/ does not hold one package per example plugin: "
            "run `python wasm_tools/build.py` first"
        )
    dest.mkdir(parents=True, exist_ok=True)
    for package in packages:
        check_plugin_package(root, package)
        shutil.copy2(package, dest / package.name)
    (dest / EXAMPLE_INDEX).write_text(json.dumps(example_index(packages), indent=1), "utf-8")


EXAMPLE_INDEX = "index.json"


def example_index(packages: list[Path]) -> list[dict[str, str | int]]:
    """What the empty Plugins surface offers (issue 33 item 5): one entry per checked example
    package — its ``file`` name, ``id``, ``release``, ``title`` and ``summary`` (from its
    manifest, shown as text), ``size`` in bytes and ``integrity`` (``sha256-<base64>``, the
    page's fetch checks the zip against it). Installing one goes through ``plugin.inspect`` and
    ``plugin.install`` like any package; this list grants nothing."""
    index: list[dict[str, str | int]] = []
    for package in packages:
        data = package.read_bytes()
        with zipfile.ZipFile(package) as archive:
            manifest = json.loads(archive.read(PLUGIN_MANIFEST))
        index.append(
            {
                "file": package.name,
                "id": manifest["id"],
                "release": manifest["release"],
                "title": manifest["title"],
                "summary": manifest["summary"],
                "size": len(data),
                "integrity": "sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode(),
            }
        )
    return index


def _entries(dist: Path, skip: set[str]) -> list[dict[str, object]]:
    files = []
    for f in sorted(p for p in dist.rglob("*") if p.is_file()):
        rel = f.relative_to(dist).as_posix()
        if rel not in skip:
            files.append({"path": rel, "size": f.stat().st_size, "sha256": sha256_of(f)})
    return files


def _manifest(root: Path, dist: Path, pyodide_version: str, packages: list[str], own: Path) -> None:
    """Write ``site-manifest.json`` and the stamped ``sw.js`` (see :mod:`.offline`)."""
    files = _entries(dist, {"site-manifest.json", SW_NAME})
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    build = digest[:16]
    stamp_service_worker(root / "page" / SW_NAME, dist, build, files)
    manifest = {
        "schema": "voicebox-site-manifest-v1",
        "build": build,
        "pyodide": pyodide_version,
        "own_wheel": own.name,
        "packages": packages,
        "files": _entries(dist, {"site-manifest.json"}),
    }
    (dist / "site-manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


PAGE_CONTRACT = "contract.gen.mjs"


def write_page_contract(root: Path) -> Path:
    """Write ``page/contract.gen.mjs`` from the checkout's core (``python -m
    core.host.page_contract``): the constants the page imports instead of restating. Returns
    its path; raises :class:`BuildError` when the generator fails."""
    done = subprocess.run(
        [sys.executable, "-m", "core.host.page_contract"],
        cwd=root,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if done.returncode != 0:
        raise BuildError(f"page/{PAGE_CONTRACT} could not be generated: {done.stderr[-500:]}")
    target = root / "page" / PAGE_CONTRACT
    if not target.exists() or target.read_text(encoding="utf-8") != done.stdout:
        target.write_text(done.stdout, encoding="utf-8")
    return target


RUNTIME_WHEELS = "runtime/wheels"
"""Where the wheels of the person's Python runtime ship (``runtime_wheels`` of the lock): the
host fetches each with its pin from ``site-manifest.json`` and hands it to the runtime, which
installs it at boot (browser_host/python_runtime.py; docs/python.md)."""


OFFLINE_SET = "offline-set.json"


def write_offline_set(lock: WheelLock, paths: dict[str, Path], dest: Path) -> Path:
    """Write ``dest/offline-set.json``: the runtime wheels marked ``offline_set`` with their
    versions, files and the names each depends on (read from the wheels' metadata, checked
    against the runtime's other pins by :func:`check_requirements`: an unmet one is a
    :class:`BuildError`). The host reads it with its pin and core decides from it which of a
    project's requirements load (``core/tools/python_requirements.py``; issue 32)."""
    depends = check_requirements(paths, lock.target.python_version)
    packages = [
        {
            "name": canonicalize_name(w.name),
            "version": w.version,
            "file": w.file,
            "imports": w.imports,
            "depends": sorted(depends.get(canonicalize_name(w.name), [])),
        }
        for w in lock.runtime_wheels
        if w.offline_set
    ]
    body = {"schema": "voicebox-offline-set-v1", "packages": packages}
    out = dest / OFFLINE_SET
    out.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return out


def build_site(root: Path, dist: Path, cache: Path) -> dict[str, object]:
    """Build the whole static site into ``dist`` (replaced); return a summary of what shipped.

    Raises :class:`BuildError` naming the file and cause when a pin, a hash or a requirement
    does not hold.
    """
    lock = load_lock(root)
    runtime = _check_runtime(root, lock)
    wheels = fetch_all(lock, cache)
    if dist.exists():
        shutil.rmtree(dist)
    pyo = dist / "pyodide"
    pyo.mkdir(parents=True)
    for name in PYODIDE_FILES:
        shutil.copy2(runtime / name, pyo / name)
    for path in wheels.values():
        shutil.copy2(path, pyo / path.name)
    own = build_own_wheel(root, pyo)
    packages = _write_pyodide_lock(runtime, pyo, lock, wheels, own)
    compile_bytecode(root, pyo)
    make_snapshot(root, pyo)
    write_page_contract(root)
    _copy_tree(root / "page", dist, ("*.html", "*.mjs", "*.css", "*.svg", "*.png", "ui/*.mjs"))
    _copy_tree(root / "worker", dist / "worker", ("*.mjs",))
    _copy_tools(root, dist / "tools")
    build_runtime_frame(root, dist / "runtime")
    runtime_wheels = dist / RUNTIME_WHEELS
    runtime_wheels.mkdir(parents=True)
    runtime_paths = fetch_all(lock, cache, runtime=True)
    for path in runtime_paths.values():
        shutil.copy2(path, runtime_wheels / path.name)  # the person's runtime only (issue 32)
    write_offline_set(lock, runtime_paths, runtime_wheels)
    _copy_plugins(root, dist / "plugins" / "examples")
    editor = bundle_editor(root, dist / "vendor")
    hashes = bundle_hashes(root, dist / "vendor")
    unzip = bundle_unzip(root, dist / "vendor")
    _manifest(root, dist, lock.target.pyodide, packages, own)
    total = sum(f.stat().st_size for f in dist.rglob("*") if f.is_file())
    return {
        "dist": str(dist),
        "bytes": total,
        "packages": packages,
        "own_wheel": own.name,
        "editor_packages": editor,
        "hash_packages": hashes,
        "unzip_packages": unzip,
    }
