"""``python -m harness``: the command line (see :mod:`harness.cli`)."""

import sys

from harness.cli import main

sys.exit(main())
