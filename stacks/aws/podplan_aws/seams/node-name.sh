#!/bin/bash
# AWS: the node is named after its Name tag (the launch templates enable instance metadata
# tags), read over IMDSv2; the default ip-a-b-c-d host name is not the Slurm node's name.
set -euo pipefail
imds=http://169.254.169.254/latest
token=$(curl -fsS --retry 10 --retry-connrefused -X PUT "$imds/api/token" \
    -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')
curl -fsS --retry 10 -H "X-aws-ec2-metadata-token: $token" "$imds/meta-data/tags/instance/Name"
