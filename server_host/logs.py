"""The server's log: every line passes the token scrub (seed 002 §2: never a bearer, a host
token or a key in a log).

uvicorn's and the server's own loggers write through :class:`ScrubbingFormatter` /
:class:`ScrubbingAccessFormatter`, which replace anything shaped like a bearer or a host token
in the *formatted* line — message, arguments and traceback alike
(:func:`core.secret.scrub_secrets`). The levels offered stop at ``info``: uvicorn's ``trace``
level would print ASGI messages, headers included. Nothing the server logs names a pairing
code (claims log only their outcome), and URLs carry no secret (the ``envKey`` of a channel's
URL is not one).
"""

from __future__ import annotations

import logging
from typing import Any

from uvicorn.logging import AccessFormatter

from core.secret import scrub_secrets

__all__ = ["LEVELS", "ScrubbingAccessFormatter", "ScrubbingFormatter", "log_config"]

LEVELS = ("info", "warning", "error")


class ScrubbingFormatter(logging.Formatter):
    """A formatter whose output never holds a token shape."""

    def format(self, record: logging.LogRecord) -> str:
        """The formatted line, scrubbed."""
        return scrub_secrets(super().format(record))


class ScrubbingAccessFormatter(AccessFormatter):
    """uvicorn's access-line formatter, scrubbed."""

    def format(self, record: logging.LogRecord) -> str:
        """The formatted line, scrubbed."""
        return scrub_secrets(super().format(record))


def log_config(level: str = "info") -> dict[str, Any]:
    """The ``logging.config.dictConfig`` of ``voicebox-env serve`` (stderr, scrubbed)."""
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
            },
            "access": {
                "()": "server_host.logs.ScrubbingAccessFormatter",
                "fmt": '%(asctime)s access %(client_addr)s "%(request_line)s" %(status_code)s',
                "use_colors": False,
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
