"""Differential tests: ``python -m harness rules actions|step`` against the independent oracle.

The oracle (``tests/oracle/pop_oracle.py``) was written from docs/rules.md without reading the
reference engine, so agreement on thousands of random reachable positions over every ruleset
field is evidence that both read the rules the same way. Each command runs in a single
subprocess fed with JSON lines, as other engines and tools will use it.

Every disagreement is printed as a one-line repro to paste into a shell. The seed is fixed so a
failure reproduces; set ``POP_DIFF_SEED`` to explore other samples.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.oracle import pop_oracle as po

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("POP_DIFF_SEED", "20240601"))
RULESETS = 200  # random rulesets; each field value appears in many of them
POSITIONS_PER_RULESET = 30
TIMEOUT = 240  # seconds per subprocess; the whole file should take well under a minute

# Branches the random sample must exercise, so a generator that drifted into trivial positions
# fails loudly instead of passing vacuously. ("pop-double-neighbour" cannot happen with
# R, C >= 3, and `rules step` has no history, so "repetition" cannot either.)
REQUIRED_BRANCHES = {
    "place", "move", "zero-move", "pop-push", "pop-fail-occupied", "pop-fail-shared",
    "pop-blocked", "pop-reincarnation", "pop-ringout", "line-mover", "line-opponent",
    "line-both", "ringout-loss", "ringout-draw", "stuck-pass", "stuck-draw", "stuck-both",
}  # fmt: skip

FIELD_VALUES = {
    "edge": po.EDGES,
    "stuck": po.STUCKS,
    "movement": po.MOVEMENTS,
    "pattern": po.PATTERNS,
    "zero": po.ZEROS,
    "jumps": po.JUMPS,
}

# Hand-made positions for branches random play reaches rarely (taken from the oracle's own
# hand-computed tests): (ruleset, position, action).
HAND_MADE = [
    ("pop1-5x5-c4-blocked-continue-binempty-king-nozero-nojump",
     "oo.o./....x/....x/...../..... 2 1 x", "e1"),  # both lines
    ("pop1-5x5-c3-ringout-continue-binempty-king-nozero-nojump",
     "x..../o..../...../...../..... 2 2 x", "b2"),  # both below three: draw
    ("pop1-5x5-c3-blocked-continue-nomove-king-nozero-nojump",
     "o.o.o/...../x...x/...../..... 1 0 x", "c5"),  # both stuck
    ("pop1-5x5-c3-blocked-draw-nomove-king-nozero-nojump",
     "o.o.o/...../...../...../..... 3 0 x", "c5"),  # opponent stuck under draw
    ("pop1-5x5-c3-blocked-continue-nomove-king-nozero-nojump",
     "o.o.o/...../...../...../..... 3 0 x", "c5"),  # opponent passes
    ("pop1-4x4-c4-torus-continue-binempty-king-nozero-nojump",
     "..../o.o./..../.... 4 2 x", "b2"),  # shared target
    ("pop1-4x4-c4-klein-continue-binempty-king-nozero-nojump",
     "..../..../..../.o.. 4 3 x", "b1"),  # Klein twist
    ("pop1-5x5-c4-blocked-continue-binempty-king-zero-nojump",
     "x..../..o../..x../...../x...x 0 3 x", "c3-c3"),  # zero move
]  # fmt: skip


def random_ruleset(rng: random.Random, forced: dict) -> po.Ruleset:
    """A random ruleset; small boards are likelier, since wraps and pushes interact more."""
    rows = rng.choice([3, 3, 4, 4, 5, 6, 7, 8])
    cols = rng.choice([3, 3, 4, 4, 5, 6, 7, 8])
    checkers = rng.choice([3, 3, 4, 4, 5, 6, 8, rng.randint(3, 16)])
    fields = {name: rng.choice(values) for name, values in FIELD_VALUES.items()}
    fields.update(forced)
    return po.parse_ruleset(
        f"pop1-{rows}x{cols}-c{checkers}-{fields['edge']}-{fields['stuck']}-"
        f"{fields['movement']}-{fields['pattern']}-{fields['zero']}-{fields['jumps']}"
    )


def rulesets(rng: random.Random) -> list[po.Ruleset]:
    # Cycle through every value of every field so each one is guaranteed to appear.
    result = []
    for i in range(RULESETS):
        name = list(FIELD_VALUES)[i % len(FIELD_VALUES)]
        values = FIELD_VALUES[name]
        result.append(random_ruleset(rng, {name: values[(i // len(FIELD_VALUES)) % len(values)]}))
    return result


def reachable_sample(rs: po.Ruleset, rng: random.Random, count: int) -> list[po.Position]:
    """Positions met in random games from the initial position (only non-terminal ones)."""
    seen: dict[str, po.Position] = {}
    attempts = 0
    while len(seen) < count and attempts < 4 * count:
        attempts += 1
        pos = po.initial_position(rs)
        # Long enough to empty both bins and then move for a while.
        for _ in range(rng.randint(0, 2 * rs.checkers + 30)):
            actions = po.legal_actions(rs, pos)
            out = po.play(rs, pos, rng.choice(actions), check=False)
            if out.result is not None:
                break
            pos = out.next
        seen.setdefault(po.format_position(rs, pos), pos)
    return list(seen.values())


def illegal_action(rs: po.Ruleset, pos: po.Position, rng: random.Random) -> str | None:
    """A well-formed action on the board that the oracle says is illegal here."""
    legal = {po.format_action(a) for a in po.legal_actions(rs, pos)}
    for _ in range(50):
        a, b = rng.choice(rs.squares), rng.choice(rs.squares)
        text = po.format_action(rng.choice([("place", a), ("move", a, b), ("move", a, a)]))
        if text not in legal:
            return text
    return None


def run_lines(command: str, requests: list[dict | str], errors: bool = False) -> list[dict]:
    """Feed JSON lines to one ``python -m harness rules COMMAND`` process; one answer each.

    With ``errors`` some lines are meant to be refused: the exit code may then report that
    (non-zero), but the process must not crash and must still answer every line."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in requests]
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "rules", command],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=TIMEOUT,
    )
    allowed = (0, 1, 2) if errors else (0,)
    assert proc.returncode in allowed and "Traceback" not in proc.stderr, (
        f"rules {command} exited {proc.returncode}: {proc.stderr[-2000:]}"
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(answers) == len(lines), f"{len(lines)} requests, {len(answers)} answers"
    return answers


def repro(command: str, request: dict) -> str:
    return f"echo {shlex.quote(json.dumps(request))} | python -m harness rules {command}"


def report(disagreements: list[str], total: int, what: str) -> None:
    if disagreements:
        shown = "\n".join(disagreements[:25])
        pytest.fail(f"{len(disagreements)} of {total} {what} disagree with the oracle:\n{shown}")


@pytest.fixture(scope="module")
def sample():
    """Random reachable positions over every field, and the actions to step with."""
    rng = random.Random(SEED)
    positions = []  # (ruleset, position)
    steps = []  # (ruleset, position, action)
    for rs in rulesets(rng):
        for pos in reachable_sample(rs, rng, POSITIONS_PER_RULESET):
            positions.append((rs, pos))
            actions = po.legal_actions(rs, pos)
            # Small positions: every action (so rare endings show up); large ones: a few.
            chosen = actions if len(actions) <= 12 else rng.sample(actions, 3)
            steps += [(rs, pos, po.format_action(a)) for a in chosen]
    for rid, text, action in HAND_MADE:
        rs = po.parse_ruleset(rid)
        positions.append((rs, po.parse_position(rs, text)))
        steps.append((rs, po.parse_position(rs, text), action))
    return positions, steps


def test_sample_covers_every_field_and_branch(sample):
    positions, steps = sample
    idents = {rs.ident for rs, _ in positions}
    parts = [ident.split("-") for ident in idents]
    for index, values in enumerate(FIELD_VALUES.values(), start=3):
        assert {p[index] for p in parts} == set(values)
    branches = Counter()
    for rs, pos, action in steps:
        branches.update(set(po.play(rs, pos, po.parse_action(rs, action), check=False).branches))
    missing = REQUIRED_BRANCHES - set(branches)
    assert not missing, f"branches never exercised: {sorted(missing)}; hits: {dict(branches)}"
    print(
        f"differential sample: {len(positions)} positions, {len(steps)} steps, "
        f"{len(idents)} rulesets; branch hits {dict(sorted(branches.items()))}"
    )
    assert len(positions) >= 2000 and len(steps) >= 4000


def compare_actions(positions: list[tuple]) -> None:
    requests = [
        {"ruleset": rs.ident, "position": po.format_position(rs, pos)} for rs, pos in positions
    ]
    answers = run_lines("actions", requests)
    disagreements = []
    for (rs, pos), request, answer in zip(positions, requests, answers, strict=True):
        expected = {po.format_action(a) for a in po.legal_actions(rs, pos)}
        got = answer.get("actions")
        if not isinstance(got, list):
            disagreements.append(f"{repro('actions', request)}\n  got {answer}")
            continue
        duplicates = sorted(a for a, n in Counter(got).items() if n > 1)
        if set(got) != expected or duplicates:
            disagreements.append(
                f"{repro('actions', request)}\n  missing {sorted(expected - set(got))}"
                f" extra {sorted(set(got) - expected)} duplicated {duplicates}"
            )
    report(disagreements, len(requests), "positions")


def compare_steps(steps: list[tuple]) -> None:
    rng = random.Random(SEED + 2)  # its own, so a test's selection never changes the sample
    requests, expected = [], []
    for rs, pos, action in steps:
        text = po.format_position(rs, pos)
        requests.append({"ruleset": rs.ident, "position": text, "action": action})
        out = po.play(rs, pos, po.parse_action(rs, action), check=False)
        expected.append({"next": po.format_position(rs, out.next), "result": out.result})
    # Illegal but well-formed actions: the engine must refuse them, not play them.
    for rs, pos, _ in steps[::5]:
        action = illegal_action(rs, pos, rng)
        if action is not None:
            text = po.format_position(rs, pos)
            requests.append({"ruleset": rs.ident, "position": text, "action": action})
            expected.append(None)
    answers = run_lines("step", requests, errors=True)
    disagreements = []
    for request, want, answer in zip(requests, expected, answers, strict=True):
        if want is None:
            if "error" not in answer:
                disagreements.append(f"{repro('step', request)}\n  illegal, but got {answer}")
        elif answer != want:
            disagreements.append(f"{repro('step', request)}\n  oracle {want}\n  engine {answer}")
    report(disagreements, len(requests), "steps")


def test_legal_actions_agree(sample):
    compare_actions(sample[0])


def test_steps_agree(sample):
    compare_steps(sample[1])


def arbitrary_position(rs: po.Ruleset, rng: random.Random) -> po.Position | None:
    """A valid position not necessarily reachable: random squares for each colour, bins that
    complete the count (or, under ringout, any smaller count), either player to move."""
    squares = rs.squares
    rng.shuffle(squares)
    most = min(rs.checkers, len(squares) // 2)
    nx, no = rng.randint(0, most), rng.randint(0, most)
    board = {sq: "x" for sq in squares[:nx]} | {sq: "o" for sq in squares[nx : nx + no]}
    if po.line_owners(rs, board):
        return None  # a line on the board would already have ended any game
    left = [rs.checkers - nx, rs.checkers - no]
    if rs.edge == "ringout":
        left = [rng.randint(0, n) for n in left]
    return po.Position(board, (left[0], left[1]), rng.choice("xo"))


def test_arbitrary_valid_positions_agree():
    """Positions off the beaten path of random play: crowded or sparse boards, full or empty
    bins in any combination, a player to move who may have no action at all."""
    rng = random.Random(SEED + 1)
    positions, steps = [], []
    while len(positions) < 1500:
        rs = random_ruleset(rng, {})
        pos = arbitrary_position(rs, rng)
        if pos is None:
            continue
        positions.append((rs, pos))
        actions = po.legal_actions(rs, pos)
        steps += [(rs, pos, po.format_action(a)) for a in rng.sample(actions, min(3, len(actions)))]
    assert any(not po.has_action(rs, pos) for rs, pos in positions)  # some stuck movers
    compare_actions(positions)
    compare_steps(steps)


DEFAULT = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"
EMPTY = "....../....../....../....../....../...... 8 8 x"

BOTH, STEP = ("actions", "step"), ("step",)
MALFORMED = [  # (line, the commands for which it is malformed)
    ("this is not json", BOTH),
    ("[1, 2, 3]", BOTH),
    (json.dumps({"position": EMPTY, "action": "a1"}), BOTH),  # no ruleset
    (json.dumps({"ruleset": DEFAULT, "action": "a1"}), BOTH),  # no position
    (json.dumps({"ruleset": DEFAULT, "position": EMPTY}), STEP),  # no action
    (json.dumps({"ruleset": "pop1-6x6-c8-sphere-continue-binempty-king-nozero-nojump",
                 "position": EMPTY, "action": "a1"}), BOTH),  # unknown edge
    (json.dumps({"ruleset": "pop1-9x9-c8-torus-continue-binempty-king-nozero-nojump",
                 "position": EMPTY, "action": "a1"}), BOTH),  # board out of range
    (json.dumps({"ruleset": DEFAULT, "position": "....../...... 8 8 x", "action": "a1"}),
     BOTH),  # two rows on a six-row board
    (json.dumps({"ruleset": DEFAULT, "position": EMPTY.replace(".", "q", 1), "action": "a1"}),
     BOTH),  # unknown character
    (json.dumps({"ruleset": DEFAULT, "position": EMPTY.replace(" 8 8 ", " 9 8 "),
                 "action": "a1"}), BOTH),  # bin above the count
    (json.dumps({"ruleset": DEFAULT, "position": EMPTY.replace(" 8 8 ", " 7 8 "),
                 "action": "a1"}), BOTH),  # a removed checker on the torus
    (json.dumps({"ruleset": DEFAULT, "position": EMPTY, "action": "z9"}), STEP),  # off board
    (json.dumps({"ruleset": DEFAULT, "position": EMPTY, "action": "a1-"}), STEP),
    (json.dumps({"ruleset": DEFAULT, "position": EMPTY, "action": "a1-b2"}), STEP),  # bin full
]  # fmt: skip


@pytest.mark.parametrize("command", ["actions", "step"])
def test_malformed_lines_get_an_error_and_the_stream_goes_on(command):
    good = {"ruleset": DEFAULT, "position": EMPTY}
    if command == "step":
        good["action"] = "c3"
        want_good = dict(zip(("next", "result"), po.play_text(DEFAULT, EMPTY, "c3"), strict=True))
    bad_lines = [line for line, commands in MALFORMED if command in commands]
    # Every bad line is followed by a good one, whose answer shows the stream went on.
    answers = run_lines(command, [x for bad in bad_lines for x in (bad, good)], errors=True)
    for i, bad in enumerate(bad_lines):
        error, after = answers[2 * i], answers[2 * i + 1]
        assert set(error) == {"error"} and error["error"], (bad, error)
        if command == "actions":
            assert set(after["actions"]) == set(po.actions_text(DEFAULT, EMPTY)), (bad, after)
        else:
            assert after == want_good, (bad, after)


def test_transition_corpus_agrees_with_oracle(tmp_path):
    """Every record of ``python -m harness corpus`` (hand-made branch cases, game records with
    repetition, random games) replayed by the oracle: the corpus is what the browser and Lean
    engines are checked against, so it must itself be right. Unlike ``rules step`` it carries a
    game history, so this is where repetition is compared."""
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "corpus", "--out", str(tmp_path), "--seed", str(SEED)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in (tmp_path / "corpus.jsonl").read_text().splitlines()]
    assert len(records) >= 1000
    disagreements = []
    repetitions = 0
    for record in records:
        rs = po.parse_ruleset(record["ruleset"])
        pos = po.parse_position(rs, record["position"])
        history = [po.parse_position(rs, text) for text in record["history"]] + [pos]
        actions = {po.format_action(a) for a in po.legal_actions(rs, pos)}
        out = po.play(rs, pos, po.parse_action(rs, record["action"]), history=history)
        repetitions += "repetition" in out.branches
        want = (actions, po.format_position(rs, out.next), out.result)
        got = (set(record["actions"]), record["next"], record["result"])
        if want != got:
            disagreements.append(
                f"corpus record {record['source']}: {json.dumps(record)[:600]}\n"
                f"  corpus lacks {sorted(want[0] - got[0])}, has extra {sorted(got[0] - want[0])}"
                f"\n  oracle next {want[1]!r} result {want[2]!r}"
            )
    report(disagreements, len(records), "corpus records")
    assert repetitions > 0, "the corpus should contain repetition draws"
