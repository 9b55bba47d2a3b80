"""The broker decides each capability request (seed 003, SPEC §7)."""

from __future__ import annotations

import pytest

from core.paths import ProjectPath
from core.policy import Policy, plugin_grantee
from core.refusals import Code, Refused
from core.tools.broker import BROKER_ORDER, Broker, FilesAccess, StorageAccess, decide
from tests.contracts.operations import builtin, package_sha, plugin

GRANTED = Policy(files_grants=("builtin", plugin_grantee("notes", package_sha())))
WRITE = {"kind": "files", "action": "write", "path": "notes/today.md"}


def refusal(entry: object, policy: Policy, raw: object) -> Code:
    with pytest.raises(Refused) as caught:
        decide(entry, policy, raw)  # type: ignore[arg-type]
    return caught.value.code


def test_plugin_grant_field_refused() -> None:
    for key in ("grant", "grants", "Grant"):
        raw = {**WRITE, key: {"files": "*"}}
        assert refusal(plugin(), GRANTED, raw) == Code.GRANT_FIELD_REFUSED


def test_grant_field_is_refused_before_anything_else() -> None:
    broken = {"kind": "network", "grant": {"hosts": ["*"]}, "unknown": 1}
    assert refusal(builtin(), Policy(read_only=True, files_grants=()), broken) == (
        Code.GRANT_FIELD_REFUSED
    )


def test_request_has_a_closed_shape() -> None:
    for raw in ({**WRITE, "mode": "0777"}, {"kind": "shell", "cmd": "ls"}, [WRITE], "files"):
        assert refusal(plugin(), GRANTED, raw) == Code.MESSAGE_MALFORMED


def test_capability_must_be_declared() -> None:
    no_files = plugin(capabilities=frozenset())
    assert refusal(no_files, GRANTED, WRITE) == Code.CAPABILITY_UNDECLARED
    storage = {"kind": "storage", "action": "get", "key": "k"}
    assert refusal(plugin(), GRANTED, storage) == Code.CAPABILITY_UNDECLARED


def test_read_class_operation_cannot_write() -> None:
    reader = plugin(effect="read", receipt_rule="internal-read")
    assert refusal(reader, GRANTED, WRITE) == Code.EFFECT_CLASS_EXCEEDED
    read = {"kind": "files", "action": "read", "path": "notes/today.md"}
    assert decide(reader, GRANTED, read) == FilesAccess("read", ProjectPath(("notes", "today.md")))


def test_safe_mode_is_left_to_the_gate_of_the_write_itself() -> None:
    """The broker decides capabilities; SAFE mode is refused by the pipeline's gate of the
    operation that performs the write (``file.write``), the one check every write meets
    (issue 35 item 2; tests/tool/test_plugin_host.py shows a plugin's write refused there)."""
    safe = GRANTED.model_copy(update={"read_only": True})
    assert decide(plugin(), safe, WRITE) == decide(plugin(), GRANTED, WRITE)
    assert Code.READ_ONLY_MODE not in BROKER_ORDER
    read = {"kind": "files", "action": "list", "path": "notes"}
    assert decide(plugin(), safe, read).action == "list"


def test_network_egress_is_refused_in_e1() -> None:
    fetcher = plugin(
        effect="network", receipt_rule="external-read", capabilities=frozenset({"network"})
    )
    request = {"kind": "network", "method": "GET", "url": "https://example.org/"}
    with pytest.raises(Refused) as caught:
        decide(fetcher, GRANTED, request)
    assert (caught.value.code, caught.value.status) == (Code.NETWORK_EGRESS_REFUSED, 403)
    assert refusal(plugin(), GRANTED, request) == Code.CAPABILITY_UNDECLARED


def test_files_need_the_operator_grant_as_well_as_the_capability() -> None:
    assert refusal(plugin(), Policy(), WRITE) == Code.FILES_GRANT_MISSING
    assert (
        refusal(
            builtin(capabilities=frozenset({"files"})),
            Policy(files_grants=()),
            {"kind": "files", "action": "read", "path": "a"},
        )
        == Code.FILES_GRANT_MISSING
    )
    assert decide(plugin(), GRANTED, WRITE) == FilesAccess(
        "write", ProjectPath(("notes", "today.md"))
    )


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../host/pairings.json", Code.PATH_OUTSIDE_ROOT),
        ("notes/../../x", Code.PATH_OUTSIDE_ROOT),
        ("/host/host-token", Code.PATH_OUTSIDE_ROOT),
        ("C:/Windows", Code.PATH_OUTSIDE_ROOT),
        ("\\\\server\\share", Code.PATH_OUTSIDE_ROOT),
        ("notes\\..\\x", Code.PATH_INVALID),
        (".voicebox/manifest.json", Code.PATH_RESERVED),
        ("", Code.PATH_INVALID),
    ],
)
def test_file_requests_stay_inside_the_project_root(path: str, code: Code) -> None:
    raw = {"kind": "files", "action": "read", "path": path}
    assert refusal(plugin(), GRANTED, raw) == code


def test_metadata_folder_is_only_for_the_operation_that_owns_it() -> None:
    raw = {"kind": "files", "action": "write", "path": ".voicebox/mailbox.jsonl"}
    assert refusal(plugin(), GRANTED, raw) == Code.PATH_RESERVED
    owner = builtin(
        "mission.post",
        effect="write",
        receipt_rule="local-write",
        capabilities=frozenset({"files"}),
        owns_meta=True,
    )
    assert decide(owner, GRANTED, raw).path == ProjectPath((".voicebox", "mailbox.jsonl"))


def test_storage_is_namespaced_by_origin() -> None:
    keeper = plugin(capabilities=frozenset({"storage"}))
    access = decide(keeper, Policy(), {"kind": "storage", "action": "put", "key": "k1"})
    assert access == StorageAccess("put", "plugin:notes", "k1")


def test_broker_takes_a_fresh_policy_snapshot_per_request() -> None:
    current = {"policy": GRANTED}
    broker = Broker(lambda: current["policy"])
    assert broker.decide(plugin(), WRITE).writes
    current["policy"] = Policy()
    with pytest.raises(Refused) as caught:
        broker.decide(plugin(), WRITE)
    assert caught.value.code == Code.FILES_GRANT_MISSING
