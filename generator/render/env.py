"""The one Jinja environment for generator-time templates (``templates/**/*.jinja``).

Only conf files and playbooks are templated; structured outputs are dumped from data.
``StrictUndefined`` turns a missing variable into an error instead of an empty string, and
Ansible's own ``*.j2`` files are never loaded here (they are rendered by Ansible on the hosts).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

from generator.render.files import commented_header


def templates_root() -> Path:
    """Templates inside the installed wheel, else the repository's top-level ``templates/``."""
    packaged = Path(__file__).resolve().parent.parent / "_templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "templates"


@cache
def environment() -> jinja2.Environment:
    """The shared environment: strict, trailing newlines kept, no autoescape (not HTML)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_root())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.globals["commented_header"] = commented_header
    return env


def render(template: str, **context: object) -> str:
    """Render ``templates/<template>`` (must end in ``.jinja``) with ``context``."""
    if not template.endswith(".jinja"):
        raise ValueError(f"generator templates end in .jinja, got {template}")
    return environment().get_template(template).render(**context)
