"""Checks of a parsed spec against the hardware and the model it names: pins the frameworks
refuse (``pins``, ``moe_pins``, ``serving_pins``) and values that read like a unit slip
(``plausible``). Parsing and located errors stay one level up, in ``generator.spec``."""
