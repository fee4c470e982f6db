"""The price book: the catalog's ``prices.yaml``, optionally overridden by the spec's file.

The override has the same shape as ``prices.yaml`` (a top-level ``items`` mapping) and is
merged by item id: a listed id replaces the listed fields of the built-in entry (e.g. only
``usd`` and ``date``), a new id adds an entry (then ``name``, ``unit``, ``sources`` and
``status`` are required). A new id must be one the BOM can look up (``priceable_ids``: a
catalog switch, optic, medium, NIC, storage or head-node id, ``<gpu server>-<gpu family>``
such as ``xe9680-h200-sxm``, or the system id of a server with one GPU option such as
``dgx-h100``); any other id -- a typo, or an id from an older price book
such as ``xe9680`` -- is an error with a did-you-mean, never a price silently unused.
Entries from the override say so in their source.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from generator.catalog.load import Catalog
from generator.errors import PodplanError, Problem
from generator.plan.catalog_models import MediaModel, OpticModel, PriceItem
from generator.spec import safeyaml
from generator.spec.limits import BOUNDS
from generator.spec.load import LoadedLines, read_text, yaml_problem
from generator.spec.messages import did_you_mean
from generator.spec.messages import problems as retell

FAMILY = "prices"


@dataclass(frozen=True)
class PriceBook:
    """Prices by id, and where each one came from."""

    items: dict[str, PriceItem]
    overridden: frozenset[str]
    override_file: str | None
    optics: dict[str, OpticModel]
    media: dict[str, MediaModel]
    psus: dict[str, int]
    nics: dict[str, str]
    servers: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Server id -> (name, fabric NIC rate in Gb/s): the compute line names the system and
    says when the catalog cables its fabric with faster parts than the server's NICs."""
    nic_gbps: dict[str, int] = field(default_factory=dict)
    part_numbers: dict[str, str] = field(default_factory=dict)
    """Catalog id -> orderable part number (NIC, optic and switch OPNs) where the catalog
    has one; Dell servers, switches and optics are sold by proposal and have none."""
    warnings: dict[str, str] = field(default_factory=dict)
    """Id -> what the override left to the built-in price (``partial_storage_prices``)."""

    @property
    def notes(self) -> list[str]:
        """The warnings as sentences that name the prices file (BOM notes, plan warnings)."""
        where = self.override_file
        return [f"prices file {where} {self.warnings[k]}" for k in sorted(self.warnings)]

    @property
    def shared_parts(self) -> set[str]:
        """Twin-port modules: one module serves the two ports of a cage."""
        return {k for k, o in self.optics.items() if o.ports_400g == 2}

    def get(self, item_id: str) -> PriceItem | None:
        return self.items.get(item_id)

    def source(self, item_id: str) -> str:
        item = self.items[item_id]
        where = f"prices file {self.override_file}" if item_id in self.overridden else "prices.yaml"
        return f"{where}: {item_id}; {item.citation()}"

    @property
    def description(self) -> str:
        if self.override_file:
            return f"catalog prices.yaml, overridden by {self.override_file}"
        return "catalog prices.yaml"


def _read_override(path: Path) -> tuple[dict[str, Any], LoadedLines]:
    if not path.is_file():
        raise PodplanError(
            "price book not found",
            str(path),
            [
                Problem(
                    path="prices",
                    message=f"no file at {path}",
                    allowed="a YAML file path, relative to the spec file",
                )
            ],
        )
    text = read_text(path, "price book")  # the spec's hardened reader: size, UTF-8, aliases
    try:
        doc, lines = safeyaml.load(text)
    except yaml.YAMLError as exc:
        problem = yaml_problem(exc, text)
        problem = problem if problem.path else replace(problem, path="prices")
        raise PodplanError("price book is not valid YAML", str(path), [problem]) from None
    items = doc.get("items") if isinstance(doc, dict) else None
    if not isinstance(items, dict) or not all(isinstance(v, dict) for v in items.values()):
        raise PodplanError(
            "price book needs a top-level 'items' mapping of id -> fields",
            str(path),
            [
                Problem(
                    path="items",
                    message="missing or not a mapping of mappings",
                    hint="copy the shape of generator/catalog/data/prices.yaml",
                )
            ],
        )
    return items, LoadedLines(lines)


def _line_in_item(lines: LoadedLines, item_id: str, loc: tuple[str | int, ...]) -> int | None:
    return lines.line_of(("items", item_id, *loc))


