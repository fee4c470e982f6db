"""Check a spec's catalog references and cross-field rules against the real catalog.

Pydantic checks shapes; this checks meaning: that ids exist (with a did-you-mean from the
catalog's own list), that the GPU fits the server, that the NIC count is one the server
offers, and that a referenced price book exists; then (``spec.checks.pins``) that the precision is
one the GPU has and that pinned layouts can exist.
"""

from __future__ import annotations

from pathlib import Path

from generator.catalog.load import Catalog
from generator.errors import PodplanError, Problem
from generator.spec import limits
from generator.spec.checks.pins import precision_problems, workload_problems
from generator.spec.load import LoadedSpec
from generator.spec.messages import did_you_mean, format_path
from generator.spec.models import InlineArchitecture


def _unknown(
    loaded: LoadedSpec, loc: tuple[str | int, ...], what: str, value: str, ids: list[str]
) -> Problem:
    return Problem(
        path=format_path(loc),
        message=f"unknown {what} '{value}'",
        line=loaded.lines.line_of(loc),
        allowed=", ".join(sorted(ids)),
        hint=did_you_mean(value, ids),
    )


def _model_problems(loaded: LoadedSpec, catalog: Catalog) -> list[Problem]:
    models = list(catalog.models)
    out = []
    for i, w in enumerate(loaded.spec.workloads):
        if not isinstance(w.model, InlineArchitecture) and w.model not in catalog.models:
            out.append(_unknown(loaded, ("workloads", i, "model"), "model", w.model, models))
    return out


def _hardware_problems(loaded: LoadedSpec, catalog: Catalog) -> list[Problem]:
    hw = loaded.spec.hardware
    out: list[Problem] = []
    compute = [k for k, s in catalog.servers.items() if s.role == "gpu-compute"]
    if hw.server not in compute:
        what = "GPU server" if hw.server not in catalog.servers else "GPU server (a head node)"
        out.append(_unknown(loaded, ("hardware", "server"), what, hw.server, compute))
    if hw.gpu not in catalog.gpus:
        out.append(_unknown(loaded, ("hardware", "gpu"), "GPU", hw.gpu, list(catalog.gpus)))
    if out:
        return out
    server = catalog.servers[hw.server]
    if hw.gpu not in server.gpu_options:
        loc: tuple[str | int, ...] = ("hardware", "gpu")
        out.append(
            Problem(
                path=format_path(loc),
                message=f"{server.name} does not take GPU '{hw.gpu}'",
                line=loaded.lines.line_of(loc),
                allowed=", ".join(server.gpu_options),
            )
        )
    if (
        hw.east_west_nics_per_node is not None
        and hw.east_west_nics_per_node not in server.east_west_nic_options
    ):
        loc = ("hardware", "east_west_nics_per_node")
        out.append(
            Problem(
                path=format_path(loc),
                message=f"{server.name} offers {server.east_west_nic_options} east-west NICs "
                f"({server.east_west_nic_gbps:g} Gb/s each)",
                line=loaded.lines.line_of(loc),
                allowed=", ".join(str(n) for n in server.east_west_nic_options),
            )
        )
    return out + _node_limit_problems(loaded, server.gpu_slots)


def _node_limit_problems(loaded: LoadedSpec, gpus_per_node: int) -> list[Problem]:
    """Compute, spare and growth nodes together within ``limits.MAX_NODES``."""
    return [
        Problem(path=format_path(v.loc), message=v.message, line=loaded.lines.line_of(v.loc),
                allowed=v.allowed)
        for v in limits.node_violations(loaded.spec, gpus_per_node)
    ]


def _ethernet_problems(loaded: LoadedSpec, catalog: Catalog) -> list[Problem]:
    """``ethernet.north_south_nic`` names a catalog NIC (whether it plugs into the front-end
    leaves is checked by the plan, which knows the cages)."""
    nic = loaded.spec.ethernet.north_south_nic
    nics = list(catalog.raw("nics")["items"])
    if nic is None or nic in nics:
        return []
    return [_unknown(loaded, ("ethernet", "north_south_nic"), "NIC", nic, nics)]


def _fabric_switch_problems(loaded: LoadedSpec, catalog: Catalog) -> list[Problem]:
    """``fabric.switch`` names a catalog InfiniBand switch (whether it fits the nodes' NIC
    generation is checked by the plan: ``plan/network/fabric_parts``)."""
    switch = loaded.spec.fabric.switch
    items = catalog.raw("switches")["items"]
    ib = [k for k, v in items.items() if v.get("kind") == "infiniband"]
    if switch is None or switch in ib:
        return []
    return [_unknown(loaded, ("fabric", "switch"), "InfiniBand switch", switch, ib)]


def prices_path(loaded: LoadedSpec) -> Path | None:
    """The price-book override, resolved relative to the spec file."""
    if loaded.spec.prices is None:
        return None
    return (Path(loaded.path).parent / loaded.spec.prices).resolve()


def _prices_problems(loaded: LoadedSpec) -> list[Problem]:
    try:
        path = prices_path(loaded)
        if path is None or path.is_file():
            return []
    except (OSError, ValueError) as exc:
        return [
            Problem(path="prices", message=f"not a usable file path ({exc})",
                    line=loaded.lines.line_of(("prices",)),
                    allowed="a YAML file path, relative to the spec file")
        ]
    return [
        Problem(
            path="prices",
            message=f"price book not found: {path}",
            line=loaded.lines.line_of(("prices",)),
            allowed="a YAML file path, relative to the spec file",
        )
    ]


def site_calibration_path(loaded: LoadedSpec) -> Path | None:
    """The site calibration file, resolved relative to the spec file."""
    if loaded.spec.site_calibration is None:
        return None
    return (Path(loaded.path).parent / loaded.spec.site_calibration).resolve()


def _site_calibration_problems(loaded: LoadedSpec) -> list[Problem]:
    allowed = "a file written by podplan calibrate, path relative to the spec file"
    line = loaded.lines.line_of(("site_calibration",))
    try:
        path = site_calibration_path(loaded)
        if path is None or path.is_file():
            return []
    except (OSError, ValueError) as exc:
        return [Problem(path="site_calibration", message=f"not a usable file path ({exc})",
                        line=line, allowed=allowed)]
    return [Problem(path="site_calibration", message=f"site calibration not found: {path}",
                    line=line, allowed=allowed)]


def check_references(loaded: LoadedSpec, catalog: Catalog) -> None:
    """Raise a located ``PodplanError`` if any catalog reference or cross-field rule fails."""
    problems = [
        *_model_problems(loaded, catalog),
        *_hardware_problems(loaded, catalog),
        *_ethernet_problems(loaded, catalog),
        *_fabric_switch_problems(loaded, catalog),
        *_prices_problems(loaded),
        *_site_calibration_problems(loaded),
    ]
    if not problems:  # pins are checked against a model and hardware that exist
        problems = [*precision_problems(loaded, catalog), *workload_problems(loaded, catalog)]
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        raise PodplanError(f"spec is not valid ({len(problems)} {noun})", loaded.path, problems)
