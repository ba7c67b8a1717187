import dataclasses
import json
import subprocess
import sys

import pytest

from harness.rules import corpus
from harness.rules.corpus import BRANCHES, HAND_MADE, CorpusMismatch, branch_counts, build_corpus


@pytest.fixture(scope="module")
def records():
    return build_corpus(seed=7)


def test_every_branch_has_hits(records):
    counts = branch_counts(records)
    assert [b for b in BRANCHES if counts[b] == 0] == []


def test_every_branch_has_a_worked_case():
    worked = set().union(*(c.branches for c in HAND_MADE))
    assert set(BRANCHES) - worked == set()


def test_same_seed_same_corpus_and_other_seed_differs(records):
    assert build_corpus(seed=7) == records
    assert build_corpus(seed=8) != records


def test_records_cover_every_field_value(records):
    fields = [r["ruleset"].split("-") for r in records]
    for index, values in (
        (3, ("reincarnation", "ringout", "blocked", "torus", "klein")),
        (4, ("continue", "draw")),
        (5, ("nomove", "binempty", "always")),
        (6, ("king", "rook", "bishop", "queen", "anywhere")),
        (7, ("zero", "nozero")),
        (8, ("jump", "nojump")),
    ):
        assert {f[index] for f in fields} >= set(values)


def test_a_wrong_worked_answer_is_caught(monkeypatch):
    bad = dataclasses.replace(HAND_MADE[1], next=HAND_MADE[0].next)
    monkeypatch.setattr(corpus, "HAND_MADE", (bad,))
    with pytest.raises(CorpusMismatch, match="push_up"):
        corpus.hand_made_records()


def test_cli_writes_corpus_and_prints_guard_hits(tmp_path):
    out = tmp_path / "corpus"
    run = subprocess.run(
        [sys.executable, "-m", "harness", "corpus", "--out", str(out), "--seed", "3"],
        capture_output=True,
        text=True,
        check=True,
    )
    guard = [line for line in run.stdout.splitlines() if line.startswith("GUARD_HITS ")]
    assert len(guard) == 1
    hits = dict(item.split("=") for item in guard[0].split(" ", 1)[1].split(","))
    assert list(hits) == list(BRANCHES) and all(int(v) > 0 for v in hits.values())
    lines = (out / "corpus.jsonl").read_text().splitlines()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["records"] == len(lines)
    assert {k: str(v) for k, v in summary["branches"].items()} == hits
    first = json.loads(lines[0])
    assert set(first) == {
        "ruleset",
        "history",
        "position",
        "actions",
        "action",
        "next",
        "result",
        "branches",
        "source",
    }
