#!/usr/bin/python3
"""Ansible module: bring Slurm's QOS, accounts and users up to a declared state with sacctmgr.

Adds what is missing and corrects the attributes it manages; never deletes (removing an
account with jobs is an admin's decision: ``sacctmgr delete ...``). Reads the current
state with ``sacctmgr --noheader --parsable2 show ...`` and compares parsed values, so a
converged cluster reports ``changed=false``. The planning functions are pure, for tests.
"""

from __future__ import annotations

import subprocess
from typing import Any

DOCUMENTATION = r"""
module: podplan_sacctmgr
short_description: Declare Slurm QOS, accounts and users (sacctmgr), add-only.
description:
  - Creates missing QOS, accounts and user associations and corrects their managed
    attributes. Never deletes anything.
options:
  cluster:
    description: Slurm cluster name.
    type: str
    required: true
  qos:
    description: QOS list; name plus priority, max_wall, max_tres_per_user, max_jobs_per_user, max_submit_jobs_per_user.
    type: list
    elements: dict
    default: []
  accounts:
    description: Accounts; name plus description, organization, parent, fairshare, default_qos, qos, users.
    type: list
    elements: dict
    default: []
author: podplan
"""

RETURN = r"""
commands:
  description: The sacctmgr commands run (or, in check mode, that would run).
  type: list
  returned: always
"""

# spec key -> (field name in "show qos format=...", attribute name in "set ...")
QOS_FIELDS = {
    "priority": ("Priority", "Priority"),
    "max_wall": ("MaxWall", "MaxWall"),
    "max_tres_per_user": ("MaxTRESPU", "MaxTRESPerUser"),
    "max_jobs_per_user": ("MaxJobsPU", "MaxJobsPerUser"),
    "max_submit_jobs_per_user": ("MaxSubmitPU", "MaxSubmitJobsPerUser"),
}


def seconds(value: Any) -> int | None:
    """Slurm time ([D-]HH:MM:SS, MM:SS or minutes) in seconds; None when unset."""
    text = str(value).strip() if value is not None else ""
    if not text:
        return None
    days, _, rest = text.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if len(parts) == 1:
        total = parts[0] * 60
    else:
        while len(parts) < 3:
            parts.insert(0, 0)
        total = parts[0] * 3600 + parts[1] * 60 + parts[2]
    return total + int(days or 0) * 86400


def norm(key: str, value: Any) -> str:
    """A value as comparable text (times in seconds, QOS lists sorted)."""
    if value is None or str(value).strip() == "":
        return ""
    if key == "max_wall":
        return str(seconds(value))
    if key == "qos":
        items = value if isinstance(value, list) else str(value).split(",")
        return ",".join(sorted(str(q).strip() for q in items if str(q).strip()))
    return str(value).strip()


def parse(text: str, fields: list[str]) -> list[dict[str, str]]:
    """Rows of ``--parsable2`` output as dicts keyed by ``fields``."""
    return [dict(zip(fields, line.split("|"))) for line in text.splitlines() if line.strip()]


def plan_qos(wanted: list[dict[str, Any]], current: list[dict[str, str]]) -> list[list[str]]:
    have = {row["Name"]: row for row in current}
    cmds = []
    for q in wanted:
        sets = [
            f"{attr}={q[key]}"
            for key, (field, attr) in QOS_FIELDS.items()
            if key in q and (q["name"] not in have or norm(key, q[key]) != norm(key, have[q["name"]].get(field)))
        ]
        if q["name"] not in have:
            cmds.append(["add", "qos", q["name"], *sets])
        elif sets:
            cmds.append(["modify", "qos", "where", f"name={q['name']}", "set", *sets])
    return cmds


ACCOUNT_ATTRS = {  # spec key -> (assoc field, set attribute)
    "fairshare": ("Fairshare", "Fairshare"),
    "default_qos": ("DefaultQOS", "DefaultQOS"),
    "qos": ("QOS", "QOS"),
}


