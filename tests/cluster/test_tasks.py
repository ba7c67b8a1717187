"""The one task loop (harness.cluster.tasks.TaskQueue) on a LocalCluster of 2 workers (and,
for a killed worker, the hand-started cluster):
every task reported once with its tag, tasks added while the loop runs, cancelled tasks
never reported, a task that raised reported with its error, leaving early cancels the rest."""

from __future__ import annotations

import os
import signal
import time

import pytest
from distributed import wait

from harness.cluster import TaskQueue
from tests.cluster.tasks_work import fails, slow, square

from .conftest import worker_pids


class Bar:
    def __init__(self):
        self.done_by: list[str] = []

    def done(self, worker: str) -> None:
        self.done_by.append(worker)


def test_every_task_once_with_its_tag(local_session):
    bar = Bar()
    queue = TaskQueue(local_session, bar)
    for n in range(6):
        queue.submit(("n", n), square, n)
    ends = list(queue)
    assert sorted(e.tag for e in ends) == [("n", n) for n in range(6)]
    assert all(e.ok and e.value == e.tag[1] ** 2 for e in ends)
    assert len(bar.done_by) == 6 and set(bar.done_by) <= {e.worker for e in ends}
    assert queue.pending() == []


def test_tasks_added_while_the_loop_runs(local_session):
    queue = TaskQueue(local_session)
    queue.submit(1, square, 1)
    seen = []
    for end in queue:
        seen.append(end.tag)
        if end.tag < 4:
            queue.submit(end.tag + 1, square, end.tag + 1)
    assert seen == [1, 2, 3, 4]


def test_a_failed_task_is_reported_with_its_error(local_session):
    queue = TaskQueue(local_session)
    queue.submit("bad", fails, 3)
    queue.submit("good", square, 3)
    ends = {e.tag: e for e in queue}
    assert ends["good"].ok and ends["good"].value == 9
    assert not ends["bad"].ok and isinstance(ends["bad"].error, ValueError)
    assert "no answer for 3" in str(ends["bad"].error)


def test_cancelled_tasks_are_never_reported(local_session):
    queue = TaskQueue(local_session)
    for i in range(4):
        queue.submit(i, slow, 0.5 * i)
    seen = []
    for end in queue:
        seen.append(end.tag)
        queue.cancel()  # whichever finished first, the others' answers no longer matter
    assert len(seen) == 1 and queue.pending() == []


def test_leaving_the_loop_cancels_what_is_queued(local_session):
    queue = TaskQueue(local_session)
    futures = [queue.submit(i, slow, 0.5 * i) for i in range(4)]
    for end in queue:
        first = end.tag
        break
    assert queue.pending() == []
    rest = [f for i, f in enumerate(futures) if i != first]
    deadline = time.monotonic() + 10
    while any(f.status != "cancelled" for f in rest) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [f.status for f in rest] == ["cancelled"] * 3


@pytest.mark.parametrize("which", [None, lambda tag: tag % 2 == 0])
def test_cancel_selects_by_tag(local_session, which):
    queue = TaskQueue(local_session)
    for i in range(4):
        queue.submit(i, slow, 4.0)
    queue.cancel(which)
    assert queue.pending() == ([] if which is None else [1, 3])
    queue.cancel()
    assert list(queue) == []


def test_two_runs_of_one_named_task_never_share_its_key(local_session):
    # A rerun of a stage submits its tasks under the same names. Dask hands a submit of a
    # key it knows the task it already has, so without the queue's token the second run
    # would get the first run's answer (4, not 9) and, after a worker died, even None.
    first, second = TaskQueue(local_session), TaskQueue(local_session)
    held = first.submit("a", square, 2, key="stage-task-0")
    again = second.submit("a", square, 3, key="stage-task-0")
    assert held.key != again.key and held.key.startswith("stage-task-0-")
    assert [e.value for e in second] == [9] and [e.value for e in first] == [4]


def test_a_value_lost_with_its_worker_before_the_loop_reads_it_is_computed_again(
    manual_session,
):
    # The task finished, then the worker holding its value was killed: the loop must not
    # report the task done without a value, but wait for the scheduler to compute it again.
    queue = TaskQueue(manual_session)
    future = queue.submit("lost", square, 7, key="lost-value")
    wait([future])
    (holder,) = manual_session.client.who_has([future])[future.key]
    os.kill(worker_pids(manual_session)[holder], signal.SIGKILL)
    deadline = time.monotonic() + 30
    while future.status == "finished" and time.monotonic() < deadline:
        time.sleep(0.01)  # until the client hears its value is gone
    assert future.status != "finished"
    (end,) = list(queue)
    assert end.ok and end.value == 49 and end.worker is not None
