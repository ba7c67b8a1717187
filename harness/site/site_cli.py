"""``python -m harness site``: build the static site (wired into the CLI by harness/site/cli.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli import EXIT_OK


def register_site(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "site",
        help="build the static site (play, rules, replay, proof)",
        description=(
            "Build the static site into DIR: plain files for any static file server, "
            "nothing fetched from the network at run time. An earlier build in DIR is "
            "replaced whole; a non-empty folder that is not such a build is refused."
        ),
    )
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from harness.site.build import build_site  # jinja2 is only needed when building

    files = build_site(args.out)
    print(f"site: wrote {len(files)} files to {args.out}")
    print(f"site: serve it with  python -m http.server -d {args.out}  and open play.html")
    return EXIT_OK
