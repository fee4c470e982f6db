"""What the cloud-init lab boots is what the stack programs render: the lab only moves the
address ranges into its link-local network (keys the programs declare) and reads the user
data, the munge key and the node names off the mocked resources. Runs without root."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from generator.plan.models import ClusterPlan
from tests.cloudlab.render import LAB_NETWORKS, LabHost, head_address, render, write_seeds
from tests.conftest import REPO
from tests.pulumi.conftest import stack_config, stack_file

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SPEC = "tests/cloudlab/cloudlab.yaml"


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_lab_renders_the_programs_user_data(
    cloud: str, plan_of: Callable[[str], ClusterPlan]
) -> None:
    plan = plan_of(SPEC)
    config = stack_config(plan, cloud)
    declared = yaml.safe_load(stack_file(cloud).read_text())["config"]
    assert {k.split(":", 1)[1] for k in LAB_NETWORKS[cloud]} <= set(declared)
    r = render(cloud, config)
    assert r.head_user_data.startswith("#cloud-config\n")
    assert r.compute_user_data.startswith("#cloud-config\n")
    assert f"PODPLAN_HEAD_ADDRESS={head_address(cloud)}\n" in r.compute_user_data
    assert f"({head_address(cloud)})" in r.head_user_data  # SlurmctldHost
    assert len(r.compute_names) == 2 and r.head_name == "cloudlab-head"
    assert len(base64.b64decode(r.munge_key_b64)) == 1024
    assert r.munge_key_b64 not in r.head_user_data + r.compute_user_data


def test_seeds_carry_the_user_data_untouched(tmp_path: Path) -> None:
    host = LabHost("aws", "aws-gpu1", "169.254.78.40", "c-gpu-001", "#cloud-config\n{}\n", None, [])
    root = write_seeds(tmp_path / "seeds", [host])
    seed = root / "aws-gpu1"
    assert (seed / "nocloud/user-data").read_text() == host.user_data
    assert (seed / "address").read_text() == "169.254.78.40/26\n"
    assert (seed / "hostname").read_text() == "ip-169-254-78-40\n"
    assert (seed / "nocloud/vendor-data").read_bytes() == (
        REPO / "tests/cloudlab/vendor-data"
    ).read_bytes()
    assert not (seed / "cloud/munge-key").exists()  # the lab's "access denied"
