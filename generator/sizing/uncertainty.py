"""How sure an estimate is: a band from the calibration residuals of its regime.

``benchmarks/fit.py`` writes ``catalog/data/uncertainty.yaml``: for every regime
(framework x kind x scale x GPU, and whether the data are short unpacked samples or full
sequences, two regimes the model handles very differently) that calibration rows fall in,
the 10th and 90th percentiles of their **cross-validated** errors (each row predicted by the
model refitted without its publication), expressed on the estimate's headline figure (time
for training, output tokens/s for inference), with a floor for run-to-run noise. An
estimate takes the most specific regime with enough rows: framework x kind x scale x GPU,
else framework x kind x GPU. If neither has, the estimate is outside every calibrated
regime: it gets the band of all cross-validated rows of its data class, ``calibrated:
false`` and a note saying what was never measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from generator.errors import PodplanError

_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
UNCERTAINTY_FILE = Path(str(resources.files("generator.catalog") / "data" / "uncertainty.yaml"))
ANY = "any"
SCALES = ((8, "1 node"), (256, "2-32 nodes"))
LARGE = "> 32 nodes"
KIND_CLASS = {"pretrain": "pretrain", "sft": "sft", "lora": "peft", "ptuning": "peft",
              "inference": "inference"}
SHORT_SAMPLE_TOKENS = 1024
"""Unpacked samples shorter than this on average are their own data class: per-sequence
overheads, not GEMMs, set the pace there."""
DATA_CLASSES = ("full sequences", "short samples")
MOE_PREFIX = "moe-"
MOE_ALL_ROWS = "moe"
"""The ``all_rows`` key of every MoE training row (the uncalibrated MoE band)."""
INFERENCE_ALL_ROWS = "inference"
"""The ``all_rows`` key of every serving row. Serving rows are full sequences too, so keyed by
data class they would share (and overwrite) dense training's band: an uncalibrated dense
estimate got the serving spread."""
ALL_ROWS_KEYS = (*DATA_CLASSES, MOE_ALL_ROWS, INFERENCE_ALL_ROWS)


def data_class(sample_tokens: float | None) -> str:
    """``short samples`` for unpacked data averaging under 1,024 tokens, else full."""
    short = sample_tokens is not None and sample_tokens < SHORT_SAMPLE_TOKENS
    return DATA_CLASSES[1] if short else DATA_CLASSES[0]


def scale_of(gpus: int) -> str:
    """Scale class by GPU count (8-GPU nodes: one node, up to 32 nodes, more)."""
    for limit, name in SCALES:
        if gpus <= limit:
            return name
    return LARGE


@dataclass(frozen=True, slots=True)
class Regime:
    """Where an estimate (or a calibration row) sits."""

    framework: str
    kind: str
    scale: str
    gpu: str
    data: str = DATA_CLASSES[0]

    @classmethod
    def of(cls, framework: str, kind: str, gpus: int, gpu: str,
           sample_tokens: float | None = None, moe: bool = False) -> Regime:
        """``moe``: a mixture-of-experts model, its own kind class (``moe-pretrain``):
        its errors come from other physics (all-to-all, routing) than a dense model's."""
        kind_class = KIND_CLASS.get(kind, kind)
        return cls(framework, MOE_PREFIX + kind_class if moe else kind_class,
                   scale_of(gpus), gpu, data_class(sample_tokens))

    @property
    def fallback(self) -> str:
        """The ``all_rows`` band an uncalibrated estimate of this regime gets: its own fit
        stage's rows (MoE training, serving), or dense training's rows of its data class."""
        if self.kind.startswith(MOE_PREFIX):
            return MOE_ALL_ROWS
        return INFERENCE_ALL_ROWS if self.kind == INFERENCE_ALL_ROWS else self.data

    def levels(self) -> list[Regime]:
        """This regime, then the coarser ones it may fall back to (most specific first)."""
        return [self, Regime(self.framework, self.kind, ANY, self.gpu, self.data)]

    def text(self) -> str:
        return f"{self.framework} {self.kind} on {self.gpu} ({self.scale}, {self.data})"


@dataclass(frozen=True, slots=True)
class Band:
    """Relative band around an estimate, and what it rests on."""

    low_pct: float
    high_pct: float
    similar: int
    calibrated: bool
    regime: Regime | None = None

    def text(self) -> str:
        """``-12 %/+18 %, 14 similar measurements``."""
        what = (f"{self.similar} similar measurement{'s' if self.similar != 1 else ''}"
                if self.calibrated else "outside calibration")
        return f"{self.low_pct:+.0f} %/{self.high_pct:+.0f} %, {what}".replace("-", "\u2212")


@dataclass(frozen=True, slots=True)
class Table:
    """The fitted bands, by regime."""

    min_similar: int
    bands: dict[Regime, Band]
    everything: dict[str, Band]
    """All rows' band per data class (what an uncalibrated estimate gets)."""

    def band(self, regime: Regime) -> Band:
        """The most specific calibrated band, else the all-rows band marked uncalibrated."""
        for level in regime.levels():
            got = self.bands.get(level)
            if got is not None and got.similar >= self.min_similar:
                return got
        e = (self.everything.get(regime.fallback) or self.everything.get(regime.data)
             or self.everything[DATA_CLASSES[0]])
        return Band(e.low_pct, e.high_pct, e.similar, False, None)


def from_mapping(doc: dict[str, Any]) -> Table:
    """Build the table from ``uncertainty.yaml``'s mapping."""
    try:
        bands = {}
        for row in doc["regimes"]:
            r = Regime(str(row["framework"]), str(row["kind"]), str(row["scale"]),
                       str(row["gpu"]), str(row.get("data", DATA_CLASSES[0])))
            bands[r] = Band(float(row["low_pct"]), float(row["high_pct"]), int(row["rows"]),
                            True, r)
        everything = {str(d): Band(float(a["low_pct"]), float(a["high_pct"]), int(a["rows"]),
                                   False) for d, a in doc["all_rows"].items()}
        return Table(int(doc["min_similar"]), bands, everything)
    except (KeyError, TypeError, ValueError) as exc:
        raise PodplanError(f"uncertainty data is malformed ({exc!r})",
                           str(UNCERTAINTY_FILE)) from None


@cache
def default_table() -> Table:
    """The shipped bands."""
    # libyaml when built (as the catalog reads its files): the same document, ~10x faster
    doc = yaml.load(UNCERTAINTY_FILE.read_text(encoding="utf-8"), Loader=_LOADER)
    if not isinstance(doc, dict):
        raise PodplanError("uncertainty data must be a mapping", str(UNCERTAINTY_FILE))
    return from_mapping(doc)


def outside_note(regime: Regime) -> str:
    """What the note says when no calibrated regime covers an estimate."""
    return (f"outside every calibrated regime: too few published measurements of "
            f"{regime.framework} {regime.kind} on {regime.gpu} ({regime.data}); the band is "
            f"the spread of all cross-validated calibration errors on {_rows_of(regime)}")


def _rows_of(regime: Regime) -> str:
    named = {MOE_ALL_ROWS: "MoE training", INFERENCE_ALL_ROWS: "serving"}
    return named.get(regime.fallback, f"dense training ({regime.data})")
