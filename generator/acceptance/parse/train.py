"""Step times from a training log: Megatron-LM and NeMo, as they print them.

Megatron-LM (``megatron/training/training.py``, ``training_log``)::

     iteration 10/ 20 | consumed samples: ... | elapsed time per iteration (ms): 1234.5 | ...

(newer releases print ``1234.5/1230.2``: this interval, then the running mean). NeMo 2
prints ``... | global_step: 9 | reduced_train_loss: 1.31 | train_step_timing in s: 1.234``
and NeMo 1's progress bar ``train_step_timing in s=1.234``. The first steps include
compilation and warm-up, so the step time is the median after dropping them.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from generator.acceptance.parse import Issue

MEGATRON = re.compile(r"elapsed time per iteration \(ms\):\s*([\d.]+)")
NEMO = re.compile(r"train_step_timing in s[:=]\s*([\d.]+)")
WARMUP_STEPS = 3
"""Steps dropped before the median (compilation, NCCL set-up, allocator warm-up)."""


@dataclass
class StepLog:
    steps_s: list[float] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    @property
    def step_s(self) -> float | None:
        """Median step time after the warm-up steps (all steps when there are few)."""
        if not self.steps_s:
            return None
        kept = self.steps_s[WARMUP_STEPS:] if len(self.steps_s) > WARMUP_STEPS + 1 \
            else self.steps_s[1:] or self.steps_s
        return statistics.median(kept)


def parse_steps(text: str, file: str) -> StepLog:
    log = StepLog()
    for line in text.splitlines():
        if m := MEGATRON.search(line):
            log.steps_s.append(float(m[1]) / 1000)
        elif m := NEMO.search(line):
            log.steps_s.append(float(m[1]))
    if not log.steps_s:
        log.issues.append(Issue(file, None, "no step times (Megatron 'elapsed time per "
                                            "iteration (ms)' or NeMo 'train_step_timing in s')"))
    return log
