"""Commands of the rules stage: ``rules actions``, ``rules step``, ``play``, ``corpus``."""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from harness.bounded import bounded_lines
from harness.cli import seed
from harness.rules.corpus import build_corpus, guard_hits_line, write_corpus
from harness.rules.ruleset import DEFAULT_RULESET, Ruleset
from harness.rules.service import answer_actions, answer_step, serve


def _ruleset(text: str) -> Ruleset:
    try:
        return Ruleset.from_id(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _stdin():
    """Request lines from stdin, each held to at most MAX_LINE bytes in memory."""
    return bounded_lines(getattr(sys.stdin, "buffer", sys.stdin))


def register(subparsers: argparse._SubParsersAction) -> None:
    rules = subparsers.add_parser(
        "rules",
        help="answer rules questions as JSON lines (legal actions, one step)",
        description="Answer rules questions read as JSON lines on stdin, one answer per line. "
        'A bad line is answered {"error": ...} and the stream goes on; the exit code is 1 '
        "if any line was an error.",
    )
    verbs = rules.add_subparsers(dest="verb", metavar="VERB", required=True)
    actions = verbs.add_parser(
        "actions",
        help='{"ruleset", "position"} -> {"actions": [...]}',
        description='Each stdin line {"ruleset": ID, "position": TEXT} is answered by '
        '{"actions": [TEXT, ...]}: placements by square, then moves by source and destination.',
    )
    actions.set_defaults(func=lambda args: int(serve(_stdin(), sys.stdout, answer_actions) > 0))
    step = verbs.add_parser(
        "step",
        help='{"ruleset", "position", "action"} -> {"next", "result"}',
        description='Each stdin line {"ruleset": ID, "position": TEXT, "action": TEXT} is '
        'answered by {"next": TEXT, "result": "x"|"o"|"draw"|null}. "next" has the turn as '
        "handed over: after a pass under 'continue' the mover is to move again. No history is "
        "given, so a step never reports a repetition.",
    )
    step.set_defaults(func=lambda args: int(serve(_stdin(), sys.stdout, answer_step) > 0))

    play = subparsers.add_parser(
        "play",
        help="play a game in the terminal",
        description="Play Pop in the terminal: two people, or against a random mover.",
    )
    play.add_argument(
        "ruleset",
        nargs="?",
        type=_ruleset,
        default=DEFAULT_RULESET,
        help=f"ruleset id (default {DEFAULT_RULESET.id})",
    )
    play.add_argument(
        "-x",
        dest="x",
        choices=("human", "random"),
        default="human",
        help="who plays x, the first player (default human)",
    )
    play.add_argument(
        "-o",
        dest="o",
        choices=("human", "random"),
        default="random",
        help="who plays o (default random)",
    )
    play.add_argument("--seed", type=seed, default=None, help="seed for the random mover")
    play.set_defaults(func=_play)

    corpus = subparsers.add_parser(
        "corpus",
        help="write the transition corpus other engines are checked against",
        description="Write DIR/corpus.jsonl (one transition per line, from the reference "
        "engine: hand-made cases for every rule branch and random games over every ruleset "
        "field) and DIR/summary.json, then print GUARD_HITS per branch. The same seed gives "
        "the same corpus.",
    )
    corpus.add_argument("--out", type=Path, required=True, help="output folder")
    corpus.add_argument("--seed", type=seed, default=0, help="seed of the random part (default 0)")
    corpus.set_defaults(func=_corpus)


def _play(args: argparse.Namespace) -> int:
    from harness.rules.play import human, play, random_mover

    rng = random.Random(args.seed)

    def chooser(kind: str):
        return random_mover(rng) if kind == "random" else human(input, sys.stdout)

    game = play(args.ruleset, (chooser(args.x), chooser(args.o)), sys.stdout)
    return 0 if game.is_terminal() or args.x == "human" or args.o == "human" else 1


def _corpus(args: argparse.Namespace) -> int:
    records = build_corpus(args.seed)
    counts = write_corpus(args.out, records, args.seed)
    print(
        f"{len(records)} transitions over {len({r['ruleset'] for r in records})} rulesets "
        f"-> {args.out / 'corpus.jsonl'}"
    )
    print(guard_hits_line(counts))
    missing = [b for b, n in counts.items() if n == 0]
    return 1 if missing else 0
