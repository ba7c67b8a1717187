"""The Jinja environment of the Lean templates (``harness/lean/templates/``), and the pieces
of Lean text every rendered module shares: string literals and the pinned list of axioms.
"""

from __future__ import annotations

import jinja2

from harness.lean.parse import ALLOWED_AXIOMS
from harness.lean.project import TEMPLATES

PINNED = "[" + ", ".join(ALLOWED_AXIOMS) + "]"


def template_env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def lean_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
