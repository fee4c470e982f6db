"""Fixtures for the Pulumi tests: the example specs' plans, their generated stack configs, and
one mocked run of each stack program per (example, cloud), shared by all tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import pipeline
from generator.emit.pulumi import emit_pulumi
from generator.plan.models import CloudEquivalent, ClusterPlan
from tests.conftest import EXAMPLES, REPO
from tests.pulumi.harness import StackRun, run_program

ALL_CLOUDS = ("aws", "gcp", "azure")


LARGE_NODES = 256
"""Stacks above this many GPU nodes take tens of seconds under mocks: marked slow."""


def example_clouds() -> list[tuple[str, str]]:
    """(example file, cloud) for every cloud each example spec asks for."""
    pairs = []
    for path in EXAMPLES:
        spec = yaml.safe_load(path.read_text()) or {}
        clouds = (spec.get("provisioning") or {}).get("clouds", list(ALL_CLOUDS))
        pairs += [(str(path.relative_to(REPO)), c) for c in clouds]
    return pairs


def _large(spec: str) -> bool:
    """Whether the spec fixes a GPU count above LARGE_NODES nodes (cheap, no sizing)."""
    data = yaml.safe_load((REPO / spec).read_text()) or {}
    gpus = (data.get("hardware") or {}).get("gpus") or 0
    return isinstance(gpus, int) and gpus > 8 * LARGE_NODES


EXAMPLE_CLOUDS = example_clouds()
EXAMPLE_CLOUD_PARAMS = [
    pytest.param(
        spec,
        cloud,
        id=f"{Path(spec).stem}-{cloud}",
        marks=[pytest.mark.slow] if _large(spec) else [],
    )
    for spec, cloud in EXAMPLE_CLOUDS
]


@pytest.fixture(scope="session")
def plan_of() -> Callable[[str], ClusterPlan]:
    """The ClusterPlan of an example spec (built once per session)."""
    cache: dict[str, ClusterPlan] = {}

    def get(spec: str) -> ClusterPlan:
        if spec not in cache:  # tests run from the repo root (tests/conftest.py)
            cache[spec] = pipeline.plan(pipeline.load_checked(spec))
        return cache[spec]

    return get


def equivalent(plan: ClusterPlan, cloud: str) -> CloudEquivalent:
    for ce in plan.cloud:
        if ce.provider == cloud:
            return ce
    pytest.fail(f"{plan.name}: the spec asks for {cloud}, but the plan has no {cloud} equivalent")


def stack_config(plan: ClusterPlan, cloud: str) -> dict[str, Any]:
    """The ``config:`` mapping of the generated ``Pulumi.<name>.yaml`` for ``cloud``."""
    files = {f.path: f.content for f in emit_pulumi(plan)}
    text = files[f"stacks/{cloud}/Pulumi.{plan.name}.yaml"]
    config = yaml.safe_load(text)["config"]
    assert isinstance(config, dict)
    return config


@pytest.fixture(scope="session")
def stack_run(plan_of: Callable[[str], ClusterPlan]) -> Callable[[str, str], StackRun]:
    """The mocked run of ``stacks/<cloud>`` with an example's generated config (cached)."""
    cache: dict[tuple[str, str], StackRun] = {}

    def get(spec: str, cloud: str) -> StackRun:
        if (spec, cloud) not in cache:
            plan = plan_of(spec)
            equivalent(plan, cloud)
            cache[(spec, cloud)] = run_program(cloud, stack_config(plan, cloud))
        return cache[(spec, cloud)]

    return get


def stack_file(cloud: str) -> Path:
    return REPO / "stacks" / cloud / "Pulumi.yaml"
