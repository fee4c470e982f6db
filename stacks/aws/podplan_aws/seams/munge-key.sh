#!/bin/bash
# AWS: print the cluster's munge key (base64) from Secrets Manager, read with the instance
# profile's role, which may read this one secret only. A new role takes a little while to be
# usable everywhere, so retry for up to 10 minutes. Errors name the secret, never its value.
set -euo pipefail
if ! command -v aws >/dev/null; then
    echo "podplan: the AWS CLI is missing from the image (the Deep Learning AMIs carry it)" >&2
    exit 1
fi
for attempt in $(seq 1 40); do
    if aws secretsmanager get-secret-value --region "$PODPLAN_REGION" \
        --secret-id "$PODPLAN_MUNGE_SECRET" --query SecretString --output text; then
        exit 0
    fi
    echo "podplan: reading $PODPLAN_MUNGE_SECRET failed (attempt $attempt); retrying" >&2
    sleep 15
done
exit 1
