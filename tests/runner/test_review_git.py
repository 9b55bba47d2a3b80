"""The server's own git for review and merge (issue 30, review and Merge;
:mod:`server_host.runner_review`), on real repositories in the machine's sandbox: a diff is
bounded and says where it is cut (over 2,000 lines, binary); a diverged branch merges with a
commit whose message names the mission; nothing the project's ``.git`` holds runs (a hook, an
external diff driver), and a ``.git`` *file* is refused rather than followed."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from core.refusals import Code, Refused
from server_host.runner_review import MAX_PATCH_LINES, branch_diff, merge_branch, merge_message
from server_host.sandbox import detect
from server_host.worktrees import GitFence, git, git_fence

MISSION = "msn_0123456789ab"
BRANCH = f"vbx/{MISSION}"
_ME = ("-c", "user.name=t", "-c", "user.email=t@x.invalid")


def _repo(tmp_path: Path) -> tuple[Path, GitFence | None]:
    root = tmp_path / "env"
    folder = root / "projects" / "demo"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("# demo\n")
    git(folder, "init", "--quiet", "-b", "main")
    git(folder, "add", "-A")
    git(folder, *_ME, "commit", "-qm", "1")
    git(folder, "branch", BRANCH)
    return folder, git_fence(detect(), root, (folder,))


def _commit_on(folder: Path, branch: str, files: dict[str, bytes], message: str) -> None:
    git(folder, "checkout", "--quiet", branch)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    git(folder, "add", "-A")
    git(folder, *_ME, "commit", "-qm", message)
    git(folder, "checkout", "--quiet", "main")


def test_a_diff_is_bounded_and_says_where_it_is_cut(tmp_path: Path) -> None:
    folder, fence = _repo(tmp_path)
    big = "".join(f"line {n}\n" for n in range(3_000)).encode()
    _commit_on(folder, BRANCH, {"big.txt": big, "logo.bin": b"\x00\x01\x02" * 100}, "agent")
    diff = branch_diff(folder, fence, MISSION)
    files = {f["path"]: f for f in diff["files"]}
    assert sorted(files) == ["big.txt", "logo.bin"]
    text = files["big.txt"]
    assert (text["added"], text["removed"], text["binary"]) == (3_000, 0, False)
    assert len(text["patch"].splitlines()) == MAX_PATCH_LINES
    assert text["cut"] is not None and "2,000" in text["cut"]
    binary = files["logo.bin"]
    assert binary["binary"] and binary["added"] is None and binary["patch"] is None
    assert "binary" in binary["cut"].lower()
    assert diff["into"] == "main" and str(tmp_path) not in repr(diff)


def test_a_diverged_branch_merges_with_a_commit_naming_the_mission(tmp_path: Path) -> None:
    folder, fence = _repo(tmp_path)
    _commit_on(folder, BRANCH, {"AGENT.md": b"agent\n"}, "agent")
    _commit_on(folder, "main", {"OTHER.md": b"person\n"}, "person")
    merged = merge_branch(folder, fence, MISSION)
    assert merged["how"] == "merge-commit" and merged["into"] == "main"
    assert git(folder, "log", "-1", "--format=%s").stdout.strip() == merge_message(MISSION)
    assert MISSION in merge_message(MISSION) and BRANCH in merge_message(MISSION)
    assert (folder / "AGENT.md").exists() and (folder / "OTHER.md").exists()
    parents = git(folder, "log", "-1", "--format=%P").stdout.split()
    assert len(parents) == 2


def test_review_and_merge_run_nothing_the_projects_git_folder_holds(tmp_path: Path) -> None:
    folder, fence = _repo(tmp_path)
    _commit_on(folder, BRANCH, {"AGENT.md": b"agent\n"}, "agent")
    _commit_on(folder, "main", {"OTHER.md": b"person\n"}, "person")
    marker = folder / ".git" / "ran"  # inside the fence: a planted script could write it
    script = folder / ".git" / "planted.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    for hook in ("post-merge", "pre-merge-commit", "commit-msg", "prepare-commit-msg"):
        (folder / ".git" / "hooks" / hook).write_bytes(script.read_bytes())
        (folder / ".git" / "hooks" / hook).chmod(0o755)
    git(folder, "config", "diff.external", str(script))
    git(folder, "config", "core.fsmonitor", str(script))
    git(folder, "config", "merge.ff", "only")  # the project's choices do not change the merge
    git(folder, "config", "commit.gpgSign", "true")
    assert branch_diff(folder, fence, MISSION)["files"][0]["path"] == "AGENT.md"
    assert merge_branch(folder, fence, MISSION)["how"] == "merge-commit"
    assert not marker.exists()


def test_a_git_file_in_place_of_the_git_folder_is_refused(tmp_path: Path) -> None:
    folder, fence = _repo(tmp_path)
    (folder / ".git").rename(tmp_path / "elsewhere.git")
    (folder / ".git").write_text(f"gitdir: {tmp_path / 'elsewhere.git'}\n")
    for act in (branch_diff, merge_branch):
        with pytest.raises(Refused) as refused:
            act(folder, fence, MISSION)
        assert refused.value.code is Code.ARGS_INVALID


@pytest.mark.parametrize("store", [".voicebox/skeleton.json", ".VoiceBox/mailbox/x.jsonl"])
def test_a_receipt_lands_only_by_import_never_by_merging_a_branch_that_writes_the_store(
    tmp_path: Path, store: str
) -> None:
    """The tryout's finding: an agent rewrote ``.voicebox/skeleton.json`` in its worktree (a
    forged receipt, the block green, a later store version); Merge fast-forwarded it into the
    project, so the store held a receipt no import, landed law or audit saw. A branch that
    changes the project's ``.voicebox/`` (any letter case) is refused whole, nothing changed."""
    folder, fence = _repo(tmp_path)
    (folder / ".voicebox").mkdir()
    (folder / ".voicebox" / "skeleton.json").write_text('{"store_version": 1, "receipts": []}')
    git(folder, "add", "-A")
    git(folder, *_ME, "commit", "-qm", "store v1")
    git(folder, "branch", "-f", BRANCH)
    forged = b'{"store_version": 6, "receipts": [{"candidate_id": "sha256:forged"}]}'
    git(folder, "checkout", "--quiet", BRANCH)
    (folder / store).parent.mkdir(parents=True, exist_ok=True)
    (folder / store).write_bytes(forged)
    (folder / "AGENT.md").write_text("agent\n")
    git(folder, "add", "-A")
    git(folder, *_ME, "commit", "-qm", "agent")
    git(folder, "checkout", "--quiet", "main")
    before = git(folder, "rev-parse", "HEAD").stdout, git(folder, "status", "--porcelain").stdout
    with pytest.raises(Refused) as refused:
        merge_branch(folder, fence, MISSION)
    assert refused.value.code is Code.PATH_RESERVED
    said = refused.value.body().message
    assert store in said and "Import this receipt" in said and str(tmp_path) not in said
    after = git(folder, "rev-parse", "HEAD").stdout, git(folder, "status", "--porcelain").stdout
    assert after == before
    assert b"forged" not in (folder / ".voicebox" / "skeleton.json").read_bytes()
    assert not (folder / "AGENT.md").exists()
