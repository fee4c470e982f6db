"""The sweep's axes, read from the command line and checked against the catalog.

``--gpus`` takes ``LO:HI`` (doubling from LO: 64, 128, 256 ... and always HI itself),
``LO:HI:STEP`` (every STEP GPUs from LO to HI) or a comma list (``64,96,128``). Every count
must be a whole number of servers. ``--gpu`` and ``--cloud`` are comma lists of catalog ids.
A bad value is a ``PodplanError`` naming the option, what is allowed and a did-you-mean.
A spec that only serves needs no ``--gpus`` (each GPU type is sized by its SLOs; count 0 in
the grid) and compares every GPU the server takes unless ``--gpu`` names some.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog.load import Catalog
from generator.errors import PodplanError, Problem
from generator.spec.load import did_you_mean
from generator.spec.models import Spec
from generator.spec.site import Cloud

#: More points than this is almost certainly a typo (and minutes of planning).
MAX_POINTS = 64
GPUS_FORMS = "LO:HI (doubling from LO, HI included), LO:HI:STEP, or a list like 64,128,256"


@dataclass(frozen=True)
class SweepGrid:
    """The points to plan: GPU counts × GPU types (× clouds, when given)."""

    gpus: tuple[int, ...]
    gpu_types: tuple[str, ...]
    clouds: tuple[str, ...] | None
    deadline_hours: float | None


def _fail(option: str, message: str, allowed: str | None = None,
          hint: str | None = None) -> PodplanError:
    return PodplanError("bad sweep option", None,
                        [Problem(path=option, message=message, allowed=allowed, hint=hint)])


def _int(text: str) -> int:
    try:
        value = int(text.strip().replace("_", ""))
    except ValueError:
        raise _fail("--gpus", f"'{text}' is not a whole number", GPUS_FORMS) from None
    if value <= 0:
        raise _fail("--gpus", f"{value} is not a positive GPU count", GPUS_FORMS)
    return value


def gpu_counts(text: str) -> tuple[int, ...]:
    """The GPU counts ``text`` names, sorted, without repeats."""
    text = text.strip()
    if "," in text or ":" not in text:
        counts = {_int(t) for t in text.split(",") if t.strip()}
    else:
        parts = text.split(":")
        if len(parts) > 3:
            raise _fail("--gpus", f"'{text}' has too many ':'", GPUS_FORMS)
        lo, hi = _int(parts[0]), _int(parts[1])
        if lo > hi:
            raise _fail("--gpus", f"'{text}' runs backwards ({lo} > {hi})", GPUS_FORMS,
                        f"did you mean {hi}:{lo}?")
        if len(parts) == 3:
            counts = set(range(lo, hi + 1, _int(parts[2])))
        else:
            counts, n = set(), lo
            while n < hi:
                counts.add(n)
                n *= 2
        counts.add(hi)
    if not counts:
        raise _fail("--gpus", "no GPU count given", GPUS_FORMS)
    return tuple(sorted(counts))


def _hint(item: str, known: list[str]) -> str | None:
    starts = [k for k in known if k.startswith(item)]
    if len(starts) == 1:
        return f"did you mean '{starts[0]}'?"
    return did_you_mean(item, known)


def _ids(option: str, text: str, known: list[str], what: str,
         elsewhere: dict[str, str] | None = None) -> tuple[str, ...]:
    """Comma-separated ids, each in ``known``; ``elsewhere`` explains ids known but not allowed."""
    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        if item not in known:
            why = (elsewhere or {}).get(item, f"unknown {what} '{item}'")
            raise _fail(option, why, ", ".join(known), _hint(item, known))
        if item not in out:
            out.append(item)
    if not out:
        raise _fail(option, f"no {what} given", ", ".join(known))
    return tuple(out)


def parse_grid(spec: Spec, catalog: Catalog, gpus: str | None, gpu: str | None,
               cloud: str | None, deadline_hours: float | None) -> SweepGrid:
    """Check the options against the spec's server and the catalog; defaults from the spec."""
    server = catalog.servers[spec.hardware.server]
    other = {g: f"{server.name} does not take GPU '{g}'" for g in catalog.gpus}
    serving = not spec.training
    default = tuple(server.gpu_options) if serving else (spec.hardware.gpu,)
    gpu_types = (_ids("--gpu", gpu, list(server.gpu_options), "GPU", other)
                 if gpu else default)
    counts = gpu_counts(gpus) if gpus else (spec.hardware.gpus or 0,)
    if counts == (0,) and not serving:
        raise _fail("--gpus", "the spec fixes no GPU count, so the sweep needs one", GPUS_FORMS)
    odd = [n for n in counts if n and n % server.gpu_slots]
    if odd:
        raise _fail("--gpus", f"{', '.join(map(str, odd))}: not a multiple of "
                    f"{server.gpu_slots} (GPUs per {server.name})",
                    f"multiples of {server.gpu_slots}")
    clouds = _ids("--cloud", cloud, [c.value for c in Cloud], "cloud") if cloud else None
    points = len(counts) * len(gpu_types) * (len(clouds) if clouds else 1)
    if points > MAX_POINTS:
        raise _fail("--gpus", f"{points} points to plan; at most {MAX_POINTS}",
                    hint="use a coarser step or fewer GPU types")
    if deadline_hours is not None and serving:
        raise _fail("--deadline-hours", "the spec only serves: there is no run to time",
                    hint="a serving sweep compares GPU types by their SLOs and cost")
    if deadline_hours is not None and deadline_hours <= 0:
        raise _fail("--deadline-hours", f"{deadline_hours:g} is not a positive number of hours")
    deadline = deadline_hours
    if deadline is None:
        given = [w.deadline_hours for w in spec.training if w.deadline_hours]
        deadline = min(given) if given else None
    return SweepGrid(counts, gpu_types, clouds, deadline)
