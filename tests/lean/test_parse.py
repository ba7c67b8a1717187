"""Reading Lean and Lake output: axioms prints, GUARD_HITS, messages, imports, pins."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.lean.parse import (
    LeanOutputError,
    forbidden_axioms,
    parse_axioms,
    parse_guard_hits_line,
    parse_imports,
    parse_messages,
    parse_output,
    pinned_outputs,
    printed_axiom_targets,
    strip_ansi,
    strip_comments,
)

# --------------------------------------------------------------------------------------------
# #print axioms


def test_axioms_after_lake_prefix_and_lean_prefix() -> None:
    text = (
        "info: Generated/Shard0001.lean:14:0: 'Pop.a' depends on axioms: [propext]\n"
        "Check.lean:20:0: info: 'Pop.b' depends on axioms: [propext, Classical.choice]\n"
        "'consistent' depends on axioms: [propext]\n"
    )
    assert parse_axioms(text) == {
        "Pop.a": ("propext",),
        "Pop.b": ("propext", "Classical.choice"),
        "consistent": ("propext",),
    }


def test_wrapped_list_over_several_lines() -> None:
    text = (
        "info: G/S.lean:3:0: 'Pop.Generated.Shard0042.a_rather_long_theorem_name_for_wrapping'"
        " depends on axioms: [propext,\n Classical.choice,\n Quot.sound]\n"
        "info: G/S.lean:9:0: 'x' does not depend on any axioms\n"
    )
    out = parse_axioms(text)
    assert out["Pop.Generated.Shard0042.a_rather_long_theorem_name_for_wrapping"] == (
        "propext",
        "Classical.choice",
        "Quot.sound",
    )
    assert out["x"] == ()


@pytest.mark.parametrize(
    "name",
    ["foo'", "Pop.foo''", "a.b'.c", "Pop.«weird name».t", "x₁", "_private.Pop.0.t", "t!"],
)
def test_names_with_primes_dots_and_guillemets(name: str) -> None:
    assert parse_axioms(f"'{name}' depends on axioms: [propext]") == {name: ("propext",)}
    assert parse_axioms(f"'{name}' does not depend on any axioms") == {name: ()}


def test_guard_msgs_diff_counts_only_the_actual_side() -> None:
    text = (
        "error: G/S.lean:12:0: ❌️ Docstring on `#guard_msgs` does not match generated message:\n"
        "\n"
        "- info: 'Pop.t' depends on axioms: [propext]\n"
        "+ info: 'Pop.t' depends on axioms: [propext,\n"
        "+  sorryAx]\n"
    )
    assert parse_axioms(text) == {"Pop.t": ("propext", "sorryAx")}


def test_same_theorem_two_different_lists_is_an_error() -> None:
    text = "'t' depends on axioms: [propext]\n't' depends on axioms: [sorryAx]\n"
    with pytest.raises(LeanOutputError, match="two different axiom lists"):
        parse_axioms(text)
    assert parse_output(text).problems


def test_unreadable_list_is_an_error() -> None:
    with pytest.raises(LeanOutputError, match="unreadable"):
        parse_axioms("'t' depends on axioms: [propext,, Quot.sound]")


def test_forbidden_axioms() -> None:
    used = {
        "a": ("propext", "Classical.choice", "Quot.sound"),
        "b": ("sorryAx",),
        "c": ("Lean.ofReduceBool", "propext"),
        "d": (),
    }
    assert forbidden_axioms(used) == {"b": ("sorryAx",), "c": ("Lean.ofReduceBool",)}


LEAN_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}('{0,2})", fullmatch=True)
DOTTED = st.lists(LEAN_NAME, min_size=1, max_size=5).map(".".join)


@settings(max_examples=60, deadline=None)
@given(name=DOTTED, axioms=st.lists(DOTTED, max_size=8, unique=True), prefix=st.booleans())
def test_roundtrip_of_leans_axiom_message(name: str, axioms: list[str], prefix: bool) -> None:
    # The message as Lean formats it: one line when it fits 120 columns, else one axiom per
    # line indented by one column.
    if not axioms:
        message = f"'{name}' does not depend on any axioms"
    else:
        one = f"'{name}' depends on axioms: [{', '.join(axioms)}]"
        message = (
            one if len(one) <= 120 else f"'{name}' depends on axioms: [" + ",\n ".join(axioms) + "]"
        )
    if prefix:
        message = "info: Generated/Shard0001.lean:7:0: " + message
    assert parse_axioms(message) == {name: tuple(axioms)}
    assert parse_output(message).axioms == {name: tuple(axioms)}


# --------------------------------------------------------------------------------------------
# GUARD_HITS


def test_guard_hits_forms() -> None:
    seed_line = "GUARD_HITS a1_up=209,a2_down=188,bar_clock=1007"
    assert parse_guard_hits_line(seed_line) == {"a1_up": 209, "a2_down": 188, "bar_clock": 1007}
    assert parse_guard_hits_line('info: C.lean:9:0: "GUARD_HITS x=1"') == {"x": 1}
    assert parse_guard_hits_line("GUARD_HITS   land=0") == {"land": 0}


@pytest.mark.parametrize(
    "line",
    [
        "GUARD_HITS a=1,b",
        "GUARD_HITS a=x",
        "GUARD_HITS =3",
        "GUARD_HITS a=1,,b=2",
        "GUARD_HITS a=-1",
    ],
)
def test_garbled_guard_hits(line: str) -> None:
    with pytest.raises(LeanOutputError):
        parse_guard_hits_line(line)
    out = parse_output(line)
    assert out.problems and out.guard_lines == 0


def test_guard_hits_in_output_are_merged_and_conflicts_reported() -> None:
    out = parse_output("info: C.lean:1:0: GUARD_HITS a=1\nGUARD_HITS b=2\n")
    assert out.guard_hits == {"a": 1, "b": 2} and out.guard_lines == 2 and not out.problems
    clash = parse_output("GUARD_HITS a=1\nGUARD_HITS a=2\n")
    assert clash.problems == ["GUARD_HITS gives a two counts: 1 and 2"]


def test_guard_hits_word_boundary() -> None:
    assert parse_output("NO_GUARD_HITS_HERE a=1").guard_lines == 0


# --------------------------------------------------------------------------------------------
# messages


def test_ansi_is_stripped() -> None:
    coloured = "\x1b[1;31merror:\x1b[m G/S.lean:3:2: boom\n\x1b[2K\r\x1b[1;32m✔ [1/2] Built A\x1b[m"
    assert strip_ansi(coloured) == "error: G/S.lean:3:2: boom\n\r✔ [1/2] Built A"
    msgs, jobs, _ = parse_messages(coloured)
    assert msgs[0].text == "boom" and msgs[0].line == 3 and msgs[0].col == 2
    assert jobs == {"A": "Built"}


def test_recorded_lake_failure_block() -> None:
    # The shape of a real `lake build` failure (module names and paths changed).
    text = (
        "✔ [3/5] Built Pop.Rules (1.2s)\n"
        "✖ [4/5] Building Generated.Shard0002 (3.4s)\n"
        "trace: .> LEAN_PATH=././.lake/build/lib/lean /home/u/.elan/toolchains/x/bin/lean "
        "././././Generated/Shard0002.lean -R ./././. -o ./.lake/build/lib/lean/G.olean --json\n"
        "error: ././././Generated/Shard0002.lean:49:6: Type mismatch\n"
        "  hh\n"
        "has type\n"
        "  a = c\n"
        "warning: ././././Generated/Shard0002.lean:60:0: declaration uses 'sorry'\n"
        "error: Lean exited with code 1\n"
        "Some required targets logged failures:\n"
        "- Generated.Shard0002\n"
        "error: build failed\n"
    )
    msgs, jobs, loose = parse_messages(text)
    assert jobs == {"Pop.Rules": "Built", "Generated.Shard0002": "Building"}
    assert [(m.severity, m.line) for m in msgs] == [
        ("error", 49),
        ("warning", 60),
        ("error", None),
        ("error", None),
    ]
    assert msgs[0].text == "Type mismatch\n  hh\nhas type\n  a = c"
    assert msgs[0].file == "././././Generated/Shard0002.lean"
    assert loose == []
    out = parse_output(text, file="Generated/Shard0002.lean")
    assert out.uses_sorry() and len(out.errors) == 3


def test_old_lake_status_lines_without_icons() -> None:
    msgs, jobs, loose = parse_messages("[1/2] Building Pop.Rules\n[2/2] Building Generated.S\n")
    assert jobs == {"Pop.Rules": "Building", "Generated.S": "Building"}
    assert msgs == [] and loose == []


def test_lean_direct_format_with_end_position_and_tags() -> None:
    msgs, _, _ = parse_messages(
        "Check.lean:3:4-3:9: error(kernel): deep recursion detected\n"
        "<stdin>:1:0: information: hello\n"
    )
    assert [(m.severity, m.file, m.line, m.col, m.text) for m in msgs] == [
        ("error", "Check.lean", 3, 4, "deep recursion detected"),
        ("info", "<stdin>", 1, 0, "hello"),
    ]


def test_out_of_memory_only_from_runtime_text() -> None:
    oom = parse_output(
        "✖ [2/2] Building G.S (9.1s)\ninfo: stderr:\nINTERNAL PANIC: out of memory\n"
        "error: Lean exited with code 1\n"
    )
    assert oom.out_of_memory == ["INTERNAL PANIC: out of memory"]
    killed = parse_output("error: Lean exited with code 137\n")
    assert killed.out_of_memory
    # A positioned Lean message about user code never counts.
    named = parse_output("error: G/S.lean:1:0: unknown identifier 'out of memory'\n")
    assert named.out_of_memory == []
    assert parse_output("GNU MP: Cannot allocate memory (size=4294967296)\n").out_of_memory


def test_file_filter_drops_other_files_messages() -> None:
    text = (
        "ℹ [1/2] Replayed Pop.Sound\n"
        "warning: Pop/Sound.lean:3:0: declaration uses 'sorry'\n"
        "info: Pop/Sound.lean:9:0: 'Pop.s' depends on axioms: [sorryAx]\n"
        "✔ [2/2] Built Generated.Shard0001 (40ms)\n"
    )
    mine = parse_output(text, file="Generated/Shard0001.lean")
    assert not mine.uses_sorry() and mine.axioms == {}
    theirs = parse_output(text, file="Pop/Sound.lean")
    assert theirs.uses_sorry() and theirs.axioms == {"Pop.s": ("sorryAx",)}


# --------------------------------------------------------------------------------------------
# sources


def test_imports_with_comments_and_module_system() -> None:
    source = (
        "/-\n  A header comment /- nested -/ import Fake\n-/\n"
        "module\n\n"
        "-- import AlsoFake\n"
        "public import Pop.Check\n"
        "meta import Pop.Rules\n"
        "import all Generated.Shard0001\n"
        "import «Generated».Shard0002\n"
        "/-! Module doc -/\n"
        "namespace Pop\n"
        "import NotInHeader\n"
    )
    assert parse_imports(source) == [
        "Pop.Check",
        "Pop.Rules",
        "Generated.Shard0001",
        "«Generated».Shard0002",
    ]


def test_imports_of_a_file_without_header() -> None:
    assert parse_imports("theorem t : True := trivial\n") == []
    assert parse_imports("prelude\nimport Init.Core\n") == ["Init.Core"]


def test_strip_comments_keeps_strings_and_chars() -> None:
    source = "def s := \"-- not a comment\" -- a comment\ndef c := '\"' /- x -/\ndef h' := 1"
    assert strip_comments(source) == (
        "def s := \"-- not a comment\"             \ndef c := '\"'        \ndef h' := 1"
    )


def stripped_char_by_char(source: str) -> str:
    """The plain reading of the rule, one character at a time: the reference for the scan."""
    out, i, n = list(source), 0, len(source)
    while i < n:
        if source[i] == "'" and (
            i == 0 or not (source[i - 1].isalnum() or source[i - 1] in "_'!?")
        ):
            if i + 2 < n and source[i + 1] not in "\\'\n" and source[i + 2] == "'":
                i += 3
            elif (
                i + 3 < n
                and source[i + 1] == "\\"
                and source[i + 2] != "\n"
                and source[i + 3] == "'"
            ):
                i += 4
            else:
                i += 1
        elif source[i] == '"':
            i += 1
            while i < n and source[i] != '"':
                i += 2 if source[i] == "\\" else 1
            i += 1
        elif source.startswith("--", i) or source.startswith("/-", i):
            line = source[i] == "-"
            depth, j = 1, i + 2
            while j < n and depth:
                if line:
                    depth = 0 if source[j] == "\n" else 1
                    j += depth
                elif source.startswith("/-", j):
                    depth, j = depth + 1, j + 2
                elif source.startswith("-/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            for k in range(i, min(j, n)):
                out[k] = out[k] if out[k] == "\n" else " "
            i = j
        else:
            i += 1
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab_'\"\\-/\n !", max_size=60))
def test_strip_comments_agrees_with_the_character_by_character_reading(source: str) -> None:
    assert strip_comments(source) == stripped_char_by_char(source)


def test_strip_comments_of_unclosed_comments_and_strings() -> None:
    assert strip_comments("a /- b /- c -/ d") == "a " + " " * 14
    assert strip_comments('x "-- no\\"') == 'x "-- no\\"'
    assert strip_comments("x -- end") == "x       "
    # After a name a prime is part of it, so '"' there opens a string, not a char literal.
    assert strip_comments("x'\"' -- c") == "x'\"' -- c"
    assert strip_comments("(x) '\"' -- c") == "(x) '\"'     "


def test_printed_axiom_targets_ignore_comments_and_docstrings() -> None:
    source = (
        "/-- Run `#print axioms fake` to see. -/\n"
        "theorem t : True := trivial\n"
        "#print axioms t\n"
        "-- #print axioms u\n"
        "#guard_msgs in #print axioms Pop.«odd one»\n"
    )
    assert printed_axiom_targets(source) == ["t", "Pop.«odd one»"]


def test_pins_from_guard_msgs_docstrings() -> None:
    source = (
        "/--\n"
        "info: 'Pop.Generated.shard0001_forceWin' depends on axioms: [propext,\n"
        " Quot.sound]\n"
        "-/\n"
        "#guard_msgs in\n"
        "#print axioms shard0001_forceWin\n"
        "/-- info: GUARD_HITS a=3 -/\n"
        "#guard_msgs (info) in\n"
        '#eval IO.println s!"GUARD_HITS a={n}"\n'
        "/-- A theorem's docstring, not a pin: 'x' depends on axioms: [sorryAx] -/\n"
        "theorem x : True := trivial\n"
    )
    pins = pinned_outputs(source)
    assert pins.axioms == {"Pop.Generated.shard0001_forceWin": ("propext", "Quot.sound")}
    assert pins.guard_hits == {"a": 3} and pins.guard_lines == 1
