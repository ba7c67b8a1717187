"""Commands of the site stage: ``site`` (build the static web site)."""

from __future__ import annotations

import argparse

from harness.site.site_cli import register_site


def register(subparsers: argparse._SubParsersAction) -> None:
    register_site(subparsers)
