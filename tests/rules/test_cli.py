import json
import subprocess
import sys

from harness.rules import DEFAULT_RULESET

RS = DEFAULT_RULESET.id


def run(args, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_actions_and_step_answer_line_by_line():
    requests = [
        {"ruleset": RS, "position": "..../..../..../.... 8 8 x"},
        {"ruleset": RS, "position": "xxxx/oooo/xxxx/oooo 0 0 x"},
    ]
    done = run(["rules", "actions"], "".join(json.dumps(r) + "\n" for r in requests))
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0
    assert len(answers[0]["actions"]) == 16 and answers[1] == {"actions": []}
    step = run(
        ["rules", "step"],
        json.dumps({"ruleset": RS, "position": requests[0]["position"], "action": "a1"}) + "\n",
    )
    assert json.loads(step.stdout) == {"next": "x.../..../..../.... 7 8 o", "result": None}


def test_bad_lines_get_errors_and_the_stream_goes_on():
    lines = [
        "not json",
        json.dumps({"ruleset": "pop1-4x4", "position": "x", "action": "a1"}),
        json.dumps(
            {"ruleset": RS, "position": "..../..../..../.... 8 8 x", "action": "a1", "extra": 1}
        ),
        json.dumps({"ruleset": RS, "position": "x.../..../..../.... 7 8 o", "action": "a1"}),
        json.dumps({"ruleset": RS, "position": "..../..../..../.... 8 8 x", "action": "b2"}),
    ]
    done = run(["rules", "step"], "\n".join(lines) + "\n")
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1
    assert [("error" in a) for a in answers] == [True, True, True, True, False]
    assert answers[0]["error"].startswith("line 1: not JSON")
    assert "ruleset id" in answers[1]["error"]
    assert "unknown field(s) extra" in answers[2]["error"]
    assert "not legal" in answers[3]["error"]


def test_play_random_against_random_finishes():
    done = run(["play", RS, "-x", "random", "-o", "random", "--seed", "5"])
    assert done.returncode == 0
    assert any(w in done.stdout for w in ("wins:", "Draw:"))
    assert "    a b c d" in done.stdout


def test_play_a_person_types_moves_and_quits():
    done = run(["play", RS, "-o", "random", "--seed", "1"], "zz\nmoves\nb2\nundo\nquit\n")
    assert "expected a column letter" in done.stdout
    assert "x plays b2" in done.stdout and "Game abandoned." in done.stdout


def test_bad_ruleset_is_a_usage_error():
    done = run(["play", "pop1-4x4-c8-sphere-continue-binempty-king-nozero-nojump"])
    assert done.returncode == 2 and "'edge'" in done.stderr
