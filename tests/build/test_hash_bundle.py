"""The byte path's hashers (issue 18; BRIEF: pin what ships, nothing from a CDN): the pinned
esbuild bundles the exact-pinned ``hash-wasm`` into one self-contained module, the same bytes
every time, holding only the sha256 and crc32 the export uses, with its licence beside it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from worker.sitebuild.bundle import HASHES_LICENSES_NAME, HASHES_OUT_NAME, bundle_hashes

ROOT = Path(__file__).resolve().parents[2]


def test_the_hash_bundle_is_reproducible_pinned_and_licensed(tmp_path: Path) -> None:
    first = bundle_hashes(ROOT, tmp_path / "a")
    second = bundle_hashes(ROOT, tmp_path / "b")
    assert first == second == ["hash-wasm"]
    code = (tmp_path / "a" / HASHES_OUT_NAME).read_bytes()
    assert code == (tmp_path / "b" / HASHES_OUT_NAME).read_bytes()
    text = code.decode("utf-8")
    assert "createSHA256" in text and "createCRC32" in text
    assert "createArgon2" not in text  # only what the byte path imports
    assert not re.search(r"\bimport\s*\(|\bfetch\(|https?://", text)  # nothing fetched at run time
    pinned = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["dependencies"]
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    version = lock["node_modules/hash-wasm"]["version"]
    assert pinned["hash-wasm"] == version and re.fullmatch(r"\d+\.\d+\.\d+", version)
    licence = (tmp_path / "a" / HASHES_LICENSES_NAME).read_text(encoding="utf-8")
    assert f"hash-wasm {version} — " in licence
