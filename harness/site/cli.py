"""``python -m harness site``: build the static site."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.errors import EXIT_OK, HarnessError

DEFAULT_FROM = Path("out/verify")
DEFAULT_MANIFESTS = Path("manifests")
DEFAULT_DIST = Path("dist")


def register_site(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "site",
        help="build the static site (play, rules, results, replay, proof)",
        description=(
            "Build the static site into DIR: plain files for any static file server, "
            "nothing fetched from the network at run time. An earlier build in DIR is "
            "replaced whole; a non-empty folder that is not such a build is refused. "
            "whatever is missing, the pages say so. By default only what is published: the "
            "signed manifests in MANIFESTS, the sealed archives in MANIFESTS/archives (each "
            "replay's certificate is read from its archive) and the publisher keys in "
            "MANIFESTS/keys. With --include-local, the runs in FROM and the archives in DIST "
            "are shown too, each marked as a local run."
        ),
    )
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    parser.add_argument(
        "--from",
        dest="from_dir",
        type=Path,
        metavar="DIR",
        help=f"with --include-local: your runs, as `verify --work` writes them (default "
        f"{DEFAULT_FROM})",
    )
    parser.add_argument(
        "--manifests",
        type=Path,
        metavar="DIR",
        help=f"published verify manifests (default {DEFAULT_MANIFESTS})",
    )
    parser.add_argument(
        "--dist",
        type=Path,
        metavar="DIR",
        help=f"with --include-local: your sealed archives, as `seal` writes them (default "
        f"{DEFAULT_DIST})",
    )
    parser.add_argument(
        "--key",
        type=Path,
        metavar="PUB",
        help="a public key every published manifest must verify with (default: each is "
        "checked with the key in MANIFESTS/keys that its signer names)",
    )
    parser.add_argument(
        "--include-local",
        action="store_true",
        help="also show your own runs (FROM, DIST), each marked as a local run",
    )
    parser.set_defaults(func=_run)


def _folder(given: Path | None, default: Path, flag: str) -> Path | None:
    """A folder named on the command line must exist; a default one may be absent."""
    if given is None:
        return default if default.is_dir() else None
    if not given.is_dir():
        raise HarnessError(f"site: {flag} {given}: no such folder")
    return given


def _run(args: argparse.Namespace) -> int:
    from harness.site.build import Sources, build_site  # jinja2 is only needed when building

    public = None
    if args.key is not None:
        from harness.manifest.keys import load_public

        try:
            public = load_public(args.key)
        except (OSError, ValueError) as exc:
            raise HarnessError(f"site: --key: {exc}") from None  # exc names the file
    if not args.include_local and (args.from_dir or args.dist):
        raise HarnessError("site: --from and --dist name local runs; add --include-local")
    sources = Sources(
        from_dir=_folder(args.from_dir, DEFAULT_FROM, "--from") if args.include_local else None,
        manifests_dir=_folder(args.manifests, DEFAULT_MANIFESTS, "--manifests"),
        dist_dir=_folder(args.dist, DEFAULT_DIST, "--dist") if args.include_local else None,
        public_key=public,
        include_local=args.include_local,
    )
    files = build_site(args.out, sources=sources)
    print(f"site: wrote {len(files)} files to {args.out}")
    print(f"site: serve it with  python -m http.server -d {args.out}  and open index.html")
    return EXIT_OK


def register(subparsers: argparse._SubParsersAction) -> None:
    register_site(subparsers)
