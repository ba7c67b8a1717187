"""A Dask client for one command: start or join a cluster, submit tasks, show progress.

>>> from harness.cluster.options import ClusterSpec
>>> with Session(ClusterSpec(workers=1), quiet=True) as session:   # doctest: +SKIP
...     session.submit(pow, 2, 10).result().value
1024
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.bounded import TooDeepError, load_yaml, one_line, read_text, reason
from harness.cluster.options import ClusterSpec, machine_cores
from harness.cluster.store import SharedStore
from harness.errors import HarnessError

# dask-jobqueue's cluster classes by the names a config file uses.
JOBQUEUE = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster", "lsf": "LSFCluster"}
CONNECT_TIMEOUT = 10  # seconds to reach an existing scheduler and finish its handshake
MAX_CONFIG_BYTES = 1 << 20  # a --cluster-config file


@dataclass(frozen=True)
class Traced:
    """A task's value and the worker that computed it (for the per-worker counts)."""

    worker: str
    value: Any


def _worker_name() -> str:
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return "local"
    return str(worker.name)


def _unwrap(arg: Any) -> Any:
    if isinstance(arg, Traced):
        return arg.value
    if isinstance(arg, list | tuple) and any(isinstance(a, Traced) for a in arg):
        return type(arg)(_unwrap(a) for a in arg)
    return arg


def traced(fn: Callable, *args: Any, **kwargs: Any) -> Traced:
    """Run ``fn`` on the arguments (a dependency's :class:`Traced` unwrapped to its value)."""
    args = tuple(_unwrap(a) for a in args)
    kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
    return Traced(_worker_name(), fn(*args, **kwargs))


def load_config(path: Path) -> tuple[str, dict, dict]:
    """(kind, keyword arguments for the dask-jobqueue class, scaling) from a YAML file.

    The file names the batch system and the size, and passes everything else on::

        kind: slurm          # slurm | pbs | sge | lsf
        jobs: 4              # or: adapt: {minimum_jobs: 0, maximum_jobs: 20}
        cores: 16
        processes: 16        # Dask worker processes per job (one per core: CPU-bound work)
        memory: 64GB
        walltime: "04:00:00"
        account: myproject
        queue: compute
        job_script_prologue: ["source ~/venvs/pop/bin/activate"]
    """
    import yaml

    try:
        text = read_text(path, MAX_CONFIG_BYTES, "cluster config")
        data = load_yaml(text, what=f"--cluster-config {path}")
    except TooDeepError as exc:
        raise HarnessError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise HarnessError(
            f"--cluster-config {path}: cannot read it: {reason(exc, path)}"
        ) from None
    except yaml.YAMLError as exc:
        raise HarnessError(
            f"--cluster-config {path}: not YAML: {one_line(str(exc), 200)}"
        ) from None
    if not isinstance(data, dict):
        raise HarnessError(f"--cluster-config {path}: expected a mapping of settings")
    data = dict(data)
    kind = str(data.pop("kind", "")).lower()
    if kind not in JOBQUEUE:
        raise HarnessError(
            f"--cluster-config {path}: kind {kind or '(missing)'!r}; expected one of "
            + ", ".join(sorted(JOBQUEUE))
        )
    scale: dict = {}
    if "jobs" in data:
        scale["jobs"] = data.pop("jobs")
        if not isinstance(scale["jobs"], int) or scale["jobs"] < 1:
            raise HarnessError(f"--cluster-config {path}: jobs must be a positive whole number")
    if "adapt" in data:
        adapt = data.pop("adapt")
        if not isinstance(adapt, dict):
            raise HarnessError(f"--cluster-config {path}: adapt must be a mapping")
        scale["adapt"] = adapt
    if not scale:
        scale["jobs"] = 1
    return kind, data, scale


def jobqueue_cluster(path: Path):
    """A started dask-jobqueue cluster for a config file (see :func:`load_config`)."""
    kind, kwargs, scale = load_config(path)
    if importlib.util.find_spec("dask_jobqueue") is None:
        raise HarnessError(
            "--cluster-config needs dask-jobqueue: pip install 'pop-harness[cluster]'"
        )
    import dask_jobqueue

    cls = getattr(dask_jobqueue, JOBQUEUE[kind])
    try:
        cluster = cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise HarnessError(f"--cluster-config {path}: {JOBQUEUE[kind]}: {exc}") from None
    if "adapt" in scale:
        cluster.adapt(**scale["adapt"])
    else:
        cluster.scale(jobs=scale["jobs"])
    return cluster


