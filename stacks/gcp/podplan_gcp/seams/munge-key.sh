#!/bin/bash
# Google Cloud: print the cluster's munge key (base64) from Secret Manager, read as the VMs'
# own service account (Secret Accessor on this one secret only) with a token from the
# metadata server; no gcloud needed. A fresh IAM binding takes a little while to apply, so
# retry for up to 10 minutes. Errors name the secret, never its value.
set -euo pipefail
metadata=http://metadata.google.internal/computeMetadata/v1
url="https://secretmanager.googleapis.com/v1/$PODPLAN_MUNGE_SECRET/versions/latest:access"
for attempt in $(seq 1 40); do
    if token=$(curl -fsS -H 'Metadata-Flavor: Google' \
        "$metadata/instance/service-accounts/default/token" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])') &&
        curl -fsS -H "Authorization: Bearer $token" "$url" |
        python3 -c 'import base64, json, sys
sys.stdout.write(base64.b64decode(json.load(sys.stdin)["payload"]["data"]).decode())'; then
        exit 0
    fi
    echo "podplan: reading $PODPLAN_MUNGE_SECRET failed (attempt $attempt); retrying" >&2
    sleep 15
done
exit 1
