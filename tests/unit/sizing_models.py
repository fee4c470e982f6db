"""Published architectures and GPUs for the sizing tests, written out so the tests pin the
formulas, not whatever the catalog data says today."""

from __future__ import annotations

from generator.sizing.model.arch import Architecture
from generator.sizing.model.hardware import Device, Node

LLAMA2_7B = Architecture("Llama 2 7B", 32, 4096, 32, 32, 11008, True, 32000)
LLAMA2_13B = Architecture("Llama 2 13B", 40, 5120, 40, 40, 13824, True, 32000)
LLAMA2_70B = Architecture("Llama 2 70B", 80, 8192, 64, 8, 28672, True, 32000)
LLAMA3_8B = Architecture("Llama 3 8B", 32, 4096, 32, 8, 14336, True, 128256)
LLAMA3_70B = Architecture("Llama 3 70B", 80, 8192, 64, 8, 28672, True, 128256)
LLAMA31_405B = Architecture("Llama 3.1 405B", 126, 16384, 128, 8, 53248, True, 128256)
MIXTRAL_8X7B = Architecture("Mixtral 8x7B", 32, 4096, 32, 8, 14336, True, 32000, experts=8, top_k=2)
MIXTRAL_8X22B = Architecture(
    "Mixtral 8x22B", 56, 6144, 48, 8, 16384, True, 32768, experts=8, top_k=2
)
GPT3_175B = Architecture("GPT-3 175B", 96, 12288, 96, 96, 49152, False, 51200, tied_embeddings=True)
GPT_22B = Architecture("GPT 22B", 48, 6144, 64, 64, 24576, False, 51200, tied_embeddings=True)

H100 = Device("h100-sxm-80gb", 80e9, 3.35e12, 989e12, 1979e12, 450e9)
A100 = Device("a100-sxm-80gb", 80e9, 2.039e12, 312e12, 312e12, 300e9)
XE9680_8NIC = Node(gpus=8, nics=8, nic_gbps=400)
XE9680_4NIC = Node(gpus=8, nics=4, nic_gbps=400)
