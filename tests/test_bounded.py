"""The bounded readers (harness.bounded): the nesting scan agrees with a parser on any JSON
and stays linear on hostile strings; YAML is refused past its depth in flow and block style;
files are read only when they are small regular files."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.bounded import (
    TooDeepError,
    TooLongError,
    UnsafeFileError,
    load_yaml,
    nesting_depth,
    read_regular,
    read_text,
    read_yaml,
)

TEXT = st.text(alphabet='ab"\\[]{}\n', max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=30,
)


def depth_of(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.booleans())
def test_the_nesting_scan_agrees_with_the_parsed_value(value, spaced):
    text = json.dumps(value, indent=1 if spaced else None)
    assert nesting_depth(text) == depth_of(json.loads(text))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 200), st.integers(0, 3000), st.sampled_from(['\\"', "\\\\", '"', "]["]))
def test_the_nesting_scan_counts_each_bracket_outside_strings_once(opened, repeats, unit):
    # Hostile strings of escapes behind a run of brackets: the scan sees the brackets only.
    text = "[" * opened + '"' + unit * repeats
    inside = text.count('"') - text.count('\\"')  # quotes that open or close a string
    expected = opened + (1 if unit == "][" and inside % 2 == 0 and repeats else 0)
    assert nesting_depth(text) == expected


def test_an_escaped_backslash_closes_the_string_before_a_bracket():
    assert nesting_depth('["\\\\", ["x"]]') == 2
    assert nesting_depth('["\\"", "]"]') == 1


@pytest.mark.parametrize("depth, ok", [(64, True), (65, False)])
@pytest.mark.parametrize("style", ["flow", "block", "mixed"])
def test_yaml_is_refused_one_level_past_its_limit(style, depth, ok):
    if style == "flow":
        text = "[" * depth + "]" * depth
    elif style == "block":
        text = (
            "".join("  " * i + f"k{i}:\n" for i in range(depth - 1)) + "  " * (depth - 1) + "v: 1\n"
        )
    else:  # block mappings, the innermost holding flow lists
        half = depth // 2
        text = "".join("  " * i + f"k{i}:\n" for i in range(half)) + "  " * half
        text += "v: " + "[" * (depth - half - 1) + "]" * (depth - half - 1) + "\n"
    if ok:
        assert load_yaml(text) is not None
    else:
        with pytest.raises(TooDeepError, match="nested deeper than 64 levels"):
            load_yaml(text)


def test_yaml_aliases_are_not_expanded_into_memory():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20)
    )
    doc = load_yaml(bomb)
    assert doc["b"][0] is doc["a"]  # shared, never copied


def test_malformed_yaml_is_a_yaml_error():
    with pytest.raises(yaml.YAMLError):
        load_yaml("a: [1, 2\n")


@pytest.mark.parametrize("kind", ["fifo", "link", "folder", "device"])
def test_only_a_regular_file_is_read(kind, tmp_path):
    path = tmp_path / "x"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        (tmp_path / "real").write_text("a: 1\n")
        path.symlink_to(tmp_path / "real")
    elif kind == "folder":
        path.mkdir()
    else:
        path = tmp_path / "null"
        path.symlink_to("/dev/null")
        path = path.resolve()
    with pytest.raises(UnsafeFileError) as err:
        read_yaml(path)
    assert str(path) in str(err.value)


def test_a_file_over_its_bound_is_refused_by_size(tmp_path):
    path = tmp_path / "big"
    path.write_bytes(b"x" * 1001)
    with pytest.raises(TooLongError, match="1,001 bytes, more than the 1,000 a key may have"):
        read_regular(path, 1000, "key")


def test_text_that_is_not_utf8_is_named_with_its_byte(tmp_path):
    path = tmp_path / "t"
    path.write_bytes(b"ok\xff")
    with pytest.raises(ValueError, match=r"t: the corpus is not UTF-8 text \(byte 2\)"):
        read_text(path, 100, "corpus")


def test_the_nesting_scan_is_linear_on_a_megabyte_of_escaped_quotes():
    # A backtracking scan took 5 s on 64 KB of these and grows with the square: on 1 MB it
    # would run for hours. The alarm turns such a hang into a failure.
    import signal

    def hung(signum, frame):
        raise TimeoutError("the nesting scan did not finish within 20 s")

    text = "[" * 65 + '"' + '\\"' * 500_000
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        assert nesting_depth(text) == 65
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
