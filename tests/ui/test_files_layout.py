"""The folders a person left open, and the tray's state, are remembered per project by the host
(issue 17 §1; core/host/layout_ops.py, core/missions/ui_state.py)."""

from __future__ import annotations

from core.missions.ui_state import MAX_EXPANDED, UiState
from tests.support import HostHarness


def _two_projects() -> tuple[HostHarness, str, str]:
    h = HostHarness()
    a = h.ok("project.create", name="alpha")["project"]["id"]
    b = h.ok("project.create", name="beta")["project"]["id"]
    return h, a, b


def test_open_folders_are_remembered_per_project_shallowest_first() -> None:
    h, a, b = _two_projects()
    assert h.ok("files.layout", project=a) == {"project": a, "expanded": []}
    done = h.ok("files.layout", project=a, expanded=["src/core", "docs", "src", "src"])
    assert done["expanded"] == ["docs", "src", "src/core"]
    assert h.ok("files.layout", project=a)["expanded"] == ["docs", "src", "src/core"]
    assert h.ok("files.layout", project=b)["expanded"] == []
    assert h.ok("files.layout", project=a, expanded=[])["expanded"] == []


def test_a_folder_the_path_rule_refuses_is_refused_and_nothing_is_stored() -> None:
    h, a, _ = _two_projects()
    h.ok("files.layout", project=a, expanded=["src"])
    for bad, code in ((["../up"], "path-outside-root"), (["src", ".voicebox"], "path-reserved")):
        assert h.refused("files.layout", project=a, expanded=bad)["code"] == code
    assert h.ok("files.layout", project=a)["expanded"] == ["src"]


def test_the_tray_remembers_its_state_in_each_project_with_a_default_for_the_rest() -> None:
    h, a, b = _two_projects()
    h.ok("tray.layout", open=False, project=a)
    assert h.ok("tray.read", project=a)["tray_open"] is False
    assert h.ok("tray.read", project=b)["tray_open"] is True
    h.ok("tray.layout", open=False)  # the default, for projects that never chose
    h.ok("tray.layout", open=True, project=a)
    assert h.ok("tray.read", project=a)["tray_open"] is True
    assert h.ok("tray.read", project=b)["tray_open"] is False


def test_the_remembered_folders_are_bounded() -> None:
    many = [f"d{i:04}/x" for i in range(MAX_EXPANDED + 50)] + ["top"]
    kept = UiState().with_expanded("p_0000000000000001", many).expanded_in("p_0000000000000001")
    assert len(kept) == MAX_EXPANDED and kept[0] == "top"


def test_the_editor_position_of_each_file_is_remembered_per_project() -> None:
    h, a, b = _two_projects()
    assert h.ok("files.position", project=a, path="src/x.py")["position"] is None
    where = {"anchor": 12, "head": 20, "top": 340}
    done = h.ok("files.position", project=a, path="src/x.py", position=where)
    assert done == {"project": a, "path": "src/x.py", "position": where}
    assert h.ok("files.position", project=a, path="src/x.py")["position"] == where
    assert h.ok("files.position", project=b, path="src/x.py")["position"] is None
    assert h.ok("files.position", project=a, path="src/x.py", forget=True)["position"] is None
    assert h.ok("files.position", project=a, path="src/x.py")["position"] is None


def test_a_position_for_a_path_the_path_rule_refuses_is_refused() -> None:
    h, a, _ = _two_projects()
    for bad, code in (("../up", "path-outside-root"), (".voicebox/x", "path-reserved")):
        where = {"anchor": 0, "head": 0}
        assert h.refused("files.position", project=a, path=bad, position=where)["code"] == code


def test_the_remembered_positions_are_bounded_most_recent_kept() -> None:
    from core.missions.ui_state import MAX_POSITIONS, Position

    ui = UiState()
    for i in range(MAX_POSITIONS + 5):
        ui = ui.with_position("p_0000000000000001", f"f{i}.py", Position(anchor=i, head=i))
    kept = ui.positions["p_0000000000000001"]
    assert len(kept) == MAX_POSITIONS and "f0.py" not in kept
    assert kept[f"f{MAX_POSITIONS + 4}.py"].anchor == MAX_POSITIONS + 4
