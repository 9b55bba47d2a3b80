"""The server's log: every line passes the token scrub (seed 002 §2: never a bearer, a host
token or a key in a log).

uvicorn's and the server's own loggers write through :class:`ScrubbingFormatter` /
:class:`ScrubbingAccessFormatter`, which clean the *formatted* line — message, arguments and
traceback alike — with :func:`core.secret.scrub_secrets`: anything shaped like a bearer or a
host token, also inside a percent-encoded word (a query string's ``vbx%5F…`` is decoded before
it is judged, issue 29 item 9), and the exact value of every secret the server holds in every
form :mod:`core.redaction` knows (the server's :class:`~core.custody.held_secrets.HeldSecrets`,
handed to :func:`log_config`). The levels offered stop at ``info``: uvicorn's ``trace`` level
would print ASGI messages, headers included. Nothing the server logs names a pairing code
(claims log only their outcome), and URLs carry no secret (the ``envKey`` of a channel's URL
is not one).
"""

from __future__ import annotations

import logging
from typing import Any

from uvicorn.logging import AccessFormatter

from core.custody.held_secrets import HeldSecrets
from core.secret import scrub_secrets

__all__ = ["LEVELS", "ScrubbingAccessFormatter", "ScrubbingFormatter", "log_config"]

LEVELS = ("info", "warning", "error")


def _clean(line: str, secrets: HeldSecrets | None) -> str:
    exact = None if secrets is None else secrets.redactor().redact
    return scrub_secrets(line, exact)


class ScrubbingFormatter(logging.Formatter):
    """A formatter whose output never holds a token shape nor a secret ``secrets`` holds."""

    def __init__(self, *args: Any, secrets: HeldSecrets | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        """The formatted line, scrubbed."""
        return _clean(super().format(record), self.secrets)


class ScrubbingAccessFormatter(AccessFormatter):
    """uvicorn's access-line formatter, scrubbed as :class:`ScrubbingFormatter`."""

    def __init__(self, *args: Any, secrets: HeldSecrets | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        """The formatted line, scrubbed."""
        return _clean(super().format(record), self.secrets)


def log_config(level: str = "info", secrets: HeldSecrets | None = None) -> dict[str, Any]:
    """The ``logging.config.dictConfig`` of ``voicebox-env serve`` (stderr, scrubbed; the
    exact values of ``secrets`` redacted too)."""
    if level not in LEVELS:
        raise ValueError(f"log level is one of {', '.join(LEVELS)}")
    upper = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "default": {
                "()": "server_host.logs.ScrubbingFormatter",
                "fmt": "%(asctime)s %(levelname)s %(name)s: %(message)s",
                "secrets": secrets,
            },
            "access": {
                "()": "server_host.logs.ScrubbingAccessFormatter",
                "fmt": '%(asctime)s access %(client_addr)s "%(request_line)s" %(status_code)s',
                "use_colors": False,
                "secrets": secrets,
            },
        },
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "formatter": "default",
                "stream": "ext://sys.stderr",
            },
            "access": {
                "class": "logging.StreamHandler",
                "formatter": "access",
                "stream": "ext://sys.stderr",
            },
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": upper, "propagate": False},
            "uvicorn.error": {"level": upper},
            "uvicorn.access": {"handlers": ["access"], "level": upper, "propagate": False},
            "voicebox": {"handlers": ["default"], "level": upper, "propagate": False},
        },
    }
