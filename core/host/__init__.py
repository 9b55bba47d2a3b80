"""The host's operations behind the host protocol, written only against ports (SPEC §4).

:mod:`core.host.pipeline` turns one protocol message into one answer; the ``*_ops`` modules
register the operations. A browser, Node or CPython placement wires ports into a
:class:`~core.host.context.HostContext` and calls :class:`~core.host.pipeline.Host`.
"""
