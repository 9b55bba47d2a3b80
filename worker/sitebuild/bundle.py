"""The vendor bundles: pinned npm packages, bundled at build time, each into one module.

- the editor: CodeMirror 6 (:func:`bundle_editor`);
- the byte path's hashers: ``hash-wasm``'s streaming sha256 and crc32 (:func:`bundle_hashes`,
  imported by ``worker/byte-path.mjs``; docs/archives.md §4);
- the boot's zip reader: ``fflate``'s ``unzipSync`` (:func:`bundle_unzip`, imported by
  ``worker/zip-entries.mjs``: the wheels' bytecode archive; docs/operations.md, cold boot).

The editor bundle:

``page/editor/codemirror-entry.mjs`` is bundled by the pinned esbuild (``package.json``
devDependencies, installed by ``npm ci``; never fetched at run time, never from a CDN) into::

    dist/vendor/codemirror.mjs           one ES module, minified, no imports
    dist/vendor/codemirror.LICENSES.txt  the licence of every package the bundle holds

Reproducible: the same ``node_modules`` (``package-lock.json``) and the same entry give the
same bytes — esbuild's output is deterministic, it runs from the repository root with relative
paths (nothing absolute can reach the output), and the licence file is written in name order.
The site manifest lists both files with their sha256 like every other file, so the offline
service worker precaches them (:mod:`worker.sitebuild.offline`).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from worker.sitebuild.wheels import BuildError

__all__ = ["ENTRY", "HASHES_ENTRY", "UNZIP_ENTRY", "bundle_editor", "bundle_hashes", "bundle_unzip"]

ENTRY = "page/editor/codemirror-entry.mjs"
OUT_NAME = "codemirror.mjs"
LICENSES_NAME = "codemirror.LICENSES.txt"
HASHES_ENTRY = "worker/sitebuild/hashes-entry.mjs"
HASHES_OUT_NAME = "hash-wasm.mjs"
HASHES_LICENSES_NAME = "hash-wasm.LICENSES.txt"
UNZIP_ENTRY = "worker/sitebuild/unzip-entry.mjs"
UNZIP_OUT_NAME = "fflate.mjs"
UNZIP_LICENSES_NAME = "fflate.LICENSES.txt"
ESBUILD_ARGS = (
    "--bundle",
    "--format=esm",
    "--minify",
    "--target=es2022",
    "--charset=utf8",
    "--legal-comments=none",  # the licences go to codemirror.LICENSES.txt instead
    "--log-level=warning",
)
LICENCE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "license")


def _pinned_esbuild(root: Path) -> Path:
    pkg = json.loads((root / "package.json").read_text(encoding="utf-8"))
    pinned = pkg.get("devDependencies", {}).get("esbuild")
    if not pinned:
        raise BuildError("package.json: esbuild is not pinned in devDependencies")
    installed = root / "node_modules" / "esbuild" / "package.json"
    binary = root / "node_modules" / ".bin" / "esbuild"
    if not installed.exists() or not binary.exists():
        raise BuildError("node_modules/esbuild is missing: run `npm ci` first")
    version = json.loads(installed.read_text(encoding="utf-8"))["version"]
    if version != pinned:
        raise BuildError(f"node_modules has esbuild {version}, package.json pins {pinned}")
    return binary


def _package_of(input_path: str) -> str | None:
    """``node_modules/@scope/name/...`` → ``@scope/name``; our own files → ``None``."""
    parts = input_path.split("/")
    if "node_modules" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("node_modules")
    return "/".join(parts[i + 1 : i + 3]) if parts[i + 1].startswith("@") else parts[i + 1]


def _licences(root: Path, packages: set[str], bundle: str = OUT_NAME) -> str:
    blocks = [
        f"Third-party software bundled in {bundle} (built from package-lock.json).\n"
        "Each package below is reproduced under its own licence.\n"
    ]
    for name in sorted(packages):
        folder = root / "node_modules" / name
        meta = json.loads((folder / "package.json").read_text(encoding="utf-8"))
        text = next(
            (
                (folder / f).read_text(encoding="utf-8")
                for f in LICENCE_FILES
                if (folder / f).exists()
            ),
            None,
        )
        if text is None:
            raise BuildError(f"node_modules/{name}: no LICENSE file to ship with the bundle")
        head = f"{meta['name']} {meta['version']} — {meta.get('license', 'see below')}"
        blocks.append(f"{'=' * 78}\n{head}\n{'=' * 78}\n{text.strip()}\n")
    return "\n".join(blocks)


def bundle_editor(root: Path, dest: Path) -> list[str]:
    """Bundle the editor into ``dest`` (``dist/vendor``); return the bundled package names.

    Raises :class:`BuildError` when esbuild is missing or not the pinned version, when the
    bundle fails or imports another module, or when a bundled package ships no licence file.
    """
    return _bundle(root, dest, ENTRY, OUT_NAME, LICENSES_NAME)


def bundle_hashes(root: Path, dest: Path) -> list[str]:
    """Bundle ``hash-wasm``'s sha256 and crc32 into ``dest`` (``dist/vendor/hash-wasm.mjs``,
    its licence beside it); return the bundled package names. Raises like
    :func:`bundle_editor`."""
    return _bundle(root, dest, HASHES_ENTRY, HASHES_OUT_NAME, HASHES_LICENSES_NAME)


def bundle_unzip(root: Path, dest: Path) -> list[str]:
    """Bundle ``fflate``'s ``unzipSync`` into ``dest`` (``dist/vendor/fflate.mjs``, its licence
    beside it); return the bundled package names. Raises like :func:`bundle_editor`."""
    return _bundle(root, dest, UNZIP_ENTRY, UNZIP_OUT_NAME, UNZIP_LICENSES_NAME)


def _bundle(root: Path, dest: Path, entry: str, out_name: str, licenses_name: str) -> list[str]:
    esbuild = _pinned_esbuild(root)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        meta_path = Path(tmp) / "meta.json"
        done = subprocess.run(
            [
                str(esbuild),
                entry,
                *ESBUILD_ARGS,
                f"--outfile={dest / out_name}",
                f"--metafile={meta_path}",
            ],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise BuildError(f"bundling {entry} failed:\n{done.stdout}\n{done.stderr}")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    inputs = meta["inputs"]
    imports = [i["path"] for out in meta["outputs"].values() for i in out.get("imports", [])]
    if imports:  # one module: nothing else is fetched when the editor loads
        raise BuildError(f"the bundle {out_name} imports other modules: {imports}")
    packages = {p for p in map(_package_of, inputs) if p is not None}
    (dest / licenses_name).write_text(_licences(root, packages, out_name), encoding="utf-8")
    return sorted(packages)
