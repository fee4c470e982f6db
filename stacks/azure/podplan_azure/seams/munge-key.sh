#!/bin/bash
# Azure: print the cluster's munge key (base64) from Key Vault, read as the VMs' user-assigned
# managed identity ("Key Vault Secrets User" on this one secret only) with a token from the
# instance metadata service. A fresh role assignment takes a few minutes to apply, so retry
# for up to 10 minutes. Errors name the secret, never its value.
set -euo pipefail
imds="http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01"
resource=https%3A%2F%2Fvault.azure.net
for attempt in $(seq 1 40); do
    if token=$(curl -fsS -H Metadata:true \
        "$imds&resource=$resource&client_id=$PODPLAN_IDENTITY_CLIENT_ID" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])') &&
        curl -fsS -H "Authorization: Bearer $token" "$PODPLAN_MUNGE_SECRET?api-version=7.4" |
        python3 -c 'import json, sys; sys.stdout.write(json.load(sys.stdin)["value"])'; then
        exit 0
    fi
    echo "podplan: reading $PODPLAN_MUNGE_SECRET failed (attempt $attempt); retrying" >&2
    sleep 15
done
exit 1
