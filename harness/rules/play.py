"""A game of Pop in the terminal: two people, a person against a random mover, or two
random movers (a quick demonstration of the rules).

The screen after each turn shows the board with coordinates, both bins (and checkers out of
the game under ``ringout``), whose turn it is, what the last pop did, and the result.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import IO

from harness.rules.engine import Game, Outcome
from harness.rules.errors import NotationError
from harness.rules.notation import square_name
from harness.rules.position import PLAYERS, Action, Position
from harness.rules.ruleset import Ruleset

HELP = (
    "Type a placement like 'c3', a move like 'c3-d4', 'moves' to list the legal actions, "
    "'undo' to take back your last turn, or 'quit'."
)

_RESULT_WORDS = {
    "line": "three in a row",
    "lines": "both players made a line",
    "ringout": "a player has fewer than three checkers left",
    "stuck": "no legal action remains",
    "repetition": "the position repeated",
}


def render_board(rs: Ruleset, pos: Position) -> str:
    """The board with column letters above and row numbers at the left, plus the bins."""
    header = "    " + " ".join(chr(ord("a") + c) for c in range(rs.cols))
    rows = [header]
    for r in range(rs.rows):
        cells = []
        for c in range(rs.cols):
            bit = 1 << (r * rs.cols + c)
            cells.append("x" if pos.board[0] & bit else "o" if pos.board[1] & bit else ".")
        rows.append(f"{r + 1:>3} " + " ".join(cells))
    bins = f"bins: x {pos.bins[0]}  o {pos.bins[1]}"
    if rs.removes:
        bins += f"   out of the game: x {pos.removed(rs, 0)}  o {pos.removed(rs, 1)}"
    rows.append(bins)
    return "\n".join(rows)


def describe_pop(rs: Ruleset, outcome: Outcome) -> str:
    """One line per pushed neighbour: where it went, or why it stayed."""
    if not outcome.pops:
        return "nothing popped"
    parts = []
    for p in outcome.pops:
        name = f"{PLAYERS[p.owner]} on {square_name(p.src, rs.cols)}"
        if p.kind == "push":
            parts.append(f"{name} pushed to {square_name(p.dst, rs.cols)}")
        elif p.kind == "fall":
            where = "back to its bin" if rs.edge == "reincarnation" else "out of the game"
            parts.append(f"{name} fell off, {where}")
        elif p.kind == "blocked_edge":
            parts.append(f"{name} stayed at the edge")
        elif p.kind == "blocked_occupied":
            parts.append(f"{name} stayed: {square_name(p.dst, rs.cols)} is occupied")
        else:
            parts.append(f"{name} stayed: another push also aimed at {square_name(p.dst, rs.cols)}")
    return "; ".join(parts)


def describe_result(outcome: Outcome) -> str:
    why = _RESULT_WORDS.get(outcome.reason or "", outcome.reason or "")
    if outcome.result == "draw":
        return f"Draw: {why}."
    return f"{outcome.result} wins: {why}."


Chooser = Callable[[Game], "Action | None"]


def random_mover(rng: random.Random) -> Chooser:
    def choose(game: Game) -> Action:
        return rng.choice(game.legal_actions())

    return choose


def human(read: Callable[[str], str], out: IO[str]) -> Chooser:
    """Ask at the prompt until a legal action (or a command) is typed.

    Returns None to quit; ``Action(None, -1)`` asks the game loop to undo.
    """

    def choose(game: Game) -> Action | None:
        rs = game.ruleset
        legal = game.legal_actions()
        while True:
            try:
                text = read(f"{PLAYERS[game.position.turn]} to play> ").strip()
            except EOFError:
                return None
            if text in ("quit", "q", "exit"):
                return None
            if text in ("help", "?", ""):
                print(HELP, file=out)
                continue
            if text == "moves":
                print(" ".join(a.text(rs) for a in legal), file=out)
                continue
            if text == "undo":
                return Action(None, -1)
            try:
                action = Action.from_text(rs, text)
            except NotationError as exc:
                print(f"  {exc}", file=out)
                continue
            if action not in legal:
                print(f"  {text!r} is not legal here; type 'moves' to list them", file=out)
                continue
            return action

    return choose


def play(
    rs: Ruleset, players: tuple[Chooser, Chooser], out: IO[str], max_plies: int = 1000
) -> Game:
    """Run a game to the end (or until a person quits); returns the game."""
    game = Game(rs)
    print(f"Pop, ruleset {rs.id}", file=out)
    print(render_board(rs, game.position), file=out)
    while not game.is_terminal() and len(game.actions) < max_plies:
        mover = game.position.turn
        action = players[mover](game)
        if action is None:
            print("Game abandoned.", file=out)
            return game
        if action.dst == -1:  # undo: back to this player's previous turn
            undone = 0
            while game.actions and (undone == 0 or game.position.turn != mover):
                game.undo()
                undone += 1
            print(render_board(rs, game.position), file=out)
            continue
        outcome = game.apply_action(action)
        print(f"\n{PLAYERS[mover]} plays {action.text(rs)}: {describe_pop(rs, outcome)}", file=out)
        if outcome.passed:
            print(f"{PLAYERS[1 - mover]} has no legal action and passes.", file=out)
        print(render_board(rs, game.position), file=out)
        if outcome.result is not None:
            print(describe_result(outcome), file=out)
    if not game.is_terminal():
        print(f"Stopped after {max_plies} plies.", file=out)
    return game