def priceable_ids(catalog: Catalog) -> set[str]:
    """Every id a BOM line can be priced under (see the module docstring)."""
    ids = set(catalog.raw(FAMILY)["items"])
    for family in ("switches", "optics", "media", "nics", "storage"):
        ids |= set(catalog.raw(family)["items"])
    for sid, server in catalog.servers.items():
        if server.role == "gpu-compute":
            ids |= {f"{sid}-{gpu.rsplit('-', 1)[0]}" for gpu in server.gpu_options}
        if server.role != "gpu-compute" or len(server.gpu_options) == 1:
            ids.add(sid)  # head nodes, and systems with one GPU option (DGX: ``dgx-h100``)
    # racks at any facility.rack_units height (``rack-48u``; bom.build prices them by height)
    height = BOUNDS[("Facility", "rack_units")]
    ids |= {f"rack-{u}u" for u in range(int(height.low), int(height.high) + 1)}
    return ids


def _unknown_ids(catalog: Catalog, lines: LoadedLines, ids: list[str]) -> list[Problem]:
    known = priceable_ids(catalog)
    unknown = [i for i in ids if i not in known]
    if not unknown:
        return []
    choices = sorted(known)
    return [
        Problem(
            path=f"items.{i}",
            message=f"unknown price id '{i}': no BOM line is priced under it",
            line=lines.line_of(("items", i)),
            hint=_hint(i, choices),
        )
        for i in unknown
    ]


FIELD_SYNONYMS = {"usd_per_tb": "usd_per_raw_tb", "usd_per_raw_tib": "usd_per_raw_tb",
                  "usd_per_node": "usd_base", "price": "usd", "cost": "usd", "usd_each": "usd",
                  "usd_per_meter": "usd_per_m", "usd_per_metre": "usd_per_m"}


def _field_hint(key: str, known: list[str]) -> str | None:
    if key in FIELD_SYNONYMS:
        return f"did you mean '{FIELD_SYNONYMS[key]}'?"
    return did_you_mean(key, known)


PRICE_FIELDS = ("usd", "usd_base", "usd_per_m", "usd_per_raw_tb", "fraction_of_hardware")


def _field_problems(lines: LoadedLines, given: dict[str, Any]) -> list[Problem]:
    """Keys of an override entry that are no price-book field, and negative prices. The
    built-in book tolerates extra keys (``PlanItem``), so 'usd_per_tb: 1500' was dropped
    without a word and the built-in price used; 'usd: -5' priced a server at minus $5."""
    known = sorted(set(PriceItem.model_fields) - {"id"})
    out = []
    for item_id, fields in given.items():
        for key, value in fields.items():
            loc = ("items", str(item_id), str(key))
            if str(key) not in known:
                out.append(Problem(
                    path=f"items.{item_id}.{key}", line=lines.line_of(loc),
                    message=f"unknown field '{key}'", allowed=", ".join(known),
                    hint=_field_hint(str(key), known)))
            elif (key in PRICE_FIELDS and isinstance(value, int | float)
                  and not isinstance(value, bool) and value < 0):
                out.append(Problem(
                    path=f"items.{item_id}.{key}", line=lines.line_of(loc),
                    message=f"must not be negative, not {value:g}",
                    allowed="a price of 0 or more (USD)"))
    return out


def _hint(item_id: str, choices: list[str]) -> str:
    """Renamed ids first (``xe9680`` -> ``xe9680-<gpu>``), then a close spelling."""
    renamed = [c for c in choices if c.startswith(f"{item_id}-")]
    if len(renamed) == 1:
        return f"did you mean '{renamed[0]}'?"
    if renamed:
        return "did you mean one of " + ", ".join(f"'{c}'" for c in renamed) + "?"
    return did_you_mean(item_id, choices) or (
        "ids are prices.yaml ids, catalog part ids or <gpu server>-<gpu family>"
    )


STORAGE_FIELDS = ("usd_base", "usd_per_raw_tb")


