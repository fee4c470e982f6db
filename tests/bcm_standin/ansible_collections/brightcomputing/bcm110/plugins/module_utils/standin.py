# TEST-ONLY stand-in for brightcomputing.bcm110 (see tests/bcm_standin/README.md).
# Not NVIDIA software. Declares a SUBSET of the documented options of each real module
# (names, types, choices, required, no_log) and does nothing: check mode supported,
# changed=False. Option names and types were read from the public documentation of the
# bcm110 modules (their DOCUMENTATION/argument specs as published on Galaxy and vendored in
# github.com/fabiendupont/nvidia-bcm-ansible); sources per module in ansible/BCM-SOURCES.md.
# This file was written for podplan; no code was copied.

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule


def _o(kind, **extra):
    spec = {"type": kind}
    spec.update(extra)
    return spec


def _list_of(options):
    return {"type": "list", "elements": "dict", "options": options}


def _dict_of(options):
    return {"type": "dict", "options": options}


STATE = _o("str", choices=["present", "absent"], default="present")
START_IF = ["ALWAYS", "ACTIVE", "PASSIVE", "PREFERPASSIVE"]

SWITCH_PORT = {
    "networkSwitch": _o("str"),
    "port": _o("int", default=0),
    "breakout": _o("int", default=-1),
}

RACK_POSITION = {
    "rack": _o("str"),
    "position": _o("int", default=1),
    "height": _o("int", default=1),
    "trayId": _o("str"),
    "trayName": _o("str"),
}

_IFACE_COMMON = {
    "name": _o("str", required=True),
    "ip": _o("str", default="0.0.0.0"),
    "network": _o("str"),
    "dhcp": _o("bool", default=False),
    "bootable": _o("bool", default=False),
    "alternativeHostname": _o("str"),
    "additionalHostnames": _o("list"),
    "onNetworkPriority": _o("int"),
    "startIf": _o("str", choices=START_IF, default="ALWAYS"),
    "switchPorts": _list_of(SWITCH_PORT),
}

PHYSICAL_INTERFACE = dict(_IFACE_COMMON, mac=_o("str", default="00:00:00:00:00:00"),
                          cardtype=_o("str"), speed=_o("str"))
BMC_INTERFACE = dict(_IFACE_COMMON, mac=_o("str", default="00:00:00:00:00:00"),
                     gateway=_o("str", default="0.0.0.0"), vlanid=_o("int", default=0),
                     lanchannel=_o("int", default=1))

BMC_SETTINGS = {
    "userName": _o("str"),
    "userID": _o("int", default=-1),
    "password": _o("str", no_log=True),
    "powerResetDelay": _o("int", default=0),
    "extraArguments": _o("str"),
    "privilege": _o("str", default="ADMINISTRATOR",
                    choices=["CALLBACK", "USER", "OPERATOR", "ADMINISTRATOR",
                             "OEM_PROPRIETARY", "NO_ACCESS"]),
}

FSMOUNT = {
    "device": _o("str"),
    "mountpoint": _o("str", required=True),
    "filesystem": _o("str"),
    "mountoptions": _o("str", default="defaults"),
    "dump": _o("bool", default=False),
    "fsck": _o("str", choices=["NONE", "ROOT", "OTHER"], default="NONE"),
    "rdma": _o("bool", default=False),
}

GENERIC_RESOURCE = {
    "name": _o("str"),
    "alias": _o("str"),
    "type": _o("str"),
    "count": _o("str"),
    "file": _o("str"),
    "cores": _o("str"),
    "consumable": _o("bool", default=True),
    "addToGresConfig": _o("bool", default=True),
}

AUTO_DETECT = ["NONE", "OFF", "NVML", "RSMI", "ONEAPI", "BCM", "NRT", "NVIDIA"]

