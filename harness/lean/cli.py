"""Commands of the Lean stage: ``render`` (certificate -> Lean modules) and ``lean`` (run them)."""

from __future__ import annotations

import argparse

from harness.lean.lean_cli import register_lean
from harness.lean.render_cli import register_render


def register(subparsers: argparse._SubParsersAction) -> None:
    register_render(subparsers)
    register_lean(subparsers)
