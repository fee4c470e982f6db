#!/usr/bin/python
# TEST-ONLY stand-in for brightcomputing.bcm110.category (tests/bcm_standin/README.md).
# Not NVIDIA software: declares a subset of the documented options and does nothing.
from __future__ import annotations

DOCUMENTATION = r"""
---
module: category
short_description: TEST-ONLY stand-in for brightcomputing.bcm110.category
description:
  - Declares a subset of the documented options of the real module (see
    module_utils/standin.py and ansible/BCM-SOURCES.md) and does nothing else.
  - Never install this on a cluster; it exists for podplan's check-mode tests.
author:
  - podplan tests
"""

from ansible_collections.brightcomputing.bcm110.plugins.module_utils.standin import run


def main():
    run("category")


if __name__ == "__main__":
    main()
