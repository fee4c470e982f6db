"""The fast constructor gives the same objects as pydantic's model_construct."""

from __future__ import annotations

import gc

import pytest
from pydantic import BaseModel, ConfigDict, Field

from generator.gcpause import gc_paused
from generator.plan._construct import builder
from generator.plan.models import Addresses, FabricAddress, Link, Node


def test_builder_matches_model_construct_for_links() -> None:
    fields = {
        "network": "compute",
        "a": "gpu001",
        "a_port": "mlx5_0",
        "b": "ib-leaf-01",
        "b_port": "1/1",
        "speed_gbps": 400,
        "a_cage": "OSFP-RHS",
        "b_cage": "OSFP",
        "media": "ndr-sr4-node",
        "length_m": 7.0,
        "part_number": "MFP7E10-N007",
        "a_part": "x",
        "b_part": "y",
        "cable": "z",
    }
    fast = builder(Link)(**fields)
    slow = Link.model_construct(**fields)
    assert fast == slow
    assert fast.model_dump_json() == slow.model_dump_json()
    assert Link.model_validate(fast.model_dump()) == fast


def test_builder_fills_defaults_and_factories() -> None:
    a = builder(Addresses)(mgmt="10.0.0.10/24")
    assert a == Addresses(mgmt="10.0.0.10/24")
    b = builder(Addresses)()
    c = builder(Addresses)()
    assert b.fabric == [] and b.fabric is not c.fabric
    fa = builder(FabricAddress)(rail=0, device="mlx5_0", address="10.1.0.10/24")
    n = builder(Node)(
        name="gpu001",
        role="compute",
        model="xe9680",
        rack="r01",
        u=1,
        height_u=6,
        power_kw=12.5,
        addresses=builder(Addresses)(fabric=[fa]),
    )
    assert n == Node.model_validate(n.model_dump())


def test_models_with_aliases_fall_back_to_model_construct() -> None:
    class Aliased(BaseModel):
        model_config = ConfigDict(frozen=True)
        x: int = Field(alias="y")

    assert builder(Aliased) == Aliased.model_construct


def test_gc_is_paused_and_restored() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_command_runs_with_the_collector_paused_and_gives_it_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``main`` pauses the cycle collector for the command; an in-process caller (the CLI
    tests) gets it back enabled, as it was."""
    from generator import cli, console

    seen: list[bool] = []

    def run(command: object, argv: object) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(console, "run", run)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert (exit_.value.code, seen, gc.isenabled()) == (0, [False], True)
