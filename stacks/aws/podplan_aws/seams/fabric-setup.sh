#!/bin/bash
# AWS p5: the Deep Learning Base OSS NVIDIA AMI carries the EFA software (the efa kernel
# module, libfabric with its efa provider under /opt/amazon/efa, the aws-ofi-nccl plugin under
# /opt/amazon/ofi-nccl), so there is nothing to install: load the module and go on; the
# fabric check says whether everything is there.
set -euo pipefail
modprobe efa