def plan_accounts(
    cluster: str,
    wanted: list[dict[str, Any]],
    assocs: list[dict[str, str]],
    users: list[dict[str, str]],
) -> list[list[str]]:
    """Commands that add missing accounts/users and correct the managed attributes."""
    acct_rows = {r["Account"]: r for r in assocs if not r.get("User")}
    user_rows = {(r["Account"], r["User"]) for r in assocs if r.get("User")}
    defaults = {r["User"]: r.get("DefaultAccount", "") for r in users}
    cmds: list[list[str]] = []
    first_account: dict[str, str] = {}
    for a in wanted:
        name = a["name"]
        attrs = {k: a[k] for k in ACCOUNT_ATTRS if k in a}
        if name not in acct_rows:
            extra = [f"Parent={a.get('parent', 'root')}"]
            extra += [f"Description={a.get('description', name)}", f"Organization={a.get('organization', name)}"]
            extra += [f"{ACCOUNT_ATTRS[k][1]}={norm(k, v)}" for k, v in attrs.items()]
            cmds.append(["add", "account", name, f"Cluster={cluster}", *extra])
        else:
            row = acct_rows[name]
            sets = [
                f"{ACCOUNT_ATTRS[k][1]}={norm(k, v)}"
                for k, v in attrs.items()
                if norm(k, v) != norm(k, row.get(ACCOUNT_ATTRS[k][0]))
            ]
            if sets:
                cmds.append(["modify", "account", "where", f"name={name}", f"cluster={cluster}", "set", *sets])
        for user in a.get("users", []):
            first_account.setdefault(user, name)
            if (name, user) not in user_rows:
                cmds.append(["add", "user", user, f"Account={name}", f"Cluster={cluster}",
                             f"DefaultAccount={first_account[user]}"])
    for user, account in first_account.items():
        if user in defaults and defaults[user] not in ("", account):
            cmds.append(["modify", "user", "where", f"name={user}", "set", f"DefaultAccount={account}"])
    return cmds


def sacctmgr(*args: str) -> str:
    r = subprocess.run(["sacctmgr", "--immediate", *args], capture_output=True, text=True, check=False)
    if r.returncode != 0 and "Nothing new added" not in r.stdout + r.stderr:
        raise RuntimeError(f"sacctmgr {' '.join(args)}: {(r.stdout + r.stderr).strip()}")
    return r.stdout


def show(entity: str, fields: list[str], *where: str) -> list[dict[str, str]]:
    out = sacctmgr("--noheader", "--parsable2", "show", entity, *where, f"format={','.join(fields)}")
    return parse(out, fields)


def main() -> None:
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(
        argument_spec={
            "cluster": {"type": "str", "required": True},
            "qos": {"type": "list", "elements": "dict", "default": []},
            "accounts": {"type": "list", "elements": "dict", "default": []},
        },
        supports_check_mode=True,
    )
    p = module.params
    try:
        qos_fields = ["Name"] + [f for f, _ in QOS_FIELDS.values()]
        cmds = plan_qos(p["qos"], show("qos", qos_fields))
        if not module.check_mode:
            for c in cmds:
                sacctmgr(*c)
        assoc_fields = ["Account", "User", "ParentName", "Fairshare", "DefaultQOS", "QOS"]
        assocs = show("association", assoc_fields, "where", f"cluster={p['cluster']}")
        users = show("user", ["User", "DefaultAccount"])
        acct_cmds = plan_accounts(p["cluster"], p["accounts"], assocs, users)
        if not module.check_mode:
            for c in acct_cmds:
                sacctmgr(*c)
    except RuntimeError as exc:
        module.fail_json(msg=str(exc))
    all_cmds = [" ".join(["sacctmgr", "-i", *c]) for c in [*cmds, *acct_cmds]]
    module.exit_json(changed=bool(all_cmds), commands=all_cmds)


if __name__ == "__main__":
    main()