def partial_storage_prices(
    base: dict[str, dict[str, Any]], given: dict[str, Any]
) -> dict[str, str]:
    """Storage prices the override set only half of, by id: what the prices file "sets ...".

    A storage node costs ``usd_base + usd_per_raw_tb x raw TB``. An override written for the
    old all-in price per raw TB sets only ``usd_per_raw_tb`` and silently got the built-in
    per-node base on top; one that sets only ``usd`` is not used at all. Both still price
    (a quote may well be per TB on a known chassis), so this warns instead of refusing.
    """
    out: dict[str, str] = {}
    for item_id, fields in given.items():
        built_in = base.get(str(item_id)) or {}
        if not all(built_in.get(f) is not None for f in STORAGE_FIELDS):
            continue
        set_ = [f for f in STORAGE_FIELDS if f in fields]
        if len(set_) == 2:
            continue
        if not set_:
            if "usd" not in fields:
                continue
            out[str(item_id)] = (
                f"sets usd for {item_id}, which is not used: a storage "
                f"node is priced as usd_base + usd_per_raw_tb x its raw TB (built-in "
                f"{built_in['usd_base']:,g} USD + {built_in['usd_per_raw_tb']:,g} USD per raw "
                "TB); set those two instead")
            continue
        missing = next(f for f in STORAGE_FIELDS if f not in fields)
        unit = "USD per node" if missing == "usd_base" else "USD per raw TB"
        out[str(item_id)] = (
            f"sets only {set_[0]} for {item_id}: the built-in "
            f"{missing} of {built_in[missing]:,g} {unit} is added to it; set {missing} "
            f"too (0 if your {set_[0]} already includes it)")
    return out


def load_price_book(
    catalog: Catalog, override: Path | None, shown: str | None = None
) -> PriceBook:
    """The built-in price book merged with ``override`` (path already resolved). ``shown``:
    the file as the spec names it, for the BOM's sources and notes (the resolved path put
    the machine's directory into outputs kept in git: /home/alice/... on one checkout)."""
    base = catalog.raw(FAMILY)["items"]
    merged: dict[str, dict[str, Any]] = {k: dict(v or {}) for k, v in base.items()}
    changed: set[str] = set()
    lines = LoadedLines({})
    warnings: dict[str, str] = {}
    if override is not None:
        given, lines = _read_override(override)
        unknown = _unknown_ids(catalog, lines, [str(k) for k in given])
        if unknown:
            raise PodplanError(
                "price book names parts podplan does not know", str(override), unknown
            )
        bad = _field_problems(lines, given)
        if bad:
            raise PodplanError("price book does not validate", str(override), bad)
        warnings = partial_storage_prices(base, given)
        for item_id, fields in given.items():
            merged[str(item_id)] = {**merged.get(str(item_id), {}), **fields}
            changed.add(str(item_id))
    items: dict[str, PriceItem] = {}
    problems: list[Problem] = []
    for item_id, fields in sorted(merged.items()):
        data = {"id": item_id, **fields}
        try:
            items[item_id] = PriceItem.model_validate(data)
        except ValidationError as exc:
            found = retell([dict(e) for e in exc.errors()], data, PriceItem,
                           partial(_line_in_item, lines, item_id))
            problems += [replace(p, path=f"items.{item_id}.{p.path}".rstrip(".")) for p in found]
    if problems:
        where = str(override) if override is not None else "prices.yaml"
        raise PodplanError("price book does not validate", where, problems)
    servers = catalog.servers
    psus = {k: v.psu_count or 0 for k, v in servers.items()}
    raw_nics = catalog.raw("nics")["items"]
    nics = {k: str((v or {}).get("name", k)) for k, v in raw_nics.items()}
    speeds = {k: int((v or {}).get("port_speed_gbps") or 0) for k, v in raw_nics.items()}
    named = {k: (v.name, v.east_west_nic_gbps or 0) for k, v in servers.items()}
    optics = catalog.family("optics", OpticModel)
    return PriceBook(
        items,
        frozenset(changed),
        (shown or str(override)) if override is not None else None,
        optics,
        catalog.family("media", MediaModel),
        psus,
        nics,
        named,
        speeds,
        _part_numbers(catalog, optics),
        warnings,
    )


def _part_numbers(catalog: Catalog, optics: dict[str, OpticModel]) -> dict[str, str]:
    """Orderable part numbers by catalog id: NIC and switch ``opn`` fields, optic OPNs. An
    optic whose OPN is a placeholder ("(Dell SKU per quote)") has none."""
    out: dict[str, str] = {}
    for family in ("nics", "switches"):
        for k, v in catalog.raw(family)["items"].items():
            if (v or {}).get("opn"):
                out[k] = str(v["opn"])
    out.update({k: o.opn for k, o in optics.items() if o.opn and not o.opn.startswith("(")})
    return out
