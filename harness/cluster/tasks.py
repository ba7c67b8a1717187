"""The one loop that collects a stage's tasks as they finish: Dask's ``as_completed`` over
futures of :meth:`Session.submit <harness.cluster.session.Session.submit>`, each tagged with
what the stage needs to know about it (a module, a subtree, a cell).

Tasks can be added while the loop runs (a module released when its imports passed, a
subtree split into its children) and cancelled (work whose answer no longer matters); a
cancelled task is never reported. A task that raised, or that was lost with every worker
that ran it (:class:`distributed.KilledWorker`), is reported once as a :class:`Finished`
with its ``error``; the stage decides what that means.

A key given to :meth:`TaskQueue.submit` is a readable name; the queue adds its own token
to it, so two runs on one scheduler never share a key: Dask treats a key it already knows
as the same task, so a rerun of a stage would otherwise be handed the last run's task of
that name, computed from the last run's inputs.

A task's value is read when the loop reaches it, not when it finished: a worker that died
in between took the value with it, and the loop waits for the scheduler to compute it again.

>>> Finished("cell-3", value=7, worker="0").ok, Finished("cell-3", error=OSError()).ok
(True, False)
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Finished:
    """How one task ended: its tag, and its value and worker, or the exception it raised."""

    tag: Any
    value: Any = None
    worker: str | None = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class TaskQueue:
    """Tasks on a :class:`~harness.cluster.session.Session`, yielded as they finish.

    ``bar`` (a :class:`~harness.cluster.session.TaskBar`, optional) counts every task that
    finished, by worker. Leaving the loop early (``break``, an exception) cancels what is
    still queued.
    """

    def __init__(self, session, bar=None) -> None:
        from distributed import as_completed  # here: the package imports without Dask

        self.session = session
        self.bar = bar
        self._done = as_completed(loop=session.client.loop)  # this session's, not the default
        self._queued: dict[str, tuple[Any, Any]] = {}  # future key -> (future, tag)
        self.token = uuid.uuid4().hex[:12]  # added to every key: unique to this queue

    def submit(self, tag: Any, fn: Callable, *args: Any, key: str | None = None, **kw: Any):
        """Submit ``fn(*args)`` (see :meth:`Session.submit`) under ``tag``; its future. Its
        Dask key is ``key`` followed by this queue's token (Dask's own key without one)."""
        if key is not None:
            key = f"{key}-{self.token}"
        future = self.session.submit(fn, *args, key=key, **kw)
        self._queued[future.key] = (future, tag)
        self._done.add(future)
        return future

    def pending(self) -> list:
        """The tags of the tasks submitted and not yet reported, in submission order."""
        return [tag for _, tag in self._queued.values()]

    def cancel(self, which: Callable[[Any], bool] | None = None) -> None:
        """Cancel the queued tasks whose tag ``which`` accepts (all of them without it)."""
        keys = [k for k, (_, tag) in self._queued.items() if which is None or which(tag)]
        if keys:
            self.session.client.cancel([self._queued.pop(k)[0] for k in keys])

    def __iter__(self) -> Iterator[Finished]:
        try:
            for future in self._done:
                entry = self._queued.pop(future.key, None)
                if entry is None:
                    continue  # cancelled: its answer no longer mattered
                tag = entry[1]
                # Not ``status``: a finished task whose worker died since is computed again
                # (its status is back to pending), so its value is asked for, which waits.
                try:
                    traced = future.result()
                except Exception as exc:  # the task raised, or was lost with every worker
                    yield Finished(tag, error=exc)
                    continue
                if self.bar is not None:
                    self.bar.done(traced.worker)
                yield Finished(tag, traced.value, traced.worker)
        finally:
            self.cancel()


__all__ = ["Finished", "TaskQueue"]
