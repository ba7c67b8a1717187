"""Hostile input to the rules stage (issue 14): one spelling per id, bounded errors, and a
JSON-lines stream that answers every line whatever it holds."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.bounded import MAX_LINE, bounded_lines
from harness.rules import DEFAULT_RULESET
from harness.rules.errors import NotationError, RulesetError
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset
from harness.rules.service import answer_actions, answer_step, serve

RS = DEFAULT_RULESET.id
GOOD = json.dumps({"ruleset": RS, "position": "..../..../..../.... 8 8 x"})


def spell(board="6x6", checkers="c8", head="pop1"):
    return f"{head}-{board}-{checkers}-torus-continue-binempty-king-nozero-nojump"


@pytest.mark.parametrize(
    "text, field",
    [
        (spell(board="６x６"), "board"),  # full-width digits
        (spell(board="٦x٦"), "board"),  # Arabic-Indic digits
        (spell(board="06x6"), "board"),  # leading zero
        (spell(checkers="c08"), "checkers"),
        (spell(checkers="c٨"), "checkers"),
        (" " + spell(), "version"),  # spaces are not stripped
        (spell() + " ", "jumps"),
        (spell(checkers="c" + "9" * 5000), "checkers"),  # never int() of 5,000 digits
        (spell(board="6x" + "9" * 5000), "board"),
    ],
)
def test_a_ruleset_id_has_one_spelling(text, field):
    with pytest.raises(RulesetError) as err:
        Ruleset.from_id(text)
    message = str(err.value)
    assert f"ruleset field {field!r}" in message
    assert "Exceeds the limit" not in message and len(message) < 250


@pytest.mark.parametrize("size", [100_000, 1_000_000])
def test_errors_quote_at_most_80_characters(size):
    for text in ("x" * size, spell(board="x" * size), spell(head="p" * size)):
        with pytest.raises(RulesetError) as err:
            Ruleset.from_id(text)
        message = str(err.value)
        assert len(message) < 250 and "characters)" in message, message
        # No run of the input longer than 80 characters is quoted.
        assert max(len(word) for word in message.replace("'", " ").split()) <= 80


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("..../..../..../.... ٨ 8 x", "x's bin '٨' is not a number"),
        ("..../..../..../.... 08 8 x", "x's bin '08' is not a number"),
        ("..../..../..../.... 8 " + "9" * 5000 + " x", "o's bin '9999"),
    ],
)
def test_position_counts_are_ascii_and_bounded(text, fragment):
    rs = DEFAULT_RULESET
    with pytest.raises(NotationError) as err:
        Position.from_text(rs, text)
    assert fragment in str(err.value) and len(str(err.value)) < 300


def test_a_square_with_5000_digits_is_off_the_board():
    with pytest.raises(NotationError, match="is off the 4x4 board"):
        Action.from_text(DEFAULT_RULESET, "a" + "1" * 5000)


def run(args, stdin: bytes):
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], input=stdin, capture_output=True, timeout=120
    )


@pytest.mark.parametrize("verb", ["actions", "step"])
def test_the_issue_lines_each_get_a_short_error_and_the_stream_goes_on(verb):
    act = ', "action": "a1"' if verb == "step" else ""
    lines = [
        b"[" * 2000 + b"]" * 2000,  # RecursionError killed the stream before
        b"x" * 1_000_000,  # echoed whole before
        ('{"ruleset": "' + "r" * 60_000 + '", "position": "p"' + act + "}").encode(),
        ('{"ruleset": ' + "1" * 5000 + ', "position": "p"' + act + "}").encode(),
        ('{"ruleset": "r", "position": "p"' + act + ', "' + "k" * 50_000 + '": 1}').encode(),
        b"\xff\xfe\x00garbage",
        (GOOD[:-1] + act + "}").encode(),
    ]
    done = run(["rules", verb], b"\n".join(lines) + b"\n")
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    answers = [json.loads(a) for a in done.stdout.splitlines()]
    assert len(answers) == len(lines)
    assert all(len(json.dumps(a)) < 400 for a in answers), [len(json.dumps(a)) for a in answers]
    errors = [a.get("error", "") for a in answers]
    assert "nested deeper than 64" in errors[0]
    assert f"longer than {MAX_LINE:,} bytes" in errors[1]
    assert "60,000 characters" in errors[2]
    assert "field 'ruleset' must be text, not <a 5,000-digit number>" in errors[3]
    assert "unknown field(s) kkkk" in errors[4] and "…; expected" in errors[4]
    assert errors[5].startswith("line 6: not JSON")
    assert "error" not in answers[6]  # the stream went on to the last, good line


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=30,
)


def nested(depth: int, kind: str) -> str:
    opener, closer = {"list": ("[", "]"), "dict": ('{"a":', "}"), "mixed": ('[{"a":', "}]")}[kind]
    return opener * depth + "1" + closer * depth


lines = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(
        st.sampled_from(["ruleset", "position", "action", "x"]), json_values, max_size=4
    ).map(lambda v: json.dumps(v).encode()),
    st.builds(nested, st.integers(0, 3000), st.sampled_from(["list", "dict", "mixed"])).map(
        str.encode
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines.map(lambda b: b.replace(b"\n", b" ")), max_size=6), st.booleans())
def test_no_line_ends_the_stream(pieces, step):
    data = b"\n".join([*pieces, GOOD.encode()]) + b"\n"
    out = io.StringIO()
    serve(bounded_lines(io.BytesIO(data)), out, answer_step if step else answer_actions)
    answers = [json.loads(a) for a in out.getvalue().splitlines()]
    expected = sum(bool(p.decode("utf-8", "replace").strip()) for p in pieces) + 1
    assert len(answers) == expected
    for a in answers:
        assert set(a) in ({"error"}, {"actions"}, {"next", "result"})
        assert "internal error" not in a.get("error", "")
        assert len(json.dumps(a)) < 1000
    last = answers[-1]
    assert ("actions" in last) if not step else "missing field(s) action" in last["error"]
