"""The renderer, its Nat codec and the Python mirror of the Lean model and checker."""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.lean import certdata as lean_certdata
from harness.lean import corpus_module as lean_corpus_module
from harness.lean import model as M
from harness.lean import readback
from harness.lean import render as R
from harness.lean import templating as lean_templating
from harness.lean.codec import (
    Cfg,
    EncodingError,
    action_code,
    action_text,
    code_of_action,
    decode,
    encode,
    position_key,
    position_text,
)
from harness.rules import Position, Ruleset, apply_action, legal_actions

sys.path.insert(0, str(Path(__file__).parent))
import tinycert  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FAMILY = "pop1-{}-torus-continue-binempty-king-nozero-nojump"


def research(board: str) -> Ruleset:
    return Ruleset.from_id(FAMILY.format(board))


# --- codec ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(3, 8),
    cols=st.integers(3, 8),
    checkers=st.integers(3, 16),
    data=st.data(),
)
def test_codec_round_trips_positions(rows, cols, checkers, data):
    cfg = Cfg(rows, cols, checkers)
    n = cfg.size
    squares = data.draw(st.lists(st.sampled_from(".xo"), min_size=n, max_size=n))
    x = sum(1 << i for i, ch in enumerate(squares) if ch == "x")
    o = sum(1 << i for i, ch in enumerate(squares) if ch == "o")
    xbin = data.draw(st.integers(0, max(0, checkers - bin(x).count("1"))))
    obin = data.draw(st.integers(0, max(0, checkers - bin(o).count("1"))))
    if bin(x).count("1") > checkers or bin(o).count("1") > checkers:
        return
    # The torus removes no checker, so a valid position holds all of them.
    xbin, obin = checkers - bin(x).count("1"), checkers - bin(o).count("1")
    turn = data.draw(st.integers(0, 1))
    key = encode(cfg, x, o, xbin, obin, turn)
    assert decode(cfg, key) == (x, o, xbin, obin, turn)
    text = position_text(cfg, key)
    assert position_key(cfg, text) == key
    assert Position.from_text(cfg.ruleset(), text) == Position((x, o), (xbin, obin), turn)


def test_codec_actions_round_trip_and_refuse_other_rulesets():
    cfg = Cfg.of(research("4x5-c6"))
    for text in ("a1", "e4", "b2-c3", "e4-d3"):
        assert action_text(cfg, action_code(cfg, text)) == text
    for edge in ("reincarnation", "ringout", "blocked", "torus", "klein"):
        rs = Ruleset.from_id(f"pop1-4x4-c8-{edge}-continue-binempty-king-nozero-nojump")
        assert Cfg.of(rs).ruleset() == rs
    for rid, field in (
        ("pop1-4x4-c8-torus-draw-binempty-king-nozero-nojump", "stuck"),
        ("pop1-4x4-c8-torus-continue-always-king-nozero-nojump", "movement"),
        ("pop1-4x4-c8-torus-continue-binempty-rook-nozero-nojump", "pattern"),
        ("pop1-4x4-c8-torus-continue-binempty-king-zero-nojump", "zero move"),
        ("pop1-4x4-c8-klein-continue-binempty-king-nozero-jump", "jumps"),
    ):
        with pytest.raises(EncodingError, match=f"field '{field}'"):
            Cfg.of(Ruleset.from_id(rid))


# --- the mirror of the Lean model against the reference engine -------------------------------


EDGES = ("reincarnation", "ringout", "blocked", "torus", "klein")


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("board", ["3x3-c3", "3x3-c5", "4x4-c8", "3x5-c4", "5x4-c8", "6x6-c8"])
def test_mirror_agrees_with_reference_engine_on_random_games(board, edge):
    rs = research(board).with_(edge=edge)
    cfg = Cfg.of(rs)
    rng = random.Random(board + edge)
    transitions = 0
    for _ in range(24):
        pos = Position.initial(rs)
        for _ in range(60):
            s = M.Pos(pos.board[0], pos.board[1], pos.bins[0], pos.bins[1], pos.turn)
            acts = legal_actions(rs, pos)
            assert M.legal(cfg, s) == sorted(code_of_action(cfg, a) for a in acts)
            if not acts:
                break
            a = rng.choice(acts)
            out = apply_action(rs, pos, a)
            mine = M.step(cfg, s, code_of_action(cfg, a))
            nx = out.next
            assert mine.next == M.Pos(nx.board[0], nx.board[1], nx.bins[0], nx.bins[1], nx.turn)
            expected = {None: None, "x": 0, "o": 1, "draw": M.DRAW}[out.result]
            assert mine.result == expected, (pos.text(rs), a.text(rs))
            transitions += 1
            if out.result is not None:
                break
            pos = nx
    assert transitions > 60


