"""The ``python -m harness`` command line.

Each stage package that offers commands has a module ``harness/<stage>/cli.py`` with a
function ``register(subparsers)`` that adds its subcommands; each subcommand sets
``func`` (taking the parsed arguments, returning an exit code) with ``set_defaults``.
Stages are discovered here, so adding a command never means editing this file.

Every command shares one exit-code taxonomy (:mod:`harness.errors`, shown in every
``--help`` and the README). :func:`run_guarded` maps what a command raises to it in one
place, so no traceback ever reaches a user: an unexpected exception is reported in one line
that names a log file holding the traceback.
"""

from __future__ import annotations

import argparse
import datetime
import errno
import importlib
import importlib.util
import os
import sys
import tempfile
import textwrap
import traceback
from collections.abc import Callable
from pathlib import Path

from harness.bounded import clip, one_line
from harness.errors import (
    EXIT_CODES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    HarnessError,
)

# Order of the stages in ``--help``: the order of the data flow.
STAGES = ("rules", "solver", "cert", "lean", "manifest", "verify", "site", "results")

LOG_DIR_ENV = "POP_HARNESS_LOG_DIR"


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


MAX_SEED = 2**64 - 1


def seed(text: str) -> int:
    """An argparse ``type`` for a random seed: a whole number from 0 to 2**64 - 1, a longer
    one quoted only in part.

    >>> seed("42")
    42
    >>> seed("9" * 5000)
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: not a seed (0 to 2**64 - 1): '999999999999'… (5,000 characters)
    """
    digits = text.strip()
    if digits.isascii() and digits.isdigit() and len(digits) <= 20 and int(digits) <= MAX_SEED:
        return int(digits)
    raise argparse.ArgumentTypeError(f"not a seed (0 to 2**64 - 1): {clip(text, 12)}")


def ruleset_id(text: str) -> str:
    """An argparse ``type`` for a ruleset id: the id as the rules spell it, or the rules'
    one-line error naming the field.

    >>> ruleset_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")[:12]
    'pop1-4x4-c8-'
    """
    from harness.rules.ruleset import Ruleset

    try:
        return Ruleset.from_id(text).id
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def folder_path(text: str) -> Path:
    """An argparse ``type`` for a folder that may not exist yet, but is no file or link.

    >>> folder_path("/"), folder_path("/nowhere/yet")
    (PosixPath('/'), PosixPath('/nowhere/yet'))
    >>> folder_path("/dev/null")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '/dev/null' is not a folder
    """
    path = Path(text)
    if os.path.lexists(path) and (path.is_symlink() or not path.is_dir()):
        raise argparse.ArgumentTypeError(f"{clip(text)} is not a folder")
    return path


def add_folder_options(
    parser: argparse.ArgumentParser, work: str, work_help: str, manifests_help: str
) -> None:
    """``--work DIR`` (default ``work``) and ``--manifests DIR`` (default ``manifests``, a
    folder or nothing yet, never a file or a link), as the commands that run and publish
    verified results take them."""
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(work),
        metavar="DIR",
        help=f"{work_help} (default {work})",
    )
    parser.add_argument(
        "--manifests",
        type=folder_path,
        default=Path("manifests"),
        metavar="DIR",
        help=f"{manifests_help} (default manifests)",
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``command``, stages are registered only until one
    offers that command.

    Each stage's ``cli`` module imports what its commands run (numpy, cryptography, jinja2,
    ...), so a parser of every stage costs a process about 46 MiB before it does anything;
    ``solve`` alone needs the first two stages, about 32 MiB. Parsing is the same either
    way: the command's own subparser does all of it. Without ``command`` (``--help``, a
    misspelt command) every stage is registered, so the usage lists them all.
    """
    parser = argparse.ArgumentParser(
        prog="python -m harness",
        description="Solve Pop rulesets, certify the results and check them with Lean.",
        epilog=EXIT_CODES,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for stage in STAGES:
        name = f"harness.{stage}.cli"
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).register(subparsers)
            if command is not None and command in subparsers.choices:
                break
    add_exit_codes(parser)
    return parser


class HelpFormatter(argparse.HelpFormatter):
    """Wraps a description or epilog paragraph by paragraph, and keeps a paragraph with
    indented lines (a table of exit codes, a list of examples) exactly as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for para in text.strip("\n").split("\n\n"):
            lines = para.splitlines()
            if any(line.startswith(" ") for line in lines):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                paragraphs.append(
                    textwrap.fill(
                        " ".join(para.split()),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                    )
                )
        return "\n\n".join(paragraphs)


