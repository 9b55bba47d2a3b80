"""Every operation of the host protocol, in one list, with its gates (SPEC §4).

This module is the protocol's surface: what the page (and a tool call) may ask, what each
operation takes and answers, and what the pipeline enforces before its handler runs — writes
(SAFE mode), a person's gesture, the receipt rung, the audit, bodies and attachments
(:class:`~core.host.operations.Operation`). The ``*_ops`` modules only define handlers; nothing
registers itself by being imported. ``docs/protocol.schema.json`` and the page's contract
module are generated from :data:`OPERATIONS`.

**Late modules (issue 18, cold boot).** The operations the first screen does not need —
composing (jinja2), missions, the mailbox, blocks and receipts, the tray, plugins, the file
tree's layout, archives (export and import) — are declared by module (:data:`LATE_MODULES`,
:class:`~core.host.operations.LateModule`): importing this module imports none of them. A host
imports them after it is ready (:meth:`core.host.pipeline.Host.late_imports`); a call that
needs one before then awaits that import. Generation (``python -m core.host.schema``, the page
contract) and every test that walks :data:`OPERATIONS` import them all by looking them up.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from typing import TYPE_CHECKING

from pydantic import BaseModel

from core.audit import Verification
from core.custody.wire import CallEnvelope
from core.editor_prefs import EditorPrefs
from core.host import (
    asset_ops,
    audit_ops,
    env_ops,
    file_ops,
    inbox_ops,
    info_ops,
    keys_ops,
    project_ops,
    python_ops,
    settings_ops,
    unsaved_ops,
    upload_ops,
)
from core.host.operations import Gesture, LateModule, Operation, Operations
from core.model import NoArgs
from core.policy import Policy
from core.protocol import Envelope
from core.secret import known_names
from core.tools.builtin import FileWriteToolArgs

if TYPE_CHECKING:  # imported late (module docstring); named here for the layering tests
    from core.host import (
        archive_ops,
        blocks_ops,
        compose_ops,
        harness_ops,
        help_ops,
        layout_ops,
        mailbox_ops,
        mission_ops,
        plugin_ops,
        remote_mission_ops,
        remote_tray_ops,
        search_ops,
        tray_ops,
    )

__all__ = ["LATE_MODULES", "OPERATIONS", "FieldWords", "field_words"]

LATE_MODULES = (
    # the post's modules first (issue 34): a fresh host's first mission.post waits for them,
    # not for the rest, and the mailboxes' warm-up begins as soon as they are in
    "core.host.mailbox_ops",
    "core.host.mission_ops",
    "core.host.plugin_ops",
    "core.host.archive_ops",
    "core.host.compose_ops",
    "core.host.blocks_ops",
    "core.host.tray_ops",
    "core.host.layout_ops",
    "core.host.help_ops",
    "core.host.remote_mission_ops",
    "core.host.remote_tray_ops",
    "core.host.harness_ops",
    "core.host.search_ops",
)
"""The modules whose operations are imported after ready (module docstring), in order."""

if not TYPE_CHECKING:
    archive_ops = LateModule("core.host.archive_ops")
    compose_ops = LateModule("core.host.compose_ops")
    mission_ops = LateModule("core.host.mission_ops")
    mailbox_ops = LateModule("core.host.mailbox_ops")
    blocks_ops = LateModule("core.host.blocks_ops")
    tray_ops = LateModule("core.host.tray_ops")
    layout_ops = LateModule("core.host.layout_ops")
    help_ops = LateModule("core.host.help_ops")
    plugin_ops = LateModule("core.host.plugin_ops")
    remote_mission_ops = LateModule("core.host.remote_mission_ops")
    remote_tray_ops = LateModule("core.host.remote_tray_ops")
    harness_ops = LateModule("core.host.harness_ops")
    search_ops = LateModule("core.host.search_ops")

_ARCHIVING = Gesture("Archiving a mission", via="archived_via", when=mission_ops.archives)
_OWNER_SEAT = Gesture(
    "Editing the blocks from the owner seat", when=blocks_ops.owner_seat, names="seat"
)

OPERATIONS = Operations(
    [
        # ---- the host itself
        Operation(
            "host.info",
            NoArgs,
            info_ops.HostInfo,
            info_ops.host_info,
            "Versions, protocol, policy flags, runtime memory figures, kept listings (counts).",
            audited=False,
        ),
        Operation(
            "policy.get",
            NoArgs,
            settings_ops.PolicyAnswer,
            settings_ops.policy_get,
            "The operator's policy: every switch, and how to offer it.",
            audited=False,
        ),
        Operation(
            "policy.set",
            settings_ops.PolicySetArgs,
            settings_ops.PolicyAnswer,
            settings_ops.policy_set,
            "Change the operator's policy (a person's gesture; audited; works in SAFE mode).",
            gesture=Gesture("Changing the policy"),
        ),
        # ---- provider keys (issue 31; seed 002 §2): values go in once and never come out
        Operation(
            "keys.list",
            NoArgs,
            keys_ops.KeyList,
            keys_ops.keys_list,
            "Provider keys by variable and fingerprint (never a value), and their grants.",
            audited=False,
        ),
        Operation(
            "keys.set",
            keys_ops.KeySetArgs,
            keys_ops.KeyList,
            keys_ops.keys_set,
            "Set or replace a provider key (a person's gesture; audited by fingerprint).",
            writes=True,
            gesture=Gesture("Setting a provider key"),
        ),
        Operation(
            "keys.remove",
            keys_ops.KeyRef,
            keys_ops.KeyList,
            keys_ops.keys_remove,
            "Remove a provider key and its grants (a person's gesture; audited).",
            gesture=Gesture("Removing a provider key"),
        ),
        Operation(
            "keys.grant",
            keys_ops.KeyGrantArgs,
            keys_ops.KeyList,
            keys_ops.keys_grant,
            "Let a paired environment's runs use a provider key (a person's gesture; audited).",
            writes=True,
            gesture=Gesture("Granting a provider key"),
        ),
        Operation(
            "keys.revoke_grant",
            keys_ops.KeyGrantArgs,
            keys_ops.KeyList,
            keys_ops.keys_revoke_grant,
            "Take back a provider key's grant to an environment (a person's gesture; audited).",
            gesture=Gesture("Revoking a provider key's grant"),
        ),
        # ---- the coding-agent harness (issue 31): which pinned template runs
        Operation(
            "harness.list",
            NoArgs,
            harness_ops.HarnessList,
            harness_ops.harness_list,
            "Each paired environment's agent templates, what its runner found, the active one.",
            audited=False,
        ),
        Operation(
            "harness.choose",
            harness_ops.HarnessChooseArgs,
            harness_ops.HarnessList,
            harness_ops.harness_choose,
            "Make a pinned agent template active for an environment (a person's gesture).",
            writes=True,
            gesture=Gesture("Choosing the agent harness"),
        ),
        Operation(
            "audit.list",
            audit_ops.AuditListArgs,
            audit_ops.AuditPage,
            audit_ops.audit_list,
            "List audit records, newest first.",
            audited=False,
        ),
        Operation(
            "audit.verify",
            NoArgs,
            Verification,
            audit_ops.audit_verify,
            "Check the hash chain, every record's MAC and the anchor; name what was found.",
            audited=False,
        ),
        # ---- projects (SPEC §3)
        Operation(
            "project.list",
            NoArgs,
            project_ops.ProjectList,
            project_ops.project_list,
            "List projects.",
            audited=False,
        ),
        Operation(
            "project.create",
            project_ops.ProjectCreateArgs,
            project_ops.ProjectAnswer,
            project_ops.project_create,
            "Create an empty project.",
            writes=True,
        ),
        Operation(
            "project.open",
            project_ops.ProjectRef,
            project_ops.ProjectAnswer,
            project_ops.project_open,
            "Open a project.",
        ),
        Operation(
            "project.rename",
            project_ops.ProjectRenameArgs,
            project_ops.ProjectAnswer,
            project_ops.project_rename,
            "Rename a project (its id stays).",
            writes=True,
        ),
        Operation(
            "project.delete",
            project_ops.ProjectRef,
            project_ops.ProjectRemoved,
            project_ops.project_delete,
            "Delete an OPFS project and its files, or forget a picked folder (files stay).",
            writes=True,
        ),
        Operation(
            "project.add_folder",
            project_ops.AddFolderArgs,
            project_ops.ProjectAnswer,
            project_ops.project_add_folder,
            "Register a folder the user picked as a project (its handle is the attachment).",
            attachment="the folder's handle",
        ),
        Operation(
            "project.folder_handle",
            project_ops.ProjectRef,
            project_ops.ProjectAnswer,
            project_ops.project_folder_handle,
            "Hand the page a picked folder's handle so a person can grant access again.",
        ),
        # ---- archives (SPEC §10)
        Operation(
            "project.export",
            project_ops.ExportArgs,  # eager: the tool project.export registers it at boot
            archive_ops.ArchiveSummary,
            archive_ops.project_export,
            "Export a project as a deterministic .zip, streamed as the answer's body.",
            body_out=True,
        ),
        Operation(
            "project.import",
            archive_ops.ImportArgs,
            archive_ops.ImportAnswer,
            archive_ops.project_import,
            "Import a .zip (the body) as a new project; every entry is checked first.",
            writes=True,
            body_in="required",
        ),
        Operation(
            "project.import_preview",
            archive_ops.PreviewArgs,
            archive_ops.ImportPreview,
            archive_ops.project_import_preview,
            "Say what importing a .zip (the body) would create; every entry is checked, "
            "nothing is written.",
            read_only=True,
            body_in="required",
        ),
        # ---- files (SPEC §3, §11)
        Operation(
            "file.list",
            file_ops.ListArgs,
            file_ops.Listing,
            file_ops.file_list,
            "List one folder, whole or a page of it (lazy: never reads file contents).",
            read_only=True,
        ),
        Operation(
            "file.walk",
            file_ops.FolderArgs,
            file_ops.Walk,
            file_ops.file_walk,
            "List every file under a folder, with sizes (no contents).",
            read_only=True,
        ),
        Operation(
            "file.search",
            search_ops.SearchArgs,
            search_ops.SearchSummary,
            search_ops.file_search,
            "Search the project's files (plain, case, whole word, guarded regex; globs); the "
            "matches stream as JSON lines, bounded in time and cancellable (issue 33).",
            body_out=True,
            read_only=True,
        ),
        Operation(
            "file.search_warm",
            search_ops.SearchWarmArgs,
            search_ops.SearchWarmed,
            search_ops.file_search_warm,
            "Read the project's files into the host's bounded kept bytes before a search needs "
            "them (the search panel opened); cancellable by file.search_cancel (issue 33).",
            read_only=True,
            audited=False,
        ),
        Operation(
            "file.search_cancel",
            search_ops.SearchCancelArgs,
            search_ops.SearchCancelled,
            search_ops.file_search_cancel,
            "Stop a running file.search (it answers with stopped: cancelled).",
            audited=False,
        ),
        Operation(
            "file.read",
            file_ops.PathArgs,
            file_ops.FileDigest,
            file_ops.file_read,
            "Read a file; its bytes come back as the answer's body.",
            body_out=True,
            read_only=True,
        ),
        Operation(
            "file.write",
            file_ops.WriteArgs,
            file_ops.FileDigest,
            file_ops.file_write,
            "Write a file atomically from the message body; parents are created.",
            writes=True,
            body_in="required",
        ),
        Operation(
            "file.write_batch",
            upload_ops.WriteBatchArgs,
            upload_ops.BatchWritten,
            upload_ops.file_write_batch,
            "Write many new files at once (a folder upload, issue 34): their bytes one after "
            "another as the body; each atomic; a taken name is answered, never overwritten; "
            "one audit record with the batch's manifest hash.",
            writes=True,
            body_in="required",
        ),
        Operation(
            "file.mkdir",
            file_ops.PathArgs,
            file_ops.PathDone,
            file_ops.file_mkdir,
            "Create a folder and any missing parents.",
            writes=True,
        ),
        Operation(
            "file.delete",
            file_ops.DeleteArgs,
            file_ops.Trashed,
            file_ops.file_delete,
            "Move a file or folder into the project trash (restorable until emptied).",
            writes=True,
        ),
        Operation(
            "file.move",
            file_ops.MoveArgs,
            file_ops.Moved,
            file_ops.file_move,
            "Rename or move a file or folder; an existing target is refused, replaced (into "
            "the trash) or kept beside, as asked. Rolled back on failure.",
            writes=True,
        ),
        Operation(
            "trash.list",
            file_ops.TrashArgs,
            file_ops.TrashList,
            file_ops.trash_list,
            "List the project trash, newest first.",
        ),
        Operation(
            "trash.restore",
            file_ops.TrashRef,
            file_ops.Restored,
            file_ops.trash_restore,
            "Put a trash entry back, byte-identical (sha256 checked), or beside what is there.",
            writes=True,
        ),
        Operation(
            "trash.empty",
            file_ops.TrashRef,
            file_ops.Emptied,
            file_ops.trash_empty,
            "Delete one trash entry, or the whole trash, for good.",
            writes=True,
        ),
        # ---- the create-asset tool (SPEC §8)
        Operation(
            "sandbox.connect",
            NoArgs,
            asset_ops.SandboxConnected,
            asset_ops.sandbox_connect,
            "Hand the host a MessagePort to the create-asset sandbox frame (the attachment).",
            attachment="the sandbox's port",
        ),
        Operation(
            "asset.create",
            asset_ops.AssetCreateArgs,
            asset_ops.AssetCreated,
            asset_ops.asset_create,
            "Generate a PNG with the create-asset Wasm tool in its sandbox; the host writes it.",
            writes=True,
        ),
        # ---- the person's Python, in a runtime of its own (issue 32; docs/python.md)
        Operation(
            "python.connect",
            python_ops.PythonConnectArgs,
            python_ops.PythonConnected,
            python_ops.python_connect,
            "Hand the host a MessagePort to the Python runtime's frame (the attachment).",
            attachment="the runtime frame's port",
        ),
        Operation(
            "python.run",
            python_ops.PythonRunArgs,
            python_ops.PythonRunResult,
            python_ops.python_run,
            "Run a project's .py file as __main__ in the sandboxed runtime; output streams as "
            "events; the host applies its file changes (receipts) and lists them.",
            gesture=Gesture("Running Python"),
        ),
        Operation(
            "python.eval",
            python_ops.PythonEvalArgs,
            python_ops.PythonRunResult,
            python_ops.python_eval,
            "Run one console input in the runtime's kept namespace; as python.run.",
            gesture=Gesture("Running Python"),
        ),
        Operation(
            "python.input",
            python_ops.PythonInputArgs,
            python_ops.PythonInputTaken,
            python_ops.python_input,
            "Give the line the person typed to the input() the run waits on.",
            gesture=Gesture("Typing for Python's input()"),
            audited=False,
        ),
        Operation(
            "python.complete",
            python_ops.PythonCompleteArgs,
            python_ops.PythonCompletions,
            python_ops.python_complete,
            "Tab completion of the console's text in the runtime's namespace (rlcompleter).",
            audited=False,
        ),
        Operation(
            "python.warm",
            NoArgs,
            python_ops.PythonConnected,
            python_ops.python_warm,
            "Start the Python runtime in the background, so that the first Run need not wait.",
            audited=False,
        ),
        Operation(
            "python.stop",
            NoArgs,
            python_ops.PythonStopped,
            python_ops.python_stop,
            "End the run in progress: the runtime is terminated and started anew.",
        ),
        # ---- plugins (issue 16; seed 003): the operator's controls; calls are tool.call
        Operation(
            "plugin.install",
            plugin_ops.PackageArgs,
            plugin_ops.PluginInfo,
            plugin_ops.plugin_install,
            "Install a plugin package (the body: a zip, or a folder's files): pins checked, "
            "operations registered, nothing admitted.",
            writes=True,
            gesture=Gesture("Installing a plugin"),
            body_in="required",
        ),
        Operation(
            "plugin.inspect",
            plugin_ops.PackageArgs,
            plugin_ops.PluginInfo,
            plugin_ops.plugin_inspect,
            "What installing a plugin package (the body) would register; changes nothing.",
            audited=False,
            body_in="required",
        ),
        Operation(
            "plugin.list",
            NoArgs,
            plugin_ops.PluginList,
            plugin_ops.plugin_list,
            "Installed plugins: operations, effects, capabilities with reasons, admission.",
            audited=False,
        ),
        Operation(
            "plugin.grant",
            plugin_ops.PluginGrantArgs,
            plugin_ops.PluginInfo,
            plugin_ops.plugin_grant,
            "Admit the installed release of a plugin and grant it files (or take either back).",
            gesture=Gesture("Admitting a plugin or granting it files"),
        ),
        Operation(
            "plugin.withdraw",
            plugin_ops.PluginRef,
            plugin_ops.PluginInfo,
            plugin_ops.plugin_withdraw,
            "Withdraw every operation of a plugin: later calls are refused plugin-withdrawn.",
            gesture=Gesture("Withdrawing a plugin"),
        ),
        Operation(
            "plugin.uninstall",
            plugin_ops.PluginRef,
            plugin_ops.PluginList,
            plugin_ops.plugin_uninstall,
            "Remove a plugin: its operations, package, admission and files grant.",
            writes=True,
            gesture=Gesture("Uninstalling a plugin"),
        ),
        # ---- environments, pairing and tools (SPEC §6, §7; seed 002, seed 003)
        Operation(
            "env.list",
            NoArgs,
            env_ops.EnvList,
            env_ops.env_list,
            "List the local environment and every peer (no secrets).",
            audited=False,
        ),
        Operation(
            "fleet.list",
            NoArgs,
            env_ops.EnvList,
            env_ops.fleet_list,
            "List paired environments and whether each is reachable now.",
            audited=False,
        ),
        Operation(
            "env.create",
            env_ops.EnvCreateArgs,
            env_ops.EnvAnswer,
            env_ops.env_create,
            "Create a peer environment served by a worker this host starts.",
            writes=True,
        ),
        Operation(
            "env.add",
            env_ops.EnvAddArgs,
            env_ops.EnvAnswer,
            env_ops.env_add,
            "Add a remote environment by its URL and one-time pairing code.",
            writes=True,
        ),
        Operation(
            "env.remove",
            env_ops.EnvRef,
            env_ops.EnvList,
            env_ops.env_remove,
            "Forget a remote environment (revoke it first to end the pairing there).",
            writes=True,
        ),
        Operation(
            "env.pair",
            env_ops.EnvRef,
            env_ops.EnvAnswer,
            env_ops.env_pair,
            "Pair with a peer: it issues a bearer that only this host holds.",
            writes=True,
        ),
        Operation(
            "env.unpair",
            env_ops.EnvRef,
            env_ops.EnvAnswer,
            env_ops.env_unpair,
            "Forget this host's bearer for a peer.",
            writes=True,
        ),
        Operation(
            "env.command",
            env_ops.EnvCommandArgs,
            env_ops.CommandRan,
            env_ops.env_command,
            "Run a fenced command (exec, git init, git config) in a remote environment's project.",
            writes=True,
            gesture=Gesture("Running a command in a remote environment"),
        ),
        Operation(
            "env.revoke",
            env_ops.EnvRef,
            env_ops.Revoked,
            env_ops.env_revoke,
            "Revoke a pairing now: the peer closes every channel that used it.",
            writes=True,
        ),
        Operation(
            "tool.discover",
            env_ops.EnvRef,
            env_ops.ToolList,
            env_ops.tool_discover,
            "Describe the tools an environment offers (not a grant).",
            audited=False,
        ),
        Operation(
            "tool.call",
            CallEnvelope,
            env_ops.ToolCallResult,
            env_ops.tool_call,
            "Call a tool in an environment: {envKey, tool, descriptorId, args}.",
        ),
        # ---- fleet contact (seed 002 §4)
        Operation(
            "inbox.deliver",
            inbox_ops.DeliverArgs,
            inbox_ops.InboxMessage,
            inbox_ops.inbox_deliver,
            "Put a message in an agent's inbox in this environment.",
            writes=True,
        ),
        Operation(
            "inbox.read",
            inbox_ops.ReadArgs,
            inbox_ops.Inbox,
            inbox_ops.inbox_read,
            "Read this environment's agent inbox (newest last).",
            audited=False,
        ),
        Operation(
            "fleet.contact",
            inbox_ops.ContactArgs,
            inbox_ops.Delivered,
            inbox_ops.fleet_contact,
            "Send a message to environmentKey/agentId (local, or a paired peer).",
        ),
        # ---- missions, mailbox, blocks, receipts (seed 004; SPEC §9)
        Operation(
            "compose.packet",
            compose_ops.ComposeArgs,
            compose_ops.ComposeAnswer,
            compose_ops.compose_packet,
            "Render a mission packet for a block and an agent, and draft its first letter.",
            audited=False,
        ),
        # ---- the tray and Compose for a remote project (issue 30)
        Operation(
            "remote.tray",
            remote_tray_ops.RemoteTrayArgs,
            remote_tray_ops.RemoteTrayView,
            remote_tray_ops.remote_tray,
            "A remote project's mission heads as tray cards (the tray's own rules).",
            audited=False,
        ),
        Operation(
            "remote.compose",
            remote_tray_ops.RemoteComposeArgs,
            remote_tray_ops.RemoteComposeAnswer,
            remote_tray_ops.remote_compose,
            "The packet a spawn in a remote project would send, and the modes Compose offers.",
            audited=False,
        ),
        # ---- missions that run on a remote environment (issue 30, the browser side)
        Operation(
            "remote.board",
            remote_mission_ops.BoardArgs,
            remote_mission_ops.BoardAnswer,
            remote_mission_ops.remote_board,
            "A remote project's blocks, missions and runners, and whether spawn is offered.",
            audited=False,
        ),
        Operation(
            "remote.spawn",
            remote_mission_ops.SpawnArgs,
            remote_mission_ops.Spawned,
            remote_mission_ops.remote_spawn,
            "Spawn a mission in a remote project: its live pinned runner performs it.",
            writes=True,
            gesture=Gesture("Spawning a mission"),
        ),
        Operation(
            "remote.log",
            remote_mission_ops.LogArgs,
            remote_mission_ops.LogView,
            remote_mission_ops.remote_log,
            "A remote mission's run log (its last lines, escape codes stripped).",
            audited=False,
        ),
        Operation(
            "remote.cancel",
            remote_mission_ops.MissionRef,
            remote_mission_ops.Cancelled,
            remote_mission_ops.remote_cancel,
            "Cancel a remote mission: its runner stops it and posts failed.",
            writes=True,
            gesture=Gesture("Cancelling a mission"),
        ),
        Operation(
            "remote.evidence",
            remote_mission_ops.MissionRef,
            remote_mission_ops.EvidenceView,
            remote_mission_ops.remote_evidence,
            "Is a remote merge_wait candidate backed by a log its environment kept?",
            audited=False,
        ),
        Operation(
            "remote.diff",
            remote_mission_ops.MissionRef,
            remote_mission_ops.DiffView,
            remote_mission_ops.remote_diff,
            "A remote mission branch's change against its base: files, counts, diffs.",
            audited=False,
        ),
        Operation(
            "remote.merge",
            remote_mission_ops.MissionRef,
            remote_mission_ops.Merged,
            remote_mission_ops.remote_merge,
            "Merge a remote mission's branch into its project's checked-out branch.",
            writes=True,
            gesture=Gesture("Merging a mission's branch"),
        ),
        Operation(
            "remote.land",
            remote_mission_ops.RemoteLandArgs,
            remote_mission_ops.Landed,
            remote_mission_ops.remote_land,
            "Import a remote merge_wait mission's receipt and post its landed letter.",
            writes=True,
            gesture=Gesture("Importing a receipt", via="imported_via"),
        ),
        Operation(
            "mission.post",
            mission_ops.MissionPostArgs,
            mission_ops.PostAnswer,
            mission_ops.mission_post,
            "Post a mission letter (schema, phase gates, head CAS, block, brain, human gate).",
            writes=True,
            gesture=_ARCHIVING,
        ),
        Operation(
            "mission.deliver",
            mission_ops.DeliverArgs,
            mission_ops.DeliverAnswer,
            mission_ops.mission_deliver,
            "Open a mission directly: post its seq-1 letter and put the packet in an inbox.",
            writes=True,
        ),
        Operation(
            "mailbox.send",
            mailbox_ops.SendArgs,
            mailbox_ops.SendAnswer,
            mailbox_ops.mailbox_send,
            "Put a plain letter in an agent's inbox.",
            writes=True,
        ),
        Operation(
            "mailbox.read",
            mailbox_ops.MailboxReadArgs,
            mailbox_ops.MailboxAnswer,
            mailbox_ops.mailbox_read,
            "Read the mailbox: plain letters, or the head of every mission.",
            audited=False,
        ),
        Operation(
            "blocks.get",
            blocks_ops.ProjectArgs,
            blocks_ops.BlocksAnswer,
            blocks_ops.blocks_get,
            "Read the project's system-block store.",
            audited=False,
        ),
        Operation(
            "blocks.candidate_edit",
            blocks_ops.EditArgs,
            blocks_ops.EditAnswer,
            blocks_ops.blocks_candidate_edit,
            "Edit the system blocks: the whole batch applies, or none of it.",
            writes=True,
            gesture=_OWNER_SEAT,
        ),
        Operation(
            "blocks.ratify",
            blocks_ops.RatifyArgs,
            blocks_ops.RatifyAnswer,
            blocks_ops.blocks_ratify,
            "Ratify the system-block store (a person's gesture only).",
            writes=True,
            gesture=Gesture("Ratifying", via="ratified_via"),
        ),
        Operation(
            "receipt.import",
            blocks_ops.ImportArgs,
            blocks_ops.ImportAnswer,
            blocks_ops.receipt_import,
            "Import a receipt candidate into the block store (a person's gesture only).",
            writes=True,
            gesture=Gesture("Importing a receipt", via="imported_via"),
        ),
        # ---- the mission tray (seed 004 §3)
        Operation(
            "tray.read",
            tray_ops.TrayArgs,
            tray_ops.TrayView,
            tray_ops.tray_read,
            "The mission tray of a project: one card per head, counts, what is hidden.",
            audited=False,
        ),
        Operation(
            "tray.dismiss",
            tray_ops.DismissArgs,
            tray_ops.DismissAnswer,
            tray_ops.tray_dismiss,
            "Hide a failed or stagnant mission from the tray (presentation only), or show it.",
            gesture=Gesture("Hiding a mission from the tray"),
        ),
        Operation(
            "tray.layout",
            tray_ops.LayoutArgs,
            tray_ops.LayoutAnswer,
            tray_ops.tray_layout,
            "Remember whether the mission tray is expanded.",
            audited=False,
        ),
        Operation(
            "files.layout",
            layout_ops.FilesLayoutArgs,
            layout_ops.FilesLayout,
            layout_ops.files_layout,
            "Remember, or read, the folders open in a project's file tree.",
            audited=False,
        ),
        Operation(
            "files.position",
            layout_ops.FilePositionArgs,
            layout_ops.FilePosition,
            layout_ops.file_position,
            "Remember, or read, where the editor was in a file (cursor, selection, scroll).",
            audited=False,
        ),
        Operation(
            "editor.prefs",
            help_ops.EditorPrefsArgs,
            EditorPrefs,
            help_ops.editor_prefs,
            "Remember, or read, the editor settings (indent, tab width, font size, wrap, theme).",
            audited=False,
        ),
        Operation(
            "help.guide",
            help_ops.GuideArgs,
            help_ops.GuideState,
            help_ops.help_guide,
            "Remember, or read, whether the first-run guide is closed.",
            audited=False,
        ),
        Operation(
            "tabs.unsaved",
            unsaved_ops.UnsavedArgs,
            unsaved_ops.UnsavedKept,
            unsaved_ops.tabs_unsaved,
            "Say which project and paths this tab's editor holds unsaved text of.",
            audited=False,
        ),
        Operation(
            "project.unsaved_elsewhere",
            unsaved_ops.ElsewhereArgs,
            unsaved_ops.UnsavedElsewhere,
            unsaved_ops.project_unsaved_elsewhere,
            "Which other tabs hold unsaved editor text in a project.",
            audited=False,
        ),
        Operation(
            "tray.land",
            tray_ops.LandArgs,
            tray_ops.LandAnswer,
            tray_ops.tray_land,
            "Import a merge_wait head's receipt and post its landed letter (a person's gesture).",
            writes=True,
            gesture=Gesture("Importing a receipt", via="imported_via"),
        ),
        Operation(
            "tray.next_letter",
            tray_ops.NextLetterArgs,
            tray_ops.NextLetterAnswer,
            tray_ops.tray_next_letter,
            "Draft the landed or archived letter extending a merge_wait head (posts nothing).",
            audited=False,
        ),
        Operation(
            "tray.archive_preview",
            tray_ops.PreviewArgs,
            tray_ops.PreviewAnswer,
            tray_ops.tray_archive_preview,
            "Fresh two-boundary snapshot of a merge_wait mission before archiving it.",
            audited=False,
        ),
        Operation(
            "tray.provenance",
            tray_ops.PreviewArgs,
            tray_ops.ProvenanceAnswer,
            tray_ops.tray_provenance,
            "A mission's provenance chain: packet, runner, gate artifact, imported receipt.",
            audited=False,
        ),
    ]
)
"""Every operation this host answers, by name."""


def field_words(operations: Operations) -> frozenset[str]:
    """Every field name and alias the host-facing models declare — the operations' arguments,
    the call and message envelopes, tool arguments, letters, receipt candidates, blocks, the
    policy: the only words a peer's relayed refusal may name
    (:func:`core.custody.peer_answers.known_field`). Imports every late module (issue 18:
    :class:`FieldWords` calls it on first use)."""
    from core.missions.blocks import Block, SkeletonStore
    from core.missions.letters import MissionLetter

    models: list[type[BaseModel]] = [op.args for op in operations.values()]
    models += [
        CallEnvelope,
        Envelope,
        FileWriteToolArgs,
        MissionLetter,
        SkeletonStore,
        Block,
        Policy,
    ]
    return known_names(*models)


class FieldWords(Set[str]):
    """:func:`field_words` of ``operations``, worked out on first use (a membership test):
    what a host hands its peer channels at start without importing its late modules."""

    def __init__(self, operations: Operations) -> None:
        self._operations = operations
        self._words: frozenset[str] | None = None

    def _all(self) -> frozenset[str]:
        if self._words is None:
            self._words = field_words(self._operations)
        return self._words

    def __contains__(self, word: object) -> bool:
        return word in self._all()

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
