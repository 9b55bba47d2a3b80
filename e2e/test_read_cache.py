"""Reads through cached sync access handles (issue 18; docs/operations.md, "Reads").

After a ``file.read`` of an OPFS project file, the host keeps that file's
``FileSystemSyncAccessHandle`` open (``readCached`` in ``worker/opfs-io.mjs``), so the next
read takes no wait. An open handle locks its file: the browser refuses to replace, move or
delete it (or a folder above it). These journeys check, in the browser, that the handle really
is held (the page's own ``createWritable()`` of the file is refused while it is), and that the
host — the one writer — closes it before each change: a write after a cached read is seen by
the next read, and a move, a delete and a project's removal all succeed with a handle open.
"""

from __future__ import annotations

import hashlib

from e2e.hostpage import HostPage

# Whether the page itself may open a writable on the project file `path` ("a/b.txt"): "ok",
# or the name of the browser's refusal (NoModificationAllowedError while a handle is open).
WRITABLE = """async ([project, path]) => {
  let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("projects");
  const parts = [project, ...path.split("/")];
  const name = parts.pop();
  for (const part of parts) dir = await dir.getDirectoryHandle(part);
  try {
    const writable = await (await dir.getFileHandle(name)).createWritable();
    await writable.abort();
    return "ok";
  } catch (err) {
    return err.name;
  }
}"""

LOCKED = "NoModificationAllowedError"


def _project(host: HostPage, name: str) -> str:
    return host.ok("project.create", {"name": name})["result"]["project"]["id"]


def _read(host: HostPage, project: str, path: str) -> bytes:
    answer = host.ok("file.read", {"project": project, "path": path})
    body = answer.get("body") or b""
    assert answer["result"]["sha256"] == hashlib.sha256(body).hexdigest()
    return body


def test_a_write_after_a_cached_read_is_seen_by_the_next_read(host: HostPage) -> None:
    project = _project(host, "cached reads")
    for path in ("top.txt", "notes/deep/inner.txt"):
        host.ok("file.write", {"project": project, "path": path}, b"first bytes")
        assert host.page.evaluate(WRITABLE, [project, path]) == "ok"  # nothing holds it yet
        assert _read(host, project, path) == b"first bytes"
        assert host.page.evaluate(WRITABLE, [project, path]) == LOCKED  # the handle is kept
        assert _read(host, project, path) == b"first bytes"  # read through the kept handle
        host.ok("file.write", {"project": project, "path": path}, b"second, longer bytes")
        assert _read(host, project, path) == b"second, longer bytes"
        host.ok("file.write", {"project": project, "path": path}, b"")
        assert _read(host, project, path) == b""
    host.assert_clean()


def test_a_move_a_delete_and_a_project_removal_succeed_while_a_handle_is_cached(
    host: HostPage,
) -> None:
    project = _project(host, "cached handles")
    host.ok("file.write", {"project": project, "path": "a.txt"}, b"alpha")
    host.ok("file.write", {"project": project, "path": "box/b.txt"}, b"beta")
    assert _read(host, project, "a.txt") == b"alpha"
    assert _read(host, project, "box/b.txt") == b"beta"
    assert host.page.evaluate(WRITABLE, [project, "a.txt"]) == LOCKED
    host.ok("file.move", {"project": project, "src": "a.txt", "dst": "moved.txt"})
    assert host.refused("file.read", {"project": project, "path": "a.txt"})["code"] == (
        "file-not-found"
    )
    assert _read(host, project, "moved.txt") == b"alpha"
    assert host.page.evaluate(WRITABLE, [project, "moved.txt"]) == LOCKED
    host.ok("file.move", {"project": project, "src": "box", "dst": "crate"})  # a folder above
    assert _read(host, project, "crate/b.txt") == b"beta"
    host.ok("file.delete", {"project": project, "path": "moved.txt"})
    assert host.refused("file.read", {"project": project, "path": "moved.txt"})["code"] == (
        "file-not-found"
    )
    assert _read(host, project, "crate/b.txt") == b"beta"
    host.ok("file.delete", {"project": project, "path": "crate", "recursive": True})
    host.ok("file.write", {"project": project, "path": "last.txt"}, b"omega")
    assert _read(host, project, "last.txt") == b"omega"
    assert host.page.evaluate(WRITABLE, [project, "last.txt"]) == LOCKED
    host.ok("project.delete", {"project": project}, human=True)
    listed = [p["id"] for p in host.ok("project.list")["result"]["projects"]]
    assert project not in listed
    host.assert_clean()
