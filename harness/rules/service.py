"""JSON-lines answers for ``python -m harness rules actions|step``.

Each request line is answered by exactly one line; a bad line is answered with
``{"error": "..."}`` and the stream goes on, so a long differential run is not lost to one
typo. Whatever a line holds (any bytes, a line of a megabyte, JSON nested thousands deep),
it gets one answer of bounded size: lines longer than :data:`harness.bounded.MAX_LINE` bytes
are refused unread, nesting deeper than :data:`harness.bounded.MAX_DEPTH` before parsing, and
an error quotes at most 80 characters of the input.

>>> answer_step('{"ruleset": "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump",'
...             ' "position": "..../..../..../.... 8 8 x", "action": "a1"}')
{'next': 'x.../..../..../.... 7 8 o', 'result': None}
>>> answer_actions('{"ruleset": "pop1-4x4-c8-torus", "position": ""}')["error"][:61]
"line 1: ruleset id 'pop1-4x4-c8-torus' has 4 fields; expected"
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import IO

from harness.bounded import MAX_LINE, HugeNumber, loads_json, one_line
from harness.rules.engine import apply_action, legal_actions
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset


class RequestError(ValueError):
    """A request line that cannot be answered."""


def _request(line: str, keys: tuple[str, ...]) -> dict:
    if len(line) > MAX_LINE:
        raise RequestError(f"longer than {MAX_LINE:,} bytes; not read")
    try:
        request = loads_json(line)
    except json.JSONDecodeError as exc:
        raise RequestError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:  # nested too deeply
        raise RequestError(str(exc)) from None
    if not isinstance(request, dict):
        raise RequestError("expected a JSON object")
    missing = [k for k in keys if k not in request]
    if missing:
        raise RequestError(f"missing field(s) {', '.join(missing)}")
    unknown = sorted(set(request) - set(keys))
    if unknown:
        raise RequestError(
            f"unknown field(s) {one_line(', '.join(unknown), 80)}; expected {', '.join(keys)}"
        )
    for key in keys:
        if isinstance(request[key], HugeNumber):
            raise RequestError(f"field {key!r} must be text, not {request[key]!r}")
    return request


def actions_for(request: dict) -> dict:
    rs = Ruleset.from_id(request["ruleset"])
    pos = Position.from_text(rs, request["position"])
    return {"actions": [a.text(rs) for a in legal_actions(rs, pos)]}


def step_for(request: dict) -> dict:
    rs = Ruleset.from_id(request["ruleset"])
    pos = Position.from_text(rs, request["position"])
    out = apply_action(rs, pos, Action.from_text(rs, request["action"]))
    return {"next": out.next.text(rs), "result": out.result}


def _answer(line: str, keys: tuple[str, ...], handler: Callable[[dict], dict], number: int) -> dict:
    try:
        return handler(_request(line, keys))
    except ValueError as exc:  # RulesetError, NotationError, IllegalActionError, RequestError
        return {"error": f"line {number}: {exc}"}
    except Exception as exc:  # noqa: BLE001 - a bug must not end the stream for later lines
        return {"error": f"line {number}: internal error ({type(exc).__name__}); please report it"}


def answer_actions(line: str, number: int = 1) -> dict:
    return _answer(line, ("ruleset", "position"), actions_for, number)


def answer_step(line: str, number: int = 1) -> dict:
    return _answer(line, ("ruleset", "position", "action"), step_for, number)


def serve(lines: Iterable[str], out: IO[str], answer: Callable[[str, int], dict]) -> int:
    """Answer every non-blank line; returns how many answers were errors."""
    errors = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        reply = answer(line, number)
        errors += "error" in reply
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return errors
