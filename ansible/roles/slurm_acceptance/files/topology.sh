#!/bin/sh
# Print Slurm's switch tree as "switch|node,node,...|switch,switch,..." lines, with
# hostlist expressions expanded by Slurm itself, so Ansible can compare them to the plan.
set -eu
expand() {
    if [ -n "$1" ]; then scontrol show hostnames "$1" | paste -sd, -; fi
}
scontrol --oneliner show topology | while read -r line; do
    name='' nodes='' switches=''
    for field in $line; do
        case $field in
        SwitchName=*) name=${field#*=} ;;
        Nodes=*) nodes=${field#*=} ;;
        Switches=*) switches=${field#*=} ;;
        esac
    done
    printf '%s|%s|%s\n' "$name" "$(expand "$nodes")" "$(expand "$switches")"
done