def probe_scheduler(address: str, deadline: float = CONNECT_TIMEOUT) -> dict:
    """The identity a Dask scheduler at ``address`` reports, asked within ``deadline``
    seconds in all, or a one-line :class:`HarnessError` naming ``--scheduler``.

    Dask's own connect timeout covers the TCP connect alone: a listener that accepts and
    never speaks would hold its handshake for ever, and one that speaks another protocol
    fails in Dask's decoder with whatever that raises. This asks through Dask's own comm
    layer, on a loop of its own, under one deadline for the connect, the handshake and the
    answer, so a client is made only for a scheduler that has answered as one.
    """
    import asyncio

    from distributed.comm import connect

    async def ask() -> object:
        comm = await connect(address, timeout=deadline)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        reply = asyncio.run(asyncio.wait_for(ask(), deadline))
    except TimeoutError:
        why = f"no Dask scheduler answered within {deadline:g} s (is one listening there?)"
    except OSError as exc:
        why = f"cannot reach a Dask scheduler there ({one_line(str(exc), 200)})"
    except Exception as exc:  # noqa: BLE001 - whatever a stranger's bytes make Dask raise
        what = one_line(str(exc), 120) or "no message"
        why = f"what answers there is not a Dask scheduler ({type(exc).__name__}: {what})"
    else:
        if isinstance(reply, dict) and reply.get("type") == "Scheduler":
            return reply
        why = "what answers there is not a Dask scheduler (it did not say it was one)"
    raise HarnessError(f"--scheduler {address}: {why}")


class Session:
    """The Dask client of one command (a context manager; closes what it started).

    ``spec`` says where to run (see :class:`ClusterSpec`); a LocalCluster has one
    single-threaded worker *process* per core asked for (the work is CPU-bound Python),
    listening on 127.0.0.1 only. The dashboard is served on 127.0.0.1 when Bokeh is
    installed, and its address printed; ``quiet`` prints nothing.
    """

    def __init__(self, spec: ClusterSpec, *, quiet: bool = False, env: dict | None = None):
        self.spec = spec
        self.quiet = quiet
        self.env = env
        self.client = None
        self.cluster = None
        self.store = None if spec.shared is None else SharedStore(spec.shared)

    # --- opening and closing ----------------------------------------------------------

    def __enter__(self) -> Session:
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> None:
        from distributed import Client, LocalCluster

        spec = self.spec
        if spec.scheduler is not None:
            probe_scheduler(spec.scheduler)
            try:
                self.client = Client(spec.scheduler, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise HarnessError(
                    f"--scheduler {spec.scheduler}: cannot reach a Dask scheduler there ({exc})"
                ) from None
        else:
            if spec.config is not None:
                self.cluster = jobqueue_cluster(spec.config)
            else:
                self.cluster = LocalCluster(
                    n_workers=spec.workers or machine_cores(),
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    scheduler_port=0,
                    # An ephemeral port on loopback: None would mean Dask's default :8787.
                    dashboard_address="127.0.0.1:0",
                    # CRITICAL: a worker still busy with a cancelled task when the command
                    # ends logs heartbeat errors (tracebacks) while it is shut down; a real
                    # task failure reaches us through its future, named, in one line.
                    silence_logs=logging.CRITICAL,
                    env=self.env,
                )
            self.client = Client(self.cluster)
        link = self.dashboard()
        if not self.quiet:
            where = spec.describe()
            extra = f"; dashboard {link}" if link else ""
            print(f"cluster: {where}{extra}", file=sys.stderr)

    def dashboard(self) -> str | None:
        """The dashboard's address, or None when there is none (no Bokeh on the scheduler)."""
        if self.client is None:
            return None
        try:
            services = self.client.scheduler_info().get("services", {})
        except (OSError, TimeoutError):
            return None
        # Without Bokeh the port serves only health and metrics, not a dashboard.
        if "dashboard" not in services or importlib.util.find_spec("bokeh") is None:
            return None
        return self.client.dashboard_link

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None

    # --- work ---------------------------------------------------------------------------

    def submit(self, fn: Callable, *args: Any, key: str | None = None, **kwargs: Any):
        """``client.submit`` of ``fn`` wrapped in :func:`traced`: a future of a :class:`Traced`.

        ``retries=0``: a task that raises is reported, not retried; a lost worker's tasks
        are rerun by the scheduler (see :mod:`harness.cluster`).
        """
        assert self.client is not None, "the session is not open"
        return self.client.submit(traced, fn, *args, key=key, pure=False, retries=0, **kwargs)

    def workers(self) -> dict[str, dict]:
        """The workers the scheduler knows now: address -> info (``name``, ``pid``, …)."""
        assert self.client is not None
        return dict(self.client.scheduler_info().get("workers", {}))

    def bar(self, total: int, desc: str, *, unit: str = "task", progress: bool | None = None):
        """A :class:`TaskBar` (shown only on a terminal unless ``progress`` says otherwise)."""
        return TaskBar(total, desc, unit=unit, progress=progress)


class TaskBar:
    """One tqdm bar over a stage's tasks, with how many each worker did as its postfix;
    quiet when stderr is not a terminal (CI logs)."""

    def __init__(self, total: int, desc: str, *, unit: str = "task", progress: bool | None = None):
        if progress is None:
            progress = sys.stderr.isatty()
        self.counts: Counter[str] = Counter()
        from tqdm import tqdm  # here, not at import: tqdm's import costs a solve 3 MB of RSS

        self._bar = tqdm(total=total, desc=desc, unit=unit, disable=not progress, file=sys.stderr)

    def done(self, worker: str, n: int = 1) -> None:
        self.counts[worker] += n
        self._bar.set_postfix_str(
            " ".join(f"{w}:{c}" for w, c in sorted(self.counts.items())), refresh=False
        )
        self._bar.update(n)

    def add(self, n: int) -> None:
        """More tasks than first counted (a subtree re-split into pieces)."""
        self._bar.total += n
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> TaskBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