def test_mirror_agrees_with_the_transition_corpus():
    from harness.rules.corpus import build_corpus

    checked = 0
    edges = set()
    for rec in build_corpus(0):
        rs = Ruleset.from_id(rec["ruleset"])
        try:
            cfg = Cfg.of(rs)
        except EncodingError:
            continue
        if "repetition_draw" in rec["branches"]:
            continue
        edges.add(rs.edge)
        s = M.pos_decode(cfg, position_key(cfg, rec["position"]))
        assert M.legal(cfg, s) == sorted(action_code(cfg, a) for a in rec["actions"])
        out = M.step(cfg, s, action_code(cfg, rec["action"]))
        assert M.pos_encode(cfg, out.next) == position_key(cfg, rec["next"]), rec
        assert lean_corpus_module.RESULT_CODES[rec["result"]] == _result_code(out.result), rec
        checked += 1
    assert checked >= 20
    assert edges == set(EDGES)


def _result_code(result) -> int:
    return {None: 0, 0: 1, 1: 2, M.DRAW: 3}[result]


# --- certificates ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def solved():
    cfg = Cfg.of(research("3x3-c3"))
    winner, chosen = tinycert.solve(cfg)
    return cfg, winner, chosen


def test_tiny_ruleset_is_a_first_player_win(solved):
    cfg, winner, chosen = solved
    assert winner == 0
    assert M.initial(cfg) in chosen


@pytest.mark.parametrize("canonical_images", [False, True])
def test_decode_of_render_is_the_certificate(tmp_path, solved, canonical_images):
    cfg, winner, chosen = solved
    tinycert.write(
        cfg, tmp_path / "cert", winner, chosen, per_shard=12, canonical_images=canonical_images
    )
    summary = R.render(tmp_path / "cert", tmp_path / "Generated", chunk=5)
    back = readback.read_back(tmp_path / "Generated")
    assert back.canonical() == lean_certdata.read_certificate(tmp_path / "cert").canonical()
    assert summary["entries"] == sum(len(s.entries) for s in back.shards)
    assert summary["aliases"] == sum(len(s.aliases) for s in back.shards) > 0


def test_render_is_deterministic(tmp_path, solved):
    cfg, winner, chosen = solved
    tinycert.write(cfg, tmp_path / "cert", winner, chosen)
    R.render(tmp_path / "cert", tmp_path / "a" / "Generated")
    R.render(tmp_path / "cert", tmp_path / "b" / "Generated")
    a = {p.name: p.read_bytes() for p in (tmp_path / "a" / "Generated").iterdir()}
    b = {p.name: p.read_bytes() for p in (tmp_path / "b" / "Generated").iterdir()}
    assert a == b
    assert not [p for p in (tmp_path / "a").iterdir() if p.name != "Generated"]


def test_mirror_accepts_a_valid_certificate_and_its_canonical_form(tmp_path, solved):
    cfg, winner, chosen = solved
    for canon in (False, True):
        out = tmp_path / f"cert{canon}"
        tinycert.write(cfg, out, winner, chosen, per_shard=9, canonical_images=canon)
        cert = lean_certdata.read_certificate(out)
        lean_certdata.expand(cert)
        assert R.mirror_check(cert) == (True, "accepted")


