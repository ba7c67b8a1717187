import pytest
from hypothesis import given

from harness.rules import DEFAULT_RULESET, RESEARCH_RULESET, Ruleset, RulesetError
from tests.rules.strategies import rulesets


@given(rulesets)
def test_id_round_trips(rs):
    assert Ruleset.from_id(rs.id) == rs
    assert Ruleset.from_id(rs.id).id == rs.id


def test_defaults_are_the_research_family():
    assert RESEARCH_RULESET.id == "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"
    assert RESEARCH_RULESET == Ruleset()  # the defaults of docs/rules.md's table
    assert DEFAULT_RULESET.rows == DEFAULT_RULESET.cols == 4
    assert DEFAULT_RULESET.is_research_family
    assert not RESEARCH_RULESET.with_(edge="klein").is_research_family


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("pop2-6x6-c8-torus-continue-binempty-king-nozero-nojump", "version", "pop2"),
        ("pop1-2x6-c8-torus-continue-binempty-king-nozero-nojump", "board", "2x6"),
        ("pop1-6x9-c8-torus-continue-binempty-king-nozero-nojump", "board", "6x9"),
        ("pop1-6by6-c8-torus-continue-binempty-king-nozero-nojump", "board", "6by6"),
        ("pop1-6x6-c17-torus-continue-binempty-king-nozero-nojump", "checkers", "c17"),
        ("pop1-6x6-8-torus-continue-binempty-king-nozero-nojump", "checkers", "8"),
        ("pop1-6x6-c8-sphere-continue-binempty-king-nozero-nojump", "edge", "sphere"),
        ("pop1-6x6-c8-torus-wait-binempty-king-nozero-nojump", "stuck", "wait"),
        ("pop1-6x6-c8-torus-continue-sometimes-king-nozero-nojump", "movement", "sometimes"),
        ("pop1-6x6-c8-torus-continue-binempty-knight-nozero-nojump", "pattern", "knight"),
        ("pop1-6x6-c8-torus-continue-binempty-king-yes-nojump", "zero", "yes"),
        ("pop1-6x6-c8-torus-continue-binempty-king-nozero-hop", "jumps", "hop"),
    ],
)
def test_bad_field_names_field_and_value(text, field, value):
    with pytest.raises(RulesetError) as err:
        Ruleset.from_id(text)
    message = str(err.value)
    assert f"'{field}'" in message and value in message and "\n" not in message


def test_wrong_field_count_lists_the_fields():
    with pytest.raises(RulesetError, match="expected 9"):
        Ruleset.from_id("pop1-6x6-c8-torus")
