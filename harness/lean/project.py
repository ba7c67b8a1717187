"""Where the package's Lean files are: the Lean project (the model, ``lakefile.toml``,
``Pop/*.lean``) and the templates rendered modules are written from.

In a checkout the project is the repository's ``lean/`` folder; an installed wheel carries a
copy of the same files as ``harness/lean/project/`` (``setup.py`` puts it there).

>>> (project_dir() / "lakefile.toml").is_file()
True
>>> sorted(p.name for p in TEMPLATES.glob("main*"))
['main.lean.jinja']
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
CHECKOUT_PROJECT = HERE.parents[1] / "lean"
WHEEL_PROJECT = HERE / "project"


def project_dir() -> Path:
    """The Lean project: ``lean/`` of the checkout this package runs from, else the wheel's copy."""
    if (CHECKOUT_PROJECT / "lakefile.toml").is_file():
        return CHECKOUT_PROJECT
    return WHEEL_PROJECT