def test_shard_order_matters_to_the_lean_checker(tmp_path, solved):
    """A shard may only look into earlier shards: reversing them must be rejected."""
    cfg, winner, chosen = solved
    tinycert.write(cfg, tmp_path / "cert", winner, chosen)
    cert = lean_certdata.read_certificate(tmp_path / "cert")
    cert.shards.reverse()
    lean_certdata.expand(cert)
    ok, reason = R.mirror_check(cert)
    assert not ok and "rejected" in reason


def test_bad_certificates_get_one_line_errors(tmp_path, solved):
    cfg, winner, chosen = solved
    tinycert.write(cfg, tmp_path / "cert", winner, chosen)
    shard = sorted((tmp_path / "cert").glob("shard-*"))[0]
    shard.write_bytes(shard.read_bytes()[:-5])
    with pytest.raises(lean_certdata.RenderError, match="blake3") as info:
        R.render(tmp_path / "cert", tmp_path / "Generated")
    assert "\n" not in str(info.value)
    assert not (tmp_path / "Generated").exists()
    with pytest.raises(lean_certdata.RenderError, match="index.yaml"):
        R.render(tmp_path / "nothing", tmp_path / "Generated")
    tinycert.write(cfg, tmp_path / "other", winner, chosen)
    index = (tmp_path / "other" / "index.yaml").read_text()
    other = index.replace("3x3-c3-torus-continue", "3x3-c3-torus-draw")
    (tmp_path / "other" / "index.yaml").write_text(other)
    with pytest.raises(lean_certdata.RenderError, match="field 'stuck'"):
        R.render(tmp_path / "other", tmp_path / "Generated")


def test_render_never_clobbers_a_foreign_directory(tmp_path, solved):
    cfg, winner, chosen = solved
    tinycert.write(cfg, tmp_path / "cert", winner, chosen)
    out = tmp_path / "Generated"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    with pytest.raises(lean_certdata.RenderError, match="not written by render"):
        R.render(tmp_path / "cert", out)
    assert (out / "mine.txt").read_text() == "keep"
    (out / "mine.txt").unlink()
    R.render(tmp_path / "cert", out)
    (out / "Stale.lean").write_text("-- from an earlier render")
    R.render(tmp_path / "cert", out)
    assert not (out / "Stale.lean").exists()


def test_render_cli(tmp_path, solved, capsys):
    from harness.errors import HarnessError
    from harness.lean.cli import register_render

    cfg, winner, chosen = solved
    tinycert.write(cfg, tmp_path / "cert", winner, chosen)
    parser = argparse.ArgumentParser()
    register_render(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["render", str(tmp_path / "cert"), "--out", str(tmp_path / "Generated"), "--check"]
    )
    assert args.func(args) == 0
    assert "rendered pop1-3x3-c3" in capsys.readouterr().out
    assert (tmp_path / "Generated" / "Main.lean").is_file()
    args = parser.parse_args(["render", str(tmp_path / "missing")])
    with pytest.raises(HarnessError) as info:
        args.func(args)
    assert info.value.exit_code == 2


def test_corpus_module_counts_branches(tmp_path, solved):
    from harness.rules.corpus import build_corpus

    records = build_corpus(0)
    text, info, decls = lean_corpus_module.render_corpus_text(records, "Generated")
    kept = [r for r in records if _covered(r) and "repetition_draw" not in r["branches"]]
    assert info["records"] == len(kept) == len(re.findall(r"⟨\d+, \[", text))
    assert info["records"] + info["skipped"] == len(records)
    place = sum("place" in r["branches"] for r in kept)
    assert f"place={place}" in info["guard_hits"]
    assert "repetition_draw" not in info["guard_hits"]
    assert f"-- Expected: {info['guard_hits']}" in text
    # Every edge is in the corpus module, each chunk is its own declaration.
    assert {e for e in EDGES if f".{e}⟩" in text} == set(EDGES)
    assert len(decls) == len(re.findall(r"^theorem r\d+_ok", text, re.M)) > 5
    for branch in ("fall_reincarnation", "fall_ringout", "push_twist", "ringout_loss"):
        assert f"{branch}=" in info["guard_hits"]


def _covered(rec) -> bool:
    try:
        Cfg.of(Ruleset.from_id(rec["ruleset"]))
    except EncodingError:
        return False
    return True


