"""The podplan policy pack: run it with `pulumi preview --policy-pack ../policy` from a stack.

Constructing the PolicyPack starts CrossGuard's analyzer server and blocks, which is why it
happens only here; the rules themselves live in podplan_policy/rules.py and are unit-tested.
"""

from podplan_policy.rules import RULES
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy

PolicyPack(
    name="podplan",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[
        ResourceValidationPolicy(
            name=rule.name, description=rule.description, validate=rule.validate
        )
        for rule in RULES
    ],
)
