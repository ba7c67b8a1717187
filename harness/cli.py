"""The ``python -m harness`` command line.

Each stage package that offers commands has a module ``harness/<stage>/cli.py`` with a
function ``register(subparsers)`` that adds its subcommands; each subcommand sets
``func`` (taking the parsed arguments, returning an exit code) with ``set_defaults``.
Stages are discovered here, so adding a command never means editing this file.

Exit codes shared by every command: 0 success, 1 a check failed, 2 unusable input.
Commands document any further codes of their own in their ``--help``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Callable

# Order of the stages in ``--help``: the order of the data flow.
STAGES = ("rules", "solver", "cert", "lean", "manifest", "site")

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def positive(kind: type) -> Callable[[str], int | float]:
    """An argparse ``type`` for a positive ``int`` or ``float`` (finite), with one-line errors.

    >>> positive(int)("3"), positive(float)("0.5")
    (3, 0.5)
    >>> positive(int)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be positive, got '0'
    """

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        return value

    return parse


class HarnessError(Exception):
    """An error meant for the user: printed as one line, exit code :attr:`exit_code`."""

    exit_code = EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness",
        description="Solve Pop rulesets, certify the results and check them with Lean.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for stage in STAGES:
        name = f"harness.{stage}.cli"
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except ValueError as exc:  # the engine's parse errors are ValueError subclasses
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
