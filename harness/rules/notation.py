"""Squares in docs/rules.md notation: column letter ``a``… then row number ``1``…, from top-left.

>>> square_name(0, 6), square_name(14, 6)
('a1', 'c3')
>>> parse_square("c3", 6, 6)
14
>>> parse_square("g1", 6, 6)
Traceback (most recent call last):
...
harness.rules.errors.NotationError: square 'g1': column 'g' is off the 6x6 board (a-f)
"""

from __future__ import annotations

import re

from harness.bounded import clip
from harness.rules.errors import NotationError

_SQUARE = re.compile(r"([a-z])([1-9][0-9]*)")


def square_name(sq: int, cols: int) -> str:
    row, col = divmod(sq, cols)
    return f"{chr(ord('a') + col)}{row + 1}"


def parse_square(text: str, rows: int, cols: int) -> int:
    m = _SQUARE.fullmatch(text)
    if not m:
        raise NotationError(
            f"square {clip(text)}: expected a column letter and a row number, e.g. 'c3'"
        )
    col = ord(m.group(1)) - ord("a")
    row = int(m.group(2)) - 1 if len(m.group(2)) <= 3 else rows  # never int() of 5,000 digits
    if col >= cols:
        last = chr(ord("a") + cols - 1)
        raise NotationError(
            f"square {clip(text)}: column {m.group(1)!r} is off the {rows}x{cols} board (a-{last})"
        )
    if row >= rows:
        raise NotationError(
            f"square {clip(text)}: row {m.group(2)[:80]} is off the {rows}x{cols} board (1-{rows})"
        )
    return row * cols + col
