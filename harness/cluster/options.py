"""The cluster options every many-piece command shares, and what they ask for.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_cluster_arguments(parser)
>>> cluster_spec(parser.parse_args(["--workers", "3", "--shared", "/tmp/s"]))
ClusterSpec(workers=3, scheduler=None, config=None, shared=PosixPath('/tmp/s'))
>>> cluster_spec(parser.parse_args([])).requested
False
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from harness.bounded import clip
from harness.cli import positive

SCHEDULER_SCHEMES = ("tcp", "tls")  # what reaches a scheduler in another process


def scheduler_address(text: str) -> str:
    """An argparse ``type`` for ``--scheduler``: ``tcp://HOST:PORT`` or ``tls://HOST:PORT``
    (a bare ``HOST:PORT`` means tcp), refused in one line otherwise.

    >>> scheduler_address("10.0.0.5:8786"), scheduler_address("tls://[::1]:8786")
    ('tcp://10.0.0.5:8786', 'tls://[::1]:8786')
    >>> scheduler_address("inproc://x")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'inproc://x': the scheme must be tcp or tls (tcp://HOST:PORT)
    """
    given = text if "://" in text else f"tcp://{text}"
    try:
        parts = urlsplit(given)
        port = parts.port
    except ValueError:
        port = None
        parts = None
    if parts is not None and parts.scheme not in SCHEDULER_SCHEMES:
        raise argparse.ArgumentTypeError(
            f"{clip(text)}: the scheme must be {' or '.join(SCHEDULER_SCHEMES)} (tcp://HOST:PORT)"
        )
    if parts is None or not parts.hostname or not port or parts.path or parts.query:
        raise argparse.ArgumentTypeError(f"{clip(text)}: not an address tcp://HOST:PORT")
    return given


def machine_cores() -> int:
    """The cores this process may run on (the affinity mask, not the whole machine)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ClusterSpec:
    """Where a command's tasks run: ``workers`` (a LocalCluster), ``scheduler`` (an
    address), ``config`` (a dask-jobqueue YAML file) or none of them (this process, as
    before); ``shared`` is the folder for data moved as files."""

    workers: int | None = None
    scheduler: str | None = None
    config: Path | None = None
    shared: Path | None = None

    def __post_init__(self) -> None:
        given = [
            n
            for n, v in (
                ("--workers", self.workers),
                ("--scheduler", self.scheduler),
                ("--cluster-config", self.config),
            )
            if v is not None
        ]
        if len(given) > 1:
            raise ValueError(f"{' and '.join(given)} cannot be combined: choose one")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"--workers {self.workers}: must be at least 1")

    @property
    def requested(self) -> bool:
        """Whether any cluster option was given (else the command runs as it always has)."""
        return any(v is not None for v in (self.workers, self.scheduler, self.config, self.shared))

    def arguments(self) -> list[str]:
        """The command-line options that give this spec to another harness command.

        >>> ClusterSpec(workers=2, shared=Path("s")).arguments()
        ['--workers', '2', '--shared', 's']
        >>> ClusterSpec().arguments()
        []
        """
        where: list[str] = []
        if self.workers is not None:
            where = ["--workers", str(self.workers)]
        elif self.scheduler is not None:
            where = ["--scheduler", self.scheduler]
        elif self.config is not None:
            where = ["--cluster-config", str(self.config)]
        return where + ([] if self.shared is None else ["--shared", str(self.shared)])

    def describe(self) -> str:
        if self.scheduler is not None:
            return f"the Dask scheduler at {self.scheduler}"
        if self.config is not None:
            return f"the dask-jobqueue cluster of {self.config}"
        n = self.workers or machine_cores()
        return f"a LocalCluster of {n} worker process{'es' if n != 1 else ''} on 127.0.0.1"


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``cluster`` option group (the same on every command that uses it)."""
    group = parser.add_argument_group(
        "cluster",
        "run the independent pieces on Dask (docs/cluster.md); without these options "
        "everything runs on this machine as before",
    )
    where = group.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=positive(int),
        nargs="?",
        const=0,
        default=None,
        metavar="N",
        help="a Dask LocalCluster of N worker processes on 127.0.0.1 (N: default the "
        f"machine's cores, {machine_cores()} here)",
    )
    where.add_argument(
        "--scheduler",
        type=scheduler_address,
        metavar="ADDRESS",
        help="an existing Dask scheduler, e.g. tcp://10.0.0.5:8786",
    )
    where.add_argument(
        "--cluster-config",
        type=Path,
        metavar="FILE",
        help="a YAML file describing a Slurm/PBS/SGE/LSF cluster for dask-jobqueue",
    )
    group.add_argument(
        "--shared",
        type=Path,
        metavar="DIR",
        help="a folder every worker can read and write (same path everywhere): data moves "
        "through it as files named by content hash",
    )


def cluster_spec(args: argparse.Namespace) -> ClusterSpec:
    """The :class:`ClusterSpec` of parsed arguments (``--workers`` alone: the cores)."""
    workers = getattr(args, "workers", None)
    if workers == 0:
        workers = machine_cores()
    return ClusterSpec(
        workers=workers,
        scheduler=getattr(args, "scheduler", None),
        config=getattr(args, "cluster_config", None),
        shared=getattr(args, "shared", None),
    )
