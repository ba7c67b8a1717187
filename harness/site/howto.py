"""The "How it plays" section: a ruleset told to a visitor in a few plain paragraphs.

Each field of the ruleset (board, checkers, edge, stuck, movement, pattern, zero move, jumps)
adds the sentence that says what it changes; the words follow ``docs/rules.md``.

>>> from harness.rules import Ruleset
>>> text = how_it_plays(Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"))
>>> text[0].startswith("Two players, x and o, take turns on a 4 by 4 board")
True
>>> any("doughnut" in p for p in text)
True
"""

from __future__ import annotations

from harness.rules.ruleset import Ruleset

EDGE_WORDS = {
    "torus": (
        "The board has no edges: it wraps around like a doughnut. A checker pushed off the "
        "right side comes back on the left, one pushed off the top comes back at the bottom, "
        "and a row of three may run across a side and continue on the other."
    ),
    "klein": (
        "The board wraps around like a Klein bottle: left and right join as on a doughnut, "
        "but across the top and bottom the board is mirrored, so a checker pushed off the top "
        "comes back at the bottom on the mirrored column."
    ),
    "reincarnation": (
        "The board has edges. A checker pushed off the board goes back to its owner's bin, "
        "ready to be placed again."
    ),
    "ringout": (
        "The board has edges. A checker pushed off the board is out of the game; a player "
        "left with fewer than three checkers loses."
    ),
    "blocked": "The board has edges, and a checker that would be pushed off it stays put.",
}

PATTERN_WORDS = {
    "king": "one square in any of the eight directions",
    "rook": "any distance along its row or column",
    "bishop": "any distance along a diagonal",
    "queen": "any distance along a row, a column or a diagonal",
    "anywhere": "to any empty square",
}


def how_it_plays(rs: Ruleset) -> list[str]:
    """The paragraphs of the "How it plays" section for ``rs``."""
    n = rs.checkers
    out = [
        f"Two players, x and o, take turns on a {rs.rows} by {rs.cols} board; x goes first. "
        f"Each starts with {n} checkers in a bin beside the board. On a turn you place a "
        "checker from your bin on an empty square"
        + (
            ", or, once your bin is empty, move one of yours instead."
            if rs.movement == "binempty"
            else ", or move one of yours."
            if rs.movement == "always"
            else "; checkers never move once placed."
        ),
        "The checker you put down pops: every checker on the eight squares around it, yours "
        "and your opponent's, is pushed one square straight away from it, all at the same "
        "moment. A push fails when the square behind is taken, or when two pushes aim at the "
        "same square; pushed checkers push nothing further.",
        EDGE_WORDS[rs.edge],
    ]
    if rs.movement != "nomove":
        move = f"A move takes a checker {PATTERN_WORDS[rs.pattern]}"
        if rs.pattern in ("rook", "bishop", "queen"):
            move += ", jumping over checkers" if rs.jump else ", stopping before any checker"
        move += " to an empty square; moves never wrap around the board, whatever its edges."
        if rs.zero:
            move += " A checker may also stay where it is and pop again."
        out.append(move)
    stuck = (
        "A player with no legal action passes"
        if rs.stuck == "continue"
        else "A player with no legal action ends the game in a draw"
    )
    out.append(
        "Three of your checkers in a row (across, down or diagonally) win. If the pop makes a "
        "row for your opponent only, they win; rows for both at once are a draw. A position "
        f"seen before in the game is a draw. {stuck}."
    )
    return out
