"""The lab's stub tools print what the parsers read, and the ladder asks for those fields.

The stubs (tests/lab/stubs) stand in for nvidia-smi, dcgmi and ib_write_bw in the lab; here
they run without Slurm (the nccl-tests stubs need scontrol and run in the lab only).
"""

from __future__ import annotations

import os
import socket
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ib_pair(device: str, port: int) -> tuple[subprocess.CompletedProcess[str], str]:
    """A stub server and its client on this machine, meeting over TCP like the real tool."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    server = subprocess.Popen([str(STUBS / "ib_write_bw"), "-d", device, "-p", str(port),
                               "--report_gbits"], text=True, stdout=subprocess.PIPE, env=env)
    assert server.stdout is not None
    banner = "".join(iter(server.stdout.readline, "* Waiting for client to connect... *\n"))
    client = _stub("ib_write_bw", "-d", device, "-p", str(port), "--report_gbits", "-s",
                   "1048576", "-n", "5000", "-F", "localhost")
    out = server.stdout.read()
    assert server.wait(timeout=30) == 0, out
    return client, banner + out


def test_stub_ib_write_bw_server_and_client_meet_over_tcp() -> None:
    client, server_out = _ib_pair("mlx5_2", _free_port())
    fast = parse_write_bw(client.stdout, "f")
    assert client.returncode == 0 and fast.gbps == 392.4 and fast.device == "mlx5_2"
    assert "RDMA_Write BW Test" in server_out, "the server exits once its client is done"


def test_stub_ib_write_bw_client_without_its_server_fails_like_the_tool() -> None:
    alone = _stub("ib_write_bw", "-d", "mlx5_2", "-p", str(_free_port()), "localhost")
    assert alone.returncode == 1 and "Couldn't connect to localhost" in alone.stderr
    gone = _stub("ib_write_bw", "-d", "mlx5_2", "nosuchhost.invalid")
    assert gone.returncode == 1 and "Couldn't connect" in gone.stderr
