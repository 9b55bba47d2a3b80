"""The base every contract model shares: strict, closed, frozen (STYLE §2).

Unknown fields are refused (``extra="forbid"``), values are not coerced across types
(``strict=True``: the string ``"1"`` is not the number ``1``), and instances are immutable.

Each model's validator and serializer are built when the model is first used, not when its
class is made (``defer_build=True``; issue 34, cold boot): building them was about half of the
host's import in Pyodide, on the path to ``ready``, for ~150 models of which the boot and the
first screen use about 20. The host builds the rest in the background once it is ready
(:func:`unbuilt_contracts`, ``core.host.pipeline.Host.late_imports``), so a settled host has
every model built, as before; a model is the same model either way (same validation, same
schema).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, GetJsonSchemaHandler
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema

__all__ = ["Contract", "JsonOf", "NoArgs", "canonical_json", "unbuilt_contracts"]


class Contract(BaseModel):
    """Base class of every wire, storage and audit model in ``core``; built on first use
    (module docstring)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


def unbuilt_contracts() -> list[type[Contract]]:
    """Every :class:`Contract` subclass made so far whose validator is not built yet (its
    first use will build it), parents before children; ``[]`` once all are built. The host
    builds these one by one after ``ready`` (issue 34, cold boot: module docstring)."""
    out: list[type[Contract]] = []
    seen: set[type[Contract]] = set()
    stack: list[type[Contract]] = [Contract]
    while stack:
        model = stack.pop()
        for sub in reversed(model.__subclasses__()):
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
        if not model.__pydantic_complete__:
            out.append(model)
    return out


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
