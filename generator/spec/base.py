"""The base of every spec model: unknown keys are errors, instances are immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SpecModel(BaseModel):
    """Base for all spec models: unknown keys are errors; instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)