def add_exit_codes(parser: argparse.ArgumentParser) -> None:
    """Append :data:`EXIT_CODES` to the ``--help`` of every command below ``parser``, and
    format every help with :class:`HelpFormatter`."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                sub.formatter_class = HelpFormatter
                if EXIT_CODES not in (sub.epilog or ""):
                    sub.epilog = f"{sub.epilog}\n\n{EXIT_CODES}" if sub.epilog else EXIT_CODES
                add_exit_codes(sub)


def describe_os_error(exc: OSError) -> str:
    """One line for a file-system error: the path(s) and what the system said.

    >>> describe_os_error(OSError(28, "No space left on device", "out/x.tmp"))
    'out/x.tmp: No space left on device (the disk is full)'
    """
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    what = exc.strerror or str(exc) or type(exc).__name__
    hint = {
        errno.ENOSPC: " (the disk is full)",
        errno.EDQUOT: " (disk quota exceeded)",
        errno.EROFS: " (the file system is read-only)",
    }.get(exc.errno, "")
    return one_line(f"{' -> '.join(names)}: {what}{hint}" if names else f"{what}{hint}")


def log_dir() -> Path:
    """Where tracebacks of internal errors go: ``$POP_HARNESS_LOG_DIR``, else
    ``$XDG_STATE_HOME/pop-harness/logs`` (default ``~/.local/state/pop-harness/logs``)."""
    given = os.environ.get(LOG_DIR_ENV)
    if given:
        return Path(given)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "pop-harness" / "logs"


def write_crash_log(exc: BaseException, argv: list[str] | None = None) -> Path | None:
    """Write the traceback of ``exc`` to a new file under :func:`log_dir` (or the temporary
    folder when that cannot be written) and return its path; None when nothing could be."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    text = (
        f"pop-harness internal error at {stamp}\n"
        f"argv: {sys.argv if argv is None else argv}\n"
        f"python: {sys.version.split()[0]}\n\n"
        + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    )
    for folder in (log_dir(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f"crash-{stamp}-", suffix=".log", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
                fh.write(text)
            return Path(name)
        except (OSError, MemoryError):
            continue
    return None


def run_guarded(func: Callable[[], int | None], argv: list[str] | None = None) -> int:
    """Run a command and turn whatever it raises into one line on stderr and an exit code.

    ``HarnessError`` keeps its own code; a ``ValueError`` (every parse error of the engine and
    the readers) and an ``OSError`` (a missing file, a full disk, a read-only folder) are
    unusable input (2); anything else is a bug: one line naming the log file with the
    traceback, exit :data:`EXIT_INTERNAL`.
    """
    try:
        return int(func() or 0)
    except HarnessError as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except ValueError as exc:  # the engine's and the readers' errors are ValueError subclasses
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): nothing more can be said there.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the exit-time flush
        except OSError:
            pass
        return EXIT_USAGE
    except OSError as exc:
        print(f"error: {describe_os_error(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one place that catches everything
        log = write_crash_log(exc, argv)
        where = f"traceback in {log}" if log else "no log could be written"
        kind = "out of memory" if isinstance(exc, MemoryError) else type(exc).__name__
        print(
            f"internal error: {kind}: {one_line(str(exc), 200)} (a bug in pop-harness; {where})",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    command = words[0] if words and not words[0].startswith("-") else None
    parser = build_parser(command)
    args = parser.parse_args(argv)
    return run_guarded(lambda: args.func(args), argv)
