#!/bin/bash
# ExecStartPre of munge, slurmctld and slurmd (podplan drop-ins): refuse to start unless
# /etc/munge/munge.key is the key the bootstrap received from the cloud's secret store.
# Without this, a node whose bootstrap failed would come up after a reboot with the munge
# package's own random key and fail every authentication silently.
set -euo pipefail
want_file=/var/lib/podplan/munge.key.sha256
if [[ ! -s $want_file ]]; then
    echo "podplan: no munge key was received at bootstrap; refusing to start" >&2
    exit 1
fi
have=$(sha256sum /etc/munge/munge.key 2>/dev/null | cut -d' ' -f1)
if [[ $have != "$(cat "$want_file")" ]]; then
    echo "podplan: /etc/munge/munge.key is not the key the bootstrap received; refusing to start" >&2
    exit 1
fi
