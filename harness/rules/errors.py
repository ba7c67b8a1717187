"""The engine's error types.

All are :class:`ValueError` subclasses, so a caller that only cares "was this input bad"
can catch ``ValueError``; the messages are one line and name the field, the value and what
was expected.
"""


class RulesetError(ValueError):
    """A ruleset identifier that does not parse, or a field out of range."""


class NotationError(ValueError):
    """A square, action or position that is not valid docs/rules.md notation for the ruleset."""


class IllegalActionError(ValueError):
    """A well-formed action that the rules do not allow in the given position."""
