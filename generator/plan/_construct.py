"""Fast construction of frozen plan models from trusted, already-validated values.

A 2,048-node plan holds ~60,000 links; pydantic's ``model_construct`` spends most of its
time on alias and default handling these models do not use. ``builder(cls)`` returns a
constructor that does what ``model_construct`` does for a plain model (set ``__dict__`` and
the fields-set) and fills defaults; models with aliases, extras, private attributes or
post-init hooks fall back to ``model_construct``. ``tests/unit/test_plan_models_fast.py``
checks both paths give equal objects and dumps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__


def _plain(cls: type[BaseModel]) -> bool:
    fields = cls.model_fields.values()
    return (
        not any(f.alias or f.validation_alias for f in fields)
        and cls.model_config.get("extra") != "allow"
        and not cls.__pydantic_post_init__
        and not cls.__private_attributes__
        and not cls.__pydantic_root_model__
    )


def builder(cls: type[M]) -> Callable[..., M]:
    """A ``model_construct`` equivalent for ``cls``, fast when every field is given."""
    if not _plain(cls):
        return cls.model_construct
    names = tuple(cls.model_fields)
    static = {
        n: f.default
        for n, f in cls.model_fields.items()
        if not f.is_required() and f.default_factory is None
    }
    factories = {n: f.default_factory for n, f in cls.model_fields.items() if f.default_factory}
    count = len(names)
    new = cls.__new__

    def make(**values: Any) -> M:
        if len(values) != count:
            for n, v in static.items():
                values.setdefault(n, v)
            for n, fac in factories.items():
                if n not in values:
                    values[n] = fac()  # type: ignore[call-arg]
        m = new(cls)
        _set(m, "__dict__", values)
        _set(m, "__pydantic_fields_set__", set(values))
        _set(m, "__pydantic_extra__", None)
        _set(m, "__pydantic_private__", None)
        return m

    return make