# --- Lean sources ------------------------------------------------------------------------------


def lean_sources() -> list[Path]:
    return sorted((ROOT / "lean").rglob("*.lean")) + sorted(
        (ROOT / "harness" / "lean" / "templates").glob("*.jinja")
    )


def test_lean_sources_have_no_escape_hatches():
    banned = re.compile(r"\b(sorry|admit|native_decide|implemented_by|extern)\b|^prelude", re.M)
    for path in lean_sources():
        if "Generated" in path.parts or ".lake" in path.parts:
            continue
        text = re.sub(r"/-.*?-/|--[^\n]*", "", path.read_text(encoding="utf-8"), flags=re.S)
        assert not banned.search(text), f"{path}: {banned.search(text).group(0)}"


def test_toolchain_is_pinned_and_proof_modules_pin_axioms():
    assert (ROOT / "lean" / "lean-toolchain").read_text().strip() == "leanprover/lean4:v4.34.0"
    for name in ("shard", "main", "corpus"):
        text = (ROOT / "harness" / "lean" / "templates" / f"{name}.lean.jinja").read_text()
        assert "#guard_msgs (whitespace := lax) in\n#print axioms" in text
        assert "depends on axioms: {{ pinned }}" in text
    assert lean_templating.PINNED == "[propext, Classical.choice, Quot.sound]"


def test_render_summary_lists_modules_in_dependency_order(tmp_path, solved):
    cfg, winner, chosen = solved
    tinycert.write(cfg, tmp_path / "cert", winner, chosen, per_shard=20)
    R.render(tmp_path / "cert", tmp_path / "Generated")
    summary = json.loads((tmp_path / "Generated" / "render.json").read_text())
    done = set()
    for mod in summary["modules"]:
        assert set(mod["imports"]) <= done
        text = (tmp_path / "Generated" / mod["file"]).read_text()
        assert sorted(re.findall(r"^import (Generated\.\w+)$", text, re.M)) == sorted(
            mod["imports"]
        )
        done.add(mod["module"])
    assert summary["theorem"]["name"] == "Generated.Main.initial_force_win"


def test_poptest_examples_agree_with_the_mirror():
    """Every `legal`/`step` example of lean/PopTest.lean, evaluated by the mirror."""
    text = (ROOT / "lean" / "PopTest.lean").read_text()
    geo = r"\(Geo\.of ⟨(\d+), (\d+), (\d+), \.(\w+)⟩\)"
    legal = re.compile(rf"example : legal {geo} \(decode {geo} (\d+)\) = \[([\d, ]*)\]")
    nxt = re.compile(
        rf"example : encode {geo} \(step {geo} \(decode {geo} (\d+)\) (\d+)\)\.next = (\d+)"
    )
    res = re.compile(
        rf"example : resultCode \(step {geo} \(decode {geo} (\d+)\) (\d+)\)\.result = (\d)"
    )
    counts = [0, 0, 0]
    for m in legal.finditer(text):
        cfg = Cfg(int(m[1]), int(m[2]), int(m[3]), m[4])
        want = [int(x) for x in m[10].split(",")] if m[10].strip() else []
        assert M.legal(cfg, M.pos_decode(cfg, int(m[9]))) == want, m[0]
        counts[0] += 1
    for m in nxt.finditer(text):
        cfg = Cfg(int(m[1]), int(m[2]), int(m[3]), m[4])
        out = M.step(cfg, M.pos_decode(cfg, int(m[13])), int(m[14]))
        assert M.pos_encode(cfg, out.next) == int(m[15]), m[0]
        counts[1] += 1
    for m in res.finditer(text):
        cfg = Cfg(int(m[1]), int(m[2]), int(m[3]), m[4])
        out = M.step(cfg, M.pos_decode(cfg, int(m[9])), int(m[10]))
        assert _result_code(out.result) == int(m[11]), m[0]
        counts[2] += 1
    assert min(counts) >= 18
    assert {e for e in EDGES if f", .{e}⟩" in text} == set(EDGES)
