"""The base of every spec model: unknown keys are errors, instances are immutable, and numbers
are numbers.

Pydantic's lax mode reads ``gpus: true`` as 1 and ``tokens: .inf`` as infinity; in a
hand-written spec the first is a slip and the second a crash waiting downstream, so both are
refused here for every field of every spec model.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError


def _takes_bool(tp: Any) -> bool:
    """Whether an annotation accepts a boolean (``bool``, or a union or list holding one)."""
    if tp is bool or tp is Any:
        return True
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType, typing.Annotated, list):
        return any(_takes_bool(a) for a in typing.get_args(tp))
    return False


class SpecModel(BaseModel):
    """Base for all spec models: unknown keys are errors; instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False,
                              allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _booleans_are_not_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool) and info.field_name is not None:
            field = cls.model_fields.get(info.field_name)
            if field is not None and not _takes_bool(field.annotation):
                raise PydanticCustomError("bool_type_mismatch", "true/false is not allowed here")
        return value
