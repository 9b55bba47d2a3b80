"""The base every contract model shares: strict, closed, frozen (STYLE §2).

Unknown fields are refused (``extra="forbid"``), values are not coerced across types
(``strict=True``: the string ``"1"`` is not the number ``1``), and instances are immutable.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, GetJsonSchemaHandler
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema

__all__ = ["Contract", "JsonOf", "NoArgs", "canonical_json"]


class Contract(BaseModel):
    """Base class of every wire, storage and audit model in ``core``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class NoArgs(Contract):
    """The arguments of an operation that takes none: ``{}``."""


@dataclass(frozen=True, slots=True)
class JsonOf:
    """Marks a ``dict[str, Any]`` field as the JSON data of ``model`` (issue 35 item 1):
    ``letter: Annotated[dict[str, Any], JsonOf(MissionLetter)]``. The JSON Schema says the
    model (a ``$ref`` to its definition), never an open object. The field stays JSON data
    where the value is checked later by its own rule and refusal (a posted letter is
    ``letter_invalid``, not ``message-malformed``) or is relayed as the peer or the store wrote
    it; :data:`tests/core/test_schema_closed` holds every open object to a reason."""

    model: type[BaseModel]

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        # the generator itself, so the model becomes one definition named as everywhere else
        # and this field a $ref to it (the handler alone would inline the model's schema)
        generator: GenerateJsonSchema = handler.generate_json_schema  # type: ignore[attr-defined]  # pydantic's handler has it; the protocol does not say so
        return generator.generate_inner(self.model.__pydantic_core_schema__)


def canonical_json(value: object) -> bytes:
    """Serialise plain JSON data canonically: sorted keys, no spaces, UTF-8.

    Used wherever bytes are hashed (audit chain, content ids), so the same value always hashes
    the same on CPython and in Pyodide. Floats are not part of any hashed contract.
    """
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )
