"""Reading hostile input within bounds: quoting, JSON nesting, line length, file kinds, gzip.

Every reader of the harness takes its input through these helpers, so a 1 MB line, a JSON
bomb of nested brackets, a gzip bomb, a FIFO or a symlink to ``/dev/zero`` is refused in one
line instead of exhausting memory, recursion or patience.

>>> clip("x" * 100)[-23:]
"xxxx'… (100 characters)"
>>> one_line("two\\nlines")
'two lines'
"""

from __future__ import annotations

QUOTE_LIMIT = 80  # characters of an input an error message quotes at most


def clip(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr`` of ``value`` showing at most ``limit`` characters of it, and the full length
    when it was cut.

    >>> clip("pop1-4x4"), clip(12)
    ("'pop1-4x4'", '12')
    """
    if isinstance(value, str | bytes) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit + 2 else text[:limit] + "…"


def one_line(text: str, limit: int = 2000) -> str:
    """``text`` on one line (newlines become spaces) and at most ``limit`` characters."""
    text = " ".join(text.splitlines())
    return text if len(text) <= limit else text[: limit - 1] + "…"
