"""The one task loop (harness.cluster.tasks.TaskQueue) on a LocalCluster of 2 workers:
every task reported once with its tag, tasks added while the loop runs, cancelled tasks
never reported, a task that raised reported with its error, leaving early cancels the rest."""

from __future__ import annotations

import time

import pytest

from harness.cluster import TaskQueue
from tests.cluster.tasks_work import fails, slow, square


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
