"""The exit codes every command shares, and the error meant for the user.

One taxonomy holds for every command (:data:`EXIT_CODES`, shown in every ``--help`` and the
README); :func:`harness.cli.run_guarded` maps what a command raises to it in one place.

>>> HarnessError("--out x: not a folder").exit_code == EXIT_USAGE
True
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1  # a check rejected something, or no win within the stated bound
EXIT_USAGE = 2  # unusable input or environment: bad input, I/O error, disk full, locked
EXIT_BUDGET = 3  # a budget ran out (state kept), or INCOMPLETE
EXIT_NO_LEAN = 4  # no Lean toolchain here
EXIT_OPEN = 5  # an open result: the budget ran out before a proof
EXIT_INTERNAL = 70  # a bug (sysexits' EX_SOFTWARE): one line here, the traceback in a log
EXIT_INTERRUPTED = 130  # SIGINT, as a shell reports it

EXIT_CODES = """exit codes (every command):
  0    success
  1    a check rejected something, or no win within the stated bound
  2    unusable input or environment (bad id, position or path, I/O error, disk full,
       permission, locked by another run)
  3    a budget ran out (state kept), or INCOMPLETE
  4    no Lean toolchain
  5    an open result
  70   internal error (a bug: the message names a log file with the traceback)
  130  interrupted"""


class HarnessError(Exception):
    """An error meant for the user: printed as one line, exit code :attr:`exit_code`."""

    exit_code = EXIT_USAGE
