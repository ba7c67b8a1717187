"""The transition corpus: what every other engine (numpy, browser, Lean) is checked against.

One JSON line per transition, from the reference engine::

    {"ruleset": ID, "history": [TEXT, ...], "position": TEXT, "actions": [TEXT, ...],
     "action": TEXT, "next": TEXT, "result": "x" | "o" | "draw" | null,
     "branches": [NAME, ...], "source": "hand:NAME" | "random"}

``history`` holds the game's earlier positions (oldest first) for repetition, not including
``position``, which counts as having occurred too; ``actions`` is
every legal action of ``position`` in the engine's order; ``branches`` names the rule
branches the transition exercised, from :data:`BRANCHES`.

The corpus has two parts: :data:`HAND_MADE` transitions, one or more per rule branch,
written in notation with the answer worked out by hand (the generator refuses to write a
corpus whose engine disagrees with them), and random transitions from random games over every
value of every ruleset field. The same seed gives the same corpus, byte for byte.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.atomic import write_atomic_many
from harness.rules.engine import Game, apply_action, legal_actions
from harness.rules.position import Action, Position
from harness.rules.ruleset import EDGES, MOVEMENTS, PATTERNS, STUCK_RULES, Ruleset

# Every rule branch a transition can exercise, in the order GUARD_HITS lists them.
BRANCHES: tuple[str, ...] = (
    "place",
    "move_king",
    "move_rook",
    "move_bishop",
    "move_queen",
    "move_anywhere",
    "move_zero",
    "move_jump",
    "move_from_edge",
    "push",
    "push_wrap",
    "push_twist",
    "fall_reincarnation",
    "fall_ringout",
    "fall_blocked",
    "push_blocked_occupied",
    "push_blocked_shared",
    "line_horizontal",
    "line_vertical",
    "line_diagonal",
    "line_antidiagonal",
    "line_wrapped",
    "win_mover",
    "win_opponent",
    "draw_lines",
    "ringout_loss",
    "ringout_draw",
    "repetition_draw",
    "stuck_pass",
    "stuck_draw",
    "stuck_both_draw",
)


def _rs(board: str = "5x5", c: int = 8, edge: str = "blocked", **fields: str) -> str:
    f = {"stuck": "continue", "movement": "binempty", "pattern": "king", "zero": "nozero"}
    f.update(fields)
    jump = f.pop("jump", "nojump")
    return (
        f"pop1-{board}-c{c}-{edge}-{f['stuck']}-{f['movement']}-{f['pattern']}-{f['zero']}-{jump}"
    )


@dataclass(frozen=True)
class HandCase:
    """A transition worked out by hand: the engine must give exactly ``next`` and ``result``
    and exercise at least ``branches``."""

    name: str
    ruleset: str
    position: str
    action: str
    next: str
    result: str | None
    branches: frozenset[str]
    history: tuple[str, ...] = ()
    absent_actions: tuple[str, ...] = ()  # actions that must not be legal (e.g. wrapped moves)


def _case(name, ruleset, position, action, next_, result, branches, history=(), absent=()):
    return HandCase(
        name,
        ruleset,
        position,
        action,
        next_,
        result,
        frozenset(branches),
        tuple(history),
        tuple(absent),
    )


TORUS4 = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
ALWAYS = {"movement": "always"}

HAND_MADE: tuple[HandCase, ...] = (
    _case(
        "place_on_empty_board",
        TORUS4,
        "..../..../..../.... 8 8 x",
        "b2",
        "..../.x../..../.... 7 8 o",
        None,
        {"place"},
    ),
    _case(
        "push_up",
        _rs(),
        "...../..o../...../...../..... 8 7 x",
        "c3",
        "..o../...../..x../...../..... 7 7 o",
        None,
        {"place", "push"},
    ),
    _case(
        "push_and_wrap_on_torus",
        _rs(edge="torus"),
        "..o../...../...../...../..... 8 7 x",
        "c2",
        "...../..x../...../...../..o.. 7 7 o",
        None,
        {"place", "push", "push_wrap"},
    ),
    _case(
        "push_wraps_columns_on_klein",
        _rs(edge="klein"),
        "...../...../....o/...../..... 8 7 x",
        "a3",
        "...../...../x..o./...../..... 7 7 o",
        None,
        {"place", "push", "push_wrap"},
    ),
    _case(
        "push_twists_on_klein",
        _rs(edge="klein"),
        ".o.../...../...../...../..... 8 7 x",
        "b2",
        "...../.x.../...../...../...o. 7 7 o",
        None,
        {"place", "push", "push_wrap", "push_twist"},
    ),
    _case(
        "neighbour_across_the_twist",
        _rs(edge="klein"),
        "...../...../...../...../..o.. 8 7 x",
        "b1",
        ".x.../...../...../.o.../..... 7 7 o",
        None,
        {"place", "push", "push_wrap", "push_twist"},
    ),
    _case(
        "fall_blocked_stays",
        _rs(),
        "..o../...../...../...../..... 8 7 x",
        "c2",
        "..o../..x../...../...../..... 7 7 o",
        None,
        {"place", "fall_blocked"},
    ),
    _case(
        "fall_reincarnation_returns_to_bin",
        _rs(edge="reincarnation"),
        "..o../...../...../...../..... 8 7 x",
        "c2",
        "...../..x../...../...../..... 7 8 o",
        None,
        {"place", "fall_reincarnation"},
    ),
    _case(
        "fall_ringout_leaves_the_game",
        _rs(edge="ringout"),
        "..o../...../...../...../..... 8 7 x",
        "c2",
        "...../..x../...../...../..... 7 7 o",
        None,
        {"place", "fall_ringout"},
    ),
    _case(
        "push_fails_on_occupied_target",
        _rs(),
        "..x../..o../...../...../..... 7 7 x",
        "c3",
        "..x../..o../..x../...../..... 6 7 o",
        None,
        {"place", "push_blocked_occupied"},
    ),
    _case(
        "push_fails_on_shared_target",
        TORUS4,
        ".o.o/..../..../.... 8 6 x",
        "a1",
        "xo.o/..../..../.... 7 6 o",
        None,
        {"place", "push_blocked_shared"},
    ),
    _case(
        "move_king",
        _rs(**ALWAYS),
        "...../.x.../...../...../..... 7 8 x",
        "b2-c3",
        "...../...../..x../...../..... 7 8 o",
        None,
        {"move_king"},
    ),
    _case(
        "move_rook",
        _rs(pattern="rook", **ALWAYS),
        "x..../...../...../...../..... 7 8 x",
        "a1-a4",
        "...../...../...../x..../..... 7 8 o",
        None,
        {"move_rook"},
    ),
    _case(
        "move_bishop",
        _rs(pattern="bishop", **ALWAYS),
        "x..../...../...../...../..... 7 8 x",
        "a1-c3",
        "...../...../..x../...../..... 7 8 o",
        None,
        {"move_bishop"},
    ),
    _case(
        "move_queen",
        _rs(pattern="queen", **ALWAYS),
        "x..../...../...../...../..... 7 8 x",
        "a1-e5",
        "...../...../...../...../....x 7 8 o",
        None,
        {"move_queen"},
    ),
    _case(
        "move_anywhere",
        _rs(pattern="anywhere", **ALWAYS),
        "x..../...../...../...../..... 7 8 x",
        "a1-d2",
        "...../...x./...../...../..... 7 8 o",
        None,
        {"move_anywhere"},
    ),
    _case(
        "zero_move_pops_again",
        _rs(zero="zero", **ALWAYS),
        "...../..o../..x../...../..... 7 7 x",
        "c3-c3",
        "..o../...../..x../...../..... 7 7 o",
        None,
        {"move_king", "move_zero", "push"},
    ),
    _case(
        "rook_jumps_over",
        _rs(pattern="rook", jump="jump", **ALWAYS),
        "x..../o..../...../...../..... 7 7 x",
        "a1-a4",
        "...../o..../...../x..../..... 7 7 o",
        None,
        {"move_rook", "move_jump"},
    ),
    _case(
        "rook_stops_without_jump",
        _rs(pattern="rook", **ALWAYS),
        "x..../o..../...../...../..... 7 7 x",
        "a1-b1",
        ".x.../o..../...../...../..... 7 7 o",
        None,
        {"move_rook"},
        absent=("a1-a3", "a1-a4", "a1-a5"),
    ),
    _case(
        "movement_never_wraps",
        _rs(board="4x4", edge="torus", **ALWAYS),
        "x.../..../..../.... 7 8 x",
        "a1-b2",
        "..../.x../..../.... 7 8 o",
        None,
        {"move_king", "move_from_edge"},
        absent=("a1-d1", "a1-a4", "a1-d4", "a1-d2", "a1-b4"),
    ),
    _case(
        "line_horizontal_mover_wins",
        _rs(),
        "...../..x../xx.../...../..... 5 8 x",
        "c1",
        "..x../...../xxx../...../..... 4 8 o",
        "x",
        {"place", "push", "line_horizontal", "win_mover"},
    ),
    _case(
        "line_vertical_opponent_wins",
        _rs(),
        "o..../o..../.o.../...../..... 8 5 x",
        "c3",
        "o..../o..../o.x../...../..... 7 5 o",
        "o",
        {"place", "push", "line_vertical", "win_opponent"},
    ),
    _case(
        "line_diagonal",
        _rs(),
        "x..../.x.../...../..x../..... 5 8 x",
        "c5",
        "x..../.x.../..x../...../..x.. 4 8 o",
        "x",
        {"place", "push", "line_diagonal", "win_mover"},
    ),
    _case(
        "line_antidiagonal",
        _rs(),
        "....x/...x./...../..x../..... 5 8 x",
        "c5",
        "....x/...x./..x../...../..x.. 4 8 o",
        "x",
        {"place", "push", "line_antidiagonal", "win_mover"},
    ),
    _case(
        "line_wraps_on_torus",
        _rs(edge="torus"),
        "...xx/x..../...../...../..... 5 8 x",
        "a3",
        "x..xx/...../x..../...../..... 4 8 o",
        "x",
        {"place", "push", "line_horizontal", "line_wrapped", "win_mover"},
    ),
    _case(
        "line_through_the_twist",
        _rs(edge="klein"),
        ".x.../...../...x./...../...x. 5 8 x",
        "d2",
        ".x.../...x./...../...x./...x. 4 8 o",
        "x",
        {"place", "push", "line_vertical", "line_wrapped", "win_mover"},
    ),
    _case(
        "both_lines_draw",
        _rs(),
        "x...o/x...o/.x.o./...../..... 5 5 x",
        "c3",
        "x...o/x...o/x.x.o/...../..... 4 5 o",
        "draw",
        {"place", "push", "line_vertical", "draw_lines"},
    ),
    _case(
        "ringout_loss",
        _rs(c=3, edge="ringout"),
        "..o../...../...../...../..... 3 2 x",
        "c2",
        "...../..x../...../...../..... 2 2 o",
        "x",
        {"place", "fall_ringout", "ringout_loss"},
    ),
    _case(
        "ringout_draw",
        _rs(c=3, edge="ringout"),
        "x.o../...../...../...../..... 2 2 x",
        "b2",
        "...../.x.../...../...../..... 1 2 o",
        "draw",
        {"place", "fall_ringout", "ringout_draw"},
    ),
    _case(
        "stuck_draw",
        _rs(c=3, stuck="draw", movement="nomove"),
        "o.o../...../...../...../....o 3 0 x",
        "c3",
        "o.o../...../..x../...../....o 2 0 o",
        "draw",
        {"place", "stuck_draw"},
    ),
    _case(
        "stuck_pass",
        _rs(c=3, movement="nomove"),
        "o.o../...../...../...../....o 3 0 x",
        "c3",
        "o.o../...../..x../...../....o 2 0 x",
        None,
        {"place", "stuck_pass"},
    ),
    _case(
        "stuck_both_draw",
        _rs(c=3, movement="nomove"),
        "o.o../x...x/...../...../....o 1 0 x",
        "c3",
        "o.o../x...x/..x../...../....o 0 0 o",
        "draw",
        {"place", "stuck_both_draw"},
    ),
    _case(
        "repetition_draw",
        _rs(c=3, **ALWAYS),
        "x..../...../...../...o./..... 2 2 o",
        "d4-d5",
        "x..../...../...../...../...o. 2 2 x",
        "draw",
        {"move_king", "repetition_draw"},
        history=(
            "x..../...../...../...../...o. 2 2 x",
            ".x.../...../...../...../...o. 2 2 o",
            ".x.../...../...../...o./..... 2 2 x",
        ),
    ),
    # o is stuck (bin not empty, board full, so no placement and no move), x makes a zero
    # move that pops nothing loose: the position handed over (x to move again after o's
    # pass) repeats, and the game-ending position is written with o to move.
    _case(
        "repetition_after_a_pass",
        _rs(board="3x3", c=5, pattern="anywhere", zero="zero"),
        "oxx/xoo/oxx 0 1 x",
        "b1-b1",
        "oxx/xoo/oxx 0 1 o",
        "draw",
        {"move_anywhere", "move_zero", "stuck_pass", "repetition_draw"},
        history=("oxx/x.o/o.x 1 2 o", "oxx/xoo/o.x 1 1 x"),
    ),
)


def transition_record(
    rs: Ruleset, history: Iterable[Position], pos: Position, action: Action, source: str
) -> dict:
    """One corpus record for playing ``action`` in ``pos`` after ``history``."""
    history = list(history)
    out = apply_action(rs, pos, action, set(history))
    return {
        "ruleset": rs.id,
        "history": [p.text(rs) for p in history],
        "position": pos.text(rs),
        "actions": [a.text(rs) for a in legal_actions(rs, pos)],
        "action": action.text(rs),
        "next": out.next.text(rs),
        "result": out.result,
        "branches": [b for b in BRANCHES if b in out.branches],
        "source": source,
    }


class CorpusMismatch(AssertionError):
    """A hand-made case that the engine answers differently from the worked answer."""


def hand_made_records() -> list[dict]:
    """The hand-made transitions, each verified against its worked answer."""
    records = []
    for case in HAND_MADE:
        rs = Ruleset.from_id(case.ruleset)
        history = [Position.from_text(rs, text) for text in case.history]
        pos = Position.from_text(rs, case.position)
        record = transition_record(
            rs, history, pos, Action.from_text(rs, case.action), f"hand:{case.name}"
        )
        problems = []
        if record["next"] != case.next:
            problems.append(f"next {record['next']!r}, worked answer {case.next!r}")
        if record["result"] != case.result:
            problems.append(f"result {record['result']!r}, worked answer {case.result!r}")
        missing = case.branches - set(record["branches"])
        if missing:
            problems.append(f"branches {sorted(missing)} not exercised")
        present = set(case.absent_actions) & set(record["actions"])
        if present:
            problems.append(f"actions {sorted(present)} should not be legal")
        if problems:
            raise CorpusMismatch(f"hand-made case {case.name!r}: " + "; ".join(problems))
        records.append(record)
    return records


def random_rulesets(rng: random.Random, count: int) -> list[Ruleset]:
    """Rulesets that together use every value of every field (values cycled, then shuffled)."""
    values = {
        "edge": EDGES,
        "stuck": STUCK_RULES,
        "movement": MOVEMENTS,
        "pattern": PATTERNS,
        "zero": (False, True),
        "jump": (False, True),
    }
    out = []
    for i in range(count):
        fields = {
            name: options[(i + rng.randrange(len(options))) % len(options)]
            for name, options in values.items()
        }
        if i < 5:  # one pass that walks each field's values in order, so none is missed
            fields = {name: options[i % len(options)] for name, options in values.items()}
        out.append(
            Ruleset(
                rows=rng.randint(3, 8),
                cols=rng.randint(3, 8),
                checkers=rng.randint(3, 16),
                **fields,
            )
        )
    return out


def random_records(
    seed: int, rulesets: int = 60, games: int = 3, keep: float = 0.35
) -> Iterator[dict]:
    """Transitions of random games: every transition kept with probability ``keep``, and
    every game-ending one kept, so results are well represented."""
    rng = random.Random(seed)
    research = Ruleset.from_id(TORUS4)
    chosen = random_rulesets(rng, rulesets) + [
        research,
        research.with_(rows=3, cols=3, checkers=4),
        research.with_(rows=5, cols=5),
    ]
    for rs in chosen:
        for _ in range(games if not rs.is_research_family else games * 4):
            game = Game(rs)
            while not game.is_terminal() and len(game.actions) < 300:
                action = rng.choice(game.legal_actions())
                before = game.positions[:-1]
                pos = game.position
                out = game.apply_action(action)
                if out.result is not None or rng.random() < keep:
                    yield transition_record(rs, before, pos, action, "random")


def build_corpus(seed: int = 0) -> list[dict]:
    return hand_made_records() + list(random_records(seed))


def branch_counts(records: Iterable[dict]) -> Counter:
    counts: Counter = Counter()
    for record in records:
        counts.update(record["branches"])
    return counts


def guard_hits_line(counts: Counter) -> str:
    """``GUARD_HITS place=12,move_king=3,…`` over every branch, in :data:`BRANCHES` order."""
    return "GUARD_HITS " + ",".join(f"{b}={counts.get(b, 0)}" for b in BRANCHES)


def write_corpus(out_dir: Path, records: list[dict], seed: int) -> Counter:
    """Write ``corpus.jsonl`` and ``summary.json`` into ``out_dir``; returns the branch counts."""
    counts = branch_counts(records)
    lines = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    summary = {
        "seed": seed,
        "records": len(records),
        "rulesets": len({r["ruleset"] for r in records}),
        "branches": {b: counts.get(b, 0) for b in BRANCHES},
    }
    # Both written before either is renamed: a full disk leaves the old pair, never a mix.
    write_atomic_many(
        {
            out_dir / "corpus.jsonl": lines.encode(),
            out_dir / "summary.json": (json.dumps(summary, indent=2) + "\n").encode(),
        }
    )
    return counts
