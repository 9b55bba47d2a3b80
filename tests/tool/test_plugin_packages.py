"""The built packages through the core reader (issue 16): the example plugins are read with their
pins; each hostile package is refused with its named code before any module could run, or —
when its flaw is at run time or in the registry — read, to be refused there."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.refusals import Code, Refused
from core.tools.plugin_manifest import operation_entries, read_package

REFUSED_ON_READ = {
    "bad-pin": Code.PLUGIN_PIN_MISMATCH,
    "unknown-field": Code.REGISTRATION_INVALID,
    "network": Code.REGISTRATION_INVALID,
    "extra-entry": Code.ARCHIVE_ENTRY_NAME_INVALID,
    "traversal": Code.ARCHIVE_ENTRY_TRAVERSAL,
}
READ_THEN_REFUSED_LATER = {
    "builtin-name",
    "host-name",
    "loop",
    "hog",
    "needs-import",
    "http",
    "forge",
    "deep",
}


def test_the_example_packages_are_read_with_their_pins(plugins_dir: Path) -> None:
    for plugin, operations in {
        "textstats": ["textstats.count", "textstats.outline"],
        "tidy": ["tidy.text"],
    }.items():
        package = read_package((plugins_dir / f"{plugin}-1.0.0.zip").read_bytes())
        assert [
            e.name for e in operation_entries(package.manifest, package.manifest_sha256)
        ] == operations
        assert (
            package.modules[f"{plugin}.wasm"]
            == (plugins_dir / plugin / f"{plugin}.wasm").read_bytes()
        )


def test_the_corpus_is_covered(test_packages: dict[str, Path]) -> None:
    assert set(test_packages) == set(REFUSED_ON_READ) | READ_THEN_REFUSED_LATER


@pytest.mark.parametrize(("name", "code"), sorted(REFUSED_ON_READ.items()))
def test_a_hostile_package_is_refused_on_read(
    test_packages: dict[str, Path], name: str, code: Code
) -> None:
    with pytest.raises(Refused) as caught:
        read_package(test_packages[name].read_bytes())
    assert caught.value.code == code


@pytest.mark.parametrize("name", sorted(READ_THEN_REFUSED_LATER))
def test_a_package_whose_flaw_is_at_run_time_is_read(
    test_packages: dict[str, Path], name: str
) -> None:
    package = read_package(test_packages[name].read_bytes())
    assert operation_entries(package.manifest, package.manifest_sha256)
