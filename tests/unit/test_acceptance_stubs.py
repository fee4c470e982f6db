"""The lab's stub tools print what the parsers read, and the ladder asks for those fields.

The stubs (tests/lab/stubs) stand in for nvidia-smi, dcgmi and ib_write_bw in the lab; here
they run without Slurm (the nccl-tests stubs need scontrol and run in the lab only).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from generator.acceptance.parse.dcgm import parse_dcgm
from generator.acceptance.parse.nvsmi import QUERY_FIELDS, parse_query, parse_topo
from generator.acceptance.parse.perftest import parse_write_bw

STUBS = Path("tests/lab/stubs")
ROLE = Path("ansible/roles/slurm_acceptance")


def _stub(name: str, *args: str, gpus: int = 8) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(map(str, range(gpus))),
           "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([str(STUBS / name), *args], text=True, capture_output=True,
                          env=env, check=False, timeout=60)


def test_the_ladder_asks_nvidia_smi_for_the_fields_the_parser_reads() -> None:
    defaults = yaml.safe_load((ROLE / "defaults/main.yml").read_text())
    assert tuple(defaults["slurm_acceptance_gpu_query_fields"]) == QUERY_FIELDS


def test_stub_nvidia_smi_prints_the_query_and_the_topology() -> None:
    q = _stub("nvidia-smi", f"--query-gpu={','.join(QUERY_FIELDS)}", "--format=csv,nounits")
    parsed = parse_query(q.stdout, "q")
    assert q.returncode == 0 and len(parsed.gpus) == 8 and not parsed.issues
    assert parsed.gpus[7].num("enforced.power.limit") == 700.0
    t = parse_topo(_stub("nvidia-smi", "topo", "-m").stdout, "t")
    assert len(t.gpus) == 8 and t.nics[7] == "mlx5_7" and t.nvlinks("GPU0", "GPU7") == 18
    none = _stub("nvidia-smi", "topo", "-m", gpus=0)
    assert none.returncode != 0 and "No devices were found" in none.stderr


def test_stub_dcgmi_prints_diag_json() -> None:
    rep = parse_dcgm(_stub("dcgmi", "diag", "-r", "2", "-j").stdout, "d")
    assert len(rep.results) == 24 and not rep.not_passed
    membw = parse_dcgm(_stub("dcgmi", "diag", "-r", "memory_bandwidth", "-j").stdout, "m")
    assert {r.test for r in membw.results} == {"memory_bandwidth"}


def test_stub_ib_write_bw_is_slow_on_the_lab_port_only() -> None:
    args = ["--report_gbits", "-s", "1048576", "-n", "5000", "-F", "localhost"]
    fast = parse_write_bw(_stub("ib_write_bw", "-d", "mlx5_2", "-p", "18517", *args).stdout, "f")
    assert fast.gbps == 392.4 and fast.device == "mlx5_2"
    server = _stub("ib_write_bw", "-d", "mlx5_2", "-p", "18517", "--report_gbits")
    assert server.returncode == 0 and "Waiting for client" in server.stdout
    gone = _stub("ib_write_bw", "-d", "mlx5_2", "nosuchhost.invalid")
    assert gone.returncode == 1 and "Couldn't connect" in gone.stderr
