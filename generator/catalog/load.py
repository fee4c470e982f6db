"""Load catalog families from the YAML data files shipped inside the package."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from generator.catalog.models import Gpu, ModelArchitecture, Server, Source
from generator.errors import PodplanError, Problem

M = TypeVar("M", bound=BaseModel)

# libyaml's parser when PyYAML has it (same safe constructors, ~10x faster on the catalog)
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

DATA_DIR = Path(str(resources.files("generator.catalog") / "data"))


@cache
def read_family(family: str, data_dir: Path = DATA_DIR) -> dict[str, Any]:
    """Raw mapping of one data file (``family``, ``items`` and any family-level keys)."""
    path = data_dir / f"{family}.yaml"
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except FileNotFoundError:
        raise PodplanError(f"catalog family '{family}' is missing", source=str(path)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), dict):
        raise PodplanError("catalog file needs a top-level 'items' mapping", source=str(path))
    return doc


def load_items(family: str, model: type[M], data_dir: Path = DATA_DIR) -> dict[str, M]:
    """Validate every item of a family into ``model``; the mapping key becomes ``id``."""
    doc = read_family(family, data_dir)
    out: dict[str, M] = {}
    problems: list[Problem] = []
    for item_id, fields in sorted(doc["items"].items()):
        try:
            out[item_id] = model.model_validate({"id": item_id, **(fields or {})})
        except ValidationError as exc:
            for e in exc.errors():
                path = ".".join(str(p) for p in (item_id, *e["loc"]))
                problems.append(Problem(path=path, message=e["msg"]))
    if problems:
        raise PodplanError(
            "catalog data does not validate", str(data_dir / f"{family}.yaml"), problems
        )
    return out


class Catalog:
    """All catalog families, loaded lazily and cached; one copy of every figure."""

    def __init__(self, data_dir: Path = DATA_DIR) -> None:
        self.data_dir = data_dir
        self._cache: dict[tuple[str, type[BaseModel]], dict[str, Any]] = {}

    def family(self, family: str, model: type[M]) -> dict[str, M]:
        """Items of ``family`` validated as ``model`` (cached per family and model)."""
        key = (family, model)
        if key not in self._cache:
            self._cache[key] = load_items(family, model, self.data_dir)
        return self._cache[key]

    def raw(self, family: str) -> dict[str, Any]:
        """The whole data file, for family-level keys such as rules or guidance tables."""
        return read_family(family, self.data_dir)

    @property
    def gpus(self) -> dict[str, Gpu]:
        return self.family("gpus", Gpu)

    @property
    def servers(self) -> dict[str, Server]:
        return self.family("servers", Server)

    @property
    def models(self) -> dict[str, ModelArchitecture]:
        return self.family("models", ModelArchitecture)

    @property
    def sources(self) -> dict[str, Source]:
        return self.family("sources", Source)


@cache
def default_catalog() -> Catalog:
    """The catalog shipped with podplan."""
    return Catalog()
