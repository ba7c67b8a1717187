"""``certify`` with its strategy's subtrees as Dask tasks: the same certificate everywhere.

The certificate of the split build is compared between one process (the same tasks run one
after another, no Dask), a LocalCluster of 2 workers, a hand-started ``dask scheduler`` with
two ``dask worker`` processes, and a run in which one worker is SIGKILLed mid-run; each is
also accepted by the independent checker. The command line is checked to write the same
certificate alone and on a cluster, below and above ``--split-above``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.cert.checker import check_certificate
from harness.cert.format import write_certificate
from harness.cert.split import FRONTIER, SPLIT_ABOVE, build_strategy
from harness.rules import Ruleset
from harness.rules.position import PLAYERS, Position
from harness.solver.proof import ProofSearch
from tests.harness_cli import run_harness

from .conftest import kill_first_busy_worker, worker_env, worker_pids

R5 = "pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump"
R6 = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"
PUBLISHED_5X5 = "c4ab55a91c633ea77aa98ba0d40fc22c6f1f3266d92c57c6efa4502ce8922953"


def certify(ruleset: str, out: Path, session=None, on_submit=None, split_above=0, say=None) -> str:
    """The hash of the certificate of ``ruleset`` as ``certify`` builds it (split, unless
    the search is below ``split_above`` nodes), written to ``out``."""
    rs = Ruleset.from_id(ruleset)
    search = ProofSearch(rs)
    result = search.prove(max_plies=15)
    attacker = PLAYERS.index(result.winner)
    strategy = build_strategy(
        search,
        attacker,
        session,
        split_above=split_above,
        progress=False,
        on_submit=on_submit,
        say=say,
    )
    index = write_certificate(
        out, rs.id, result.winner, Position.initial(rs).text(rs), strategy.layout(20000)
    )
    report = check_certificate(out, ruleset=rs.id)
    assert report.ok, report.errors[:5]
    return index["hash"]


@pytest.fixture(scope="module")
def one_process_5x5(tmp_path_factory) -> str:
    return certify(R5, tmp_path_factory.mktemp("inline") / "cert")


def test_a_local_cluster_gives_the_one_process_certificate(
    one_process_5x5, local_session, tmp_path
) -> None:
    lines: list[str] = []
    assert certify(R5, tmp_path / "cert", local_session, say=lines.append) == one_process_5x5
    # Outside a terminal the tasks' bar is off: the status lines say how far the build got.
    count = int(lines[1].split()[1])
    grown = [line for line in lines if line.endswith("subtrees grown")]
    assert grown == [f"building: {i} of {count} subtrees grown" for i in range(1, count + 1)]


def test_a_hand_started_cluster_gives_the_one_process_certificate(
    one_process_5x5, manual_session, tmp_path
) -> None:
    assert certify(R5, tmp_path / "cert", manual_session) == one_process_5x5


def kill_a_busy_worker(session, killed: list[int]):
    """An ``on_submit`` hook: SIGKILL a worker as soon as it is running a subtree task."""

    def hook(futures) -> None:
        kill_first_busy_worker(session, killed)

    return hook


def test_a_worker_killed_mid_run_changes_nothing(one_process_5x5, manual_session, tmp_path):
    killed: list[int] = []
    hook = kill_a_busy_worker(manual_session, killed)
    assert certify(R5, tmp_path / "cert", manual_session, hook) == one_process_5x5
    assert killed and killed[0] not in worker_pids(manual_session).values()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return run_harness(*args, env=worker_env(), timeout=900)


def summary_of(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_command_line_writes_one_certificate_with_or_without_a_cluster(
    one_process_5x5, tmp_path
) -> None:
    # Below --split-above (the 5x5 search takes ~2,700 nodes) a cluster changes nothing.
    plain = summary_of(run_cli("certify", R5, "--out", str(tmp_path / "plain"), "--json"))
    assert plain["hash"] == PUBLISHED_5X5 and "split" not in plain
    small = summary_of(
        run_cli("certify", R5, "--out", str(tmp_path / "small"), "--json", "--workers", "2")
    )
    assert small["hash"] == PUBLISHED_5X5 and small["split"].startswith("none")
    # Above it, certify alone and certify on a cluster write the same split certificate.
    alone = summary_of(
        run_cli("certify", R5, "--out", str(tmp_path / "alone"), "--json", "--split-above", "0")
    )
    assert alone["hash"] == one_process_5x5 != PUBLISHED_5X5
    assert alone["split"] == "subtrees on this process"
    split = summary_of(
        run_cli(
            "certify",
            R5,
            "--out",
            str(tmp_path / "split"),
            "--json",
            "--split-above",
            "0",
            "--workers",
            "2",
            "--shared",
            str(tmp_path / "shared"),
        )
    )
    assert split["hash"] == one_process_5x5
    assert "LocalCluster of 2" in split["split"]
    # Subtree results went through the shared folder, named by their hash.
    assert len(list((tmp_path / "shared" / "objects").rglob("*"))) > FRONTIER // 2


def test_an_unreachable_scheduler_is_a_one_line_error(tmp_path) -> None:
    r4 = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    done = run_cli("certify", r4, "--out", str(tmp_path / "c"), "--scheduler", "tcp://127.0.0.1:9")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error: --scheduler tcp://127.0.0.1:9")
    assert "Traceback" not in done.stderr and not (tmp_path / "c").exists()


@pytest.mark.slow
def test_the_6x6_research_certificate_on_two_workers_and_with_a_kill(
    manual_session, local_session, tmp_path
) -> None:
    # The 6x6 search (~50,000 nodes) is above the default --split-above: certify alone splits.
    alone = summary_of(run_cli("certify", R6, "--out", str(tmp_path / "alone"), "--json"))
    assert alone["split"] == "subtrees on this process"
    assert certify(R6, tmp_path / "local", local_session, split_above=SPLIT_ABOVE) == alone["hash"]
    killed: list[int] = []
    hook = kill_a_busy_worker(manual_session, killed)
    again = certify(R6, tmp_path / "killed", manual_session, hook, split_above=SPLIT_ABOVE)
    assert again == alone["hash"]
    assert killed


def test_the_node_budget_counts_every_task_on_a_cluster(local_session) -> None:
    # The tasks run at once, each with all that was left; their sum is checked at the end,
    # so a cluster stops where one process stops, and counts what one process counts.
    from harness.cert.split import split_build
    from harness.solver.proof import BudgetExhausted

    def searched() -> ProofSearch:
        search = ProofSearch(Ruleset.from_id(R5))
        assert search.prove(max_plies=9, attackers=(0,)).winner == "x"
        return search

    free = searched()
    before = free.nodes
    alone = split_build(free, 0)
    spent = free.nodes - before
    tight = searched()
    tight.keep_within(spent, 10**6)
    with pytest.raises(BudgetExhausted, match="node budget of 1000000 spent"):
        split_build(tight, 0, local_session, progress=False)
    roomy = searched()
    roomy.keep_within(spent + 1, 10**6)
    built = split_build(roomy, 0, local_session, progress=False)
    assert built.entries == alone.entries
    assert roomy.nodes == free.nodes
