"""``podplan accept`` and ``podplan calibrate``: compare what the acceptance ladder measured
with what the plan says it should measure, name what falls short, feed the measurements
back into sizing.

Pipeline: ``results.read_run`` (a run directory the ladder collected, each tool's output
parsed by ``parse``) -> ``compare.compare`` (against ``generator.sizing.acceptance``) ->
``report`` (Markdown and JSON) -> optionally ``drain`` (scontrol) and ``calibrate``.
"""