SPECS = {
    "network": {
        "state": STATE,
        "cloneFrom": _o("str", default=""),
        "name": _o("str", required=True),
        "type": _o("str", default="INTERNAL",
                   choices=["INTERNAL", "EXTERNAL", "TUNNEL", "GLOBAL", "CLOUD", "NETMAP",
                            "EDGE_INTERNAL", "EDGE_EXTERNAL"]),
        "baseAddress": _o("str", default="0.0.0.0"),
        "netmaskBits": _o("int", default=16),
        "gateway": _o("str", default="0.0.0.0"),
        "domainName": _o("str"),
        "mtu": _o("int", default=1500),
        "management": _o("bool", default=False),
        "bootable": _o("bool", default=False),
        "dynamicRangeStart": _o("str", default="0.0.0.0"),
        "dynamicRangeEnd": _o("str", default="0.0.0.0"),
        "lockDownDhcpd": _o("bool", default=False),
        "excludeFromSearchDomain": _o("bool", default=False),
        "generateDNSZone": _o("str", default="BOTH",
                              choices=["BOTH", "FORWARD", "REVERSE", "NEITHER"]),
        "notes": _o("str"),
    },
    "rack": {
        "state": STATE,
        "cloneFrom": _o("str", default=""),
        "name": _o("str", required=True),
        "height": _o("int", default=42),
        "width": _o("int", default=19),
        "depth": _o("int", default=34),
        "room": _o("str"),
        "row": _o("str"),
        "building": _o("str"),
        "location": _o("str"),
        "model": _o("str"),
        "partNumber": _o("str"),
        "serialNumber": _o("str"),
        "notes": _o("str"),
    },
    "software_image": {
        "state": STATE,
        "cloneFrom": _o("str", default=""),
        "name": _o("str", required=True),
        "path": _o("str"),
        "kernelVersion": _o("str"),
        "kernelParameters": _o("str"),
        "kernelOutputConsole": _o("str", default="tty0"),
        "notes": _o("str"),
    },
    "category": {
        "state": STATE,
        "cloneFrom": _o("str", default=""),
        "name": _o("str", required=True),
        "softwareImageProxy": _dict_of({"parentSoftwareImage": _o("str"),
                                        "revisionID": _o("int", default=-1)}),
        "managementNetwork": _o("str"),
        "fsmounts": _list_of(FSMOUNT),
        "bmcSettings": _dict_of(BMC_SETTINGS),
        "nameServers": _o("list"),
        "searchDomains": _o("list"),
        "kernelParameters": _o("str"),
        "installMode": _o("str", default="AUTO",
                          choices=["AUTO", "FULL", "MAIN", "NOSYNC", "SKIP"]),
        "newNodeInstallMode": _o("str", default="FULL",
                                 choices=["AUTO", "FULL", "MAIN", "NOSYNC"]),
        "notes": _o("str"),
    },
    "physical_node": {
        "state": STATE,
        "cloneFrom": _o("str", default=""),
        "hostname": _o("str", required=True),
        "mac": _o("str", default="00:00:00:00:00:00"),
        "category": _o("str"),
        "partition": _o("str"),
        "managementNetwork": _o("str"),
        "provisioningInterface": _o("str"),
        "powerControl": _o("str", default="none"),
        "rackPosition": _dict_of(RACK_POSITION),
        "switchPorts": _list_of(SWITCH_PORT),
        "bmcSettings": _dict_of(BMC_SETTINGS),
        "interfaces_NetworkPhysicalInterface": _list_of(PHYSICAL_INTERFACE),
        "interfaces_NetworkBmcInterface": _list_of(BMC_INTERFACE),
        "partNumber": _o("str"),
        "serialNumber": _o("str"),
        "userdefined1": _o("str"),
        "userdefined2": _o("str"),
        "notes": _o("str"),
    },
    "switch": {
        "state": STATE,
        "cloneFrom": _o("str", default=""),
        "hostname": _o("str", required=True),
        "kind": _o("str", default="UNDEFINED",
                   choices=["UNDEFINED", "ETHERNET", "INFINIBAND", "NVLINK", "XDR"]),
        "mac": _o("str", default="00:00:00:00:00:00"),
        "ports": _o("int", default=0),
        "lowestPort": _o("int", default=1),
        "partNumber": _o("str"),
        "serialNumber": _o("str"),
        "managementNetwork": _o("str"),
        "rackPosition": _dict_of(RACK_POSITION),
        "switchPorts": _list_of(SWITCH_PORT),
        "interfaces_NetworkPhysicalInterface": _list_of(PHYSICAL_INTERFACE),
        "subnetManager": _o("bool", default=False),
        "disableSNMP": _o("bool", default=False),
        "hasClientDaemon": _o("bool", default=False),
        "notes": _o("str"),
    },
    "configuration_overlay": {
        "state": STATE,
        "cloneFrom": _o("str", default=""),
        "name": _o("str", required=True),
        "priority": _o("int", default=500),
        "allHeadNodes": _o("bool", default=False),
        "categories": _o("list"),
        "nodes": _o("list"),
        "roles_SlurmClientRole": _list_of({
            "name": _o("str", required=True),
            "wlmCluster": _o("str"),
            "genericResources": _list_of(GENERIC_RESOURCE),
            "features": _o("list"),
            "queues": _o("list"),
            "nodesets": _o("list"),
            "autoDetect": _o("str", default="NONE", choices=AUTO_DETECT),
            "addToTopology": _o("bool", default=True),
            "hardwareAutoDetection": _o("bool", default=True),
            "realMemory": _o("int", default=0),
            "sockets": _o("int", default=0),
            "coresPerSocket": _o("int", default=0),
            "threadsPerCore": _o("int", default=0),
        }),
        "roles_SlurmServerRole": _list_of({
            "name": _o("str", required=True),
            "wlmCluster": _o("str"),
            "slurmctldStartPolicy": _o("str", default="ALWAYS",
                                       choices=["ALWAYS", "TAKEOVER", "ACTIVEONLY"]),
        }),
    },
    "slurm_wlm_cluster": {
        "state": STATE,
        "cloneFrom": _o("str", default=""),
        "name": _o("str", required=True),
        "primaryServer": _o("str"),
        "version": _o("str", choices=["24.05", "24.05-sharp", "24.11", "24.11-sharp",
                                      "25.05", "25.05-sharp"]),
        "gresTypes": _o("list", default=["gpu"]),
        "autoDetect": _o("str", default="NONE", choices=AUTO_DETECT),
        "configureMigs": _o("bool", default=True),
        "selectType": _o("str", default="select/cons_tres"),
        "selectTypeParameters": _o("list", default=["CR_Core"]),
        "accountingStorageTRES": _o("list", default=["gres/gpu"]),
        "prologFlags": _o("list", default=["Alloc"]),
        "cgroups": _dict_of({
            "constrainCores": _o("bool", default=False),
            "constrainRAMSpace": _o("bool", default=False),
            "constrainSwapSpace": _o("bool", default=False),
            "constrainDevices": _o("bool", default=False),
        }),
        "topologySettings": _dict_of({
            "topologyPlugin": _o("str", default="NONE",
                                 choices=["NONE", "DEFAULT", "TREE", "BLOCK", "TORUS"]),
            "topologySource": _o("str", default="NONE",
                                 choices=["NONE", "INTERNAL", "TOPOGRAPH"]),
            "params": _dict_of({
                "dragonfly": _o("bool", default=False),
                "routePart": _o("bool", default=False),
                "switchAsNodeRank": _o("bool", default=False),
                "routeTree": _o("bool", default=False),
                "topoOptional": _o("bool", default=False),
            }),
            "treeSettings": _dict_of({
                "topologySwitches": _o("list", default=[]),
                "topologyEphemeralSwitches": _o("bool", default=True),
            }),
        }),
    },
    "slurm_wlm_cluster_info": {},
    "slurm_job_queue": {
        "state": _o("str", default="NONE",
                    choices=["NONE", "UP", "DOWN", "DRAIN", "INACTIVE"]),
        "cloneFrom": _o("str", default=""),
        "name": _o("str", required=True),
        "wlmCluster": _o("str"),
        "overlays": _o("list", default=[]),
        "categories": _o("list", default=[]),
        "nodegroups": _o("list", default=[]),
        "computeNodes": _o("list", default=[]),
        "nodesets": _o("list", default=[]),
        "options": _o("list", default=[]),
        "defaultQueue": _o("bool", default=False),
        "minNodes": _o("str", default="1"),
        "maxNodes": _o("str", default="UNLIMITED"),
        "defaultTime": _o("str", default="UNLIMITED"),
        "maxTime": _o("str", default="UNLIMITED"),
        "ordering": _o("int", default=0),
        "exclusiveUser": _o("bool", default=False),
        "overSubscribe": _o("str", default="NO"),
        "priorityTier": _o("int", default=1),
    },
}

# What each *_info stand-in returns (the real ones query CMDaemon): nothing exists yet.
INFO_RESULTS = {"slurm_wlm_cluster_info": {"slurm_wlm_cluster": []}}


def run(name):
    """Validate the task's arguments against the declared subset; change nothing."""
    module = AnsibleModule(argument_spec=SPECS[name], supports_check_mode=True)
    module.exit_json(changed=False, standin=True, **INFO_RESULTS.get(name, {}))
