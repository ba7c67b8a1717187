"""The non-win renderer: pieces packed by the kernel cost model, lookups routed through the
balanced key index (``Pop.inIndex``), the literal tables, and a main module without a flat
proof chain. The mirror (:mod:`harness.lean.nonwin_model`) must accept honest draws and reject
mutations of the rendered index and pieces."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest

from harness.cert.nonwin_builder import build_nonwin
from harness.cert.nonwin_format import write_nonwin
from harness.lean import model as M
from harness.lean import nonwin_model as N
from harness.lean import render_nonwin as R
from harness.lean import sizing
from harness.rules import Position, Ruleset
from harness.solver.retrograde import solve

TORUS_3X4 = "pop1-3x4-c3-torus-continue-binempty-king-nozero-nojump"
REINC_4X4 = "pop1-4x4-c8-reincarnation-continue-binempty-king-nozero-nojump"


def _cert(rid: str, out) -> R.NonWinData:
    sol = solve(Ruleset.from_id(rid))
    assert sol.value == "draw"
    rs = sol.ruleset
    sets = [build_nonwin(sol, p).as_set(rs, 20000) for p in (0, 1)]
    write_nonwin(out, rs.id, Position.initial(rs).text(rs), sets)
    cert = R.read_nonwin_certificate(out)
    R.expand(cert)
    return cert


@pytest.fixture(scope="module")
def torus(tmp_path_factory) -> R.NonWinData:
    return _cert(TORUS_3X4, tmp_path_factory.mktemp("nw") / "torus")


@pytest.fixture(scope="module")
def reinc(tmp_path_factory) -> R.NonWinData:
    return _cert(REINC_4X4, tmp_path_factory.mktemp("nw") / "reinc")


@pytest.mark.parametrize("name", ["torus", "reinc"])
def test_mirror_accepts_the_draws(name, request):
    cert = request.getfixturevalue(name)
    assert R.mirror_check(cert) == (True, "accepted")


def _small_pieces(cert: R.NonWinData, budget: int) -> R.NonWinData:
    """A copy weighed under a small budget, so that the set has many pieces."""
    copy = replace(cert, sets=[replace(s) for s in cert.sets])
    R.weigh(copy, budget=budget)
    return copy


def test_routing_finds_every_entry_in_its_own_piece(torus):
    cert = _small_pieces(torus, 200_000)
    for nws in cert.sets:
        parts = R.pieces(nws)
        assert len(parts) > 4
        ix = N.index_of(parts)
        for part, tree in zip(parts, N.pieces_of(ix), strict=True):
            for k, _, _ in part:
                assert N.pick(ix, k) is tree
                assert N.in_index(cert.cfg, M.pos_decode(cert.cfg, k), ix)
    assert R.mirror_check(cert) == (True, "accepted")


def test_a_wrong_split_key_is_rejected(torus):
    """A split key one above the true first key routes that entry to the wrong piece: the
    lookup misses, and the set is no longer closed (or lacks the initial position)."""
    cert = _small_pieces(torus, 200_000)
    nws = cert.sets[0]
    parts = R.pieces(nws)
    ix = N.index_of(parts)
    assert isinstance(ix, N.Split)
    moved = N.Split(ix.key + 1, ix.lo, ix.hi)
    s = M.pos_decode(cert.cfg, ix.key)
    assert N.in_index(cert.cfg, s, ix) and not N.in_index(cert.cfg, s, moved)
    assert N.failing(cert.cfg, nws.player, moved) or not N.in_index(
        cert.cfg, M.initial(cert.cfg), moved
    )


@pytest.mark.parametrize("name", ["torus", "reinc"])
def test_a_dropped_or_changed_entry_is_rejected(name, request):
    cert = request.getfixturevalue(name)
    cfg = cert.cfg
    for nws in cert.sets:
        entries = nws.expanded()
        defender = [e for e in entries if M.pos_decode(cfg, e[0]).turn != nws.player]
        # drop an entry that another entry's check looks up
        reached = _reached(cfg, nws.player, entries)
        gone = next(e for e in entries if e[0] in reached)
        ix = N.index_of([[e for e in entries if e != gone]])
        assert N.failing(cfg, nws.player, ix)
        # an illegal defender action
        k, a, n = defender[0]
        illegal = next(b for b in range(1, 10**4) if b not in M.legal(cfg, M.pos_decode(cfg, k)))
        bad = [(k, illegal, n) if e == (k, a, n) else e for e in entries]
        assert N.failing(cfg, nws.player, N.index_of([bad]))


def _reached(cfg, p, entries) -> set[int]:
    """Keys of the positions the entries' checks look up."""
    out = set()
    for k, a, _ in entries:
        s = M.pos_decode(cfg, k)
        for b in M.legal(cfg, s) if s.turn == p else [a]:
            o = M.step(cfg, s, b)
            if o.result is None:
                out.add(M.pos_encode(cfg, o.next))
    return out


@pytest.mark.parametrize("name", ["torus", "reinc"])
def test_every_declaration_is_under_budget(name, request):
    cert = request.getfixturevalue(name)
    summary = R.render_text(cert, "Generated").summary
    decls = summary["declarations"]
    checks = [d for d in decls if d["theorem"].endswith(".checked")]
    assert checks and all(0 < d["estimated_steps"] <= sizing.BUDGET for d in decls)
    assert sum(d["entries"] for d in checks) == sum(len(s.expanded()) for s in cert.sets)
    assert {d["theorem"] for d in decls} >= {"Generated.Cert.geo_eq", "Generated.Main.x_root"}


def test_a_small_budget_gives_more_pieces_each_under_it(torus):
    cert = _small_pieces(torus, 300_000)
    decls = R.render_text(cert, "Generated").summary["declarations"]
    checks = [d["estimated_steps"] for d in decls if d["theorem"].endswith(".checked")]
    assert len(checks) > 4 and max(checks) <= 300_000


def _depth(term: str) -> int:
    deepest = level = 0
    for ch in term:
        level += {"(": 1, ")": -1}.get(ch, 0)
        deepest = max(deepest, level)
    return deepest


def test_main_and_index_are_balanced_not_flat(torus):
    cert = _small_pieces(torus, 100_000)
    files = R.render_text(cert, "Generated").files
    pieces = max(len(s.runs) for s in cert.sets)
    assert pieces >= 8
    bound = 2 * math.ceil(math.log2(pieces)) + 2
    main = files["Main.lean"]
    assert "AllChecked" not in main and "Cert.game" not in main
    for m in re.finditer(r"theorem \w_checked :.*?:=\n  (.*?)\n\n", main, re.S):
        assert "IndexChecked.split" in m.group(1)
        assert _depth(m.group(1)) <= bound
    sets = [t for name, t in files.items() if name.startswith("Set")]
    assert len(sets) == 2
    for text in sets:
        assert "set_option maxRecDepth" in text
        body = text.split("abbrev index : PieceIndex :=\n", 1)[1]
        assert _depth(body) <= bound


def test_cert_module_has_the_literal_tables(torus):
    files = R.render_text(torus, "Generated").files
    cert = files["Cert.lean"]
    assert (
        "theorem geo_eq : geo = Geo.of cfg" in cert
        and "Geo.of cfg\n" not in cert.split("theorem geo_eq", 1)[0]
    )
    for name, text in files.items():
        if name.startswith("Check") or name == "Main.lean":
            assert "Cert.game" not in text and "Cert.geo" in text, name
    assert "not_forceWin_of_geo_eq Generated.Cert.geo_eq" in files["Main.lean"]


def test_an_output_name_lean_cannot_import_is_refused_before_any_work(tmp_path):
    """The folder's name is checked first: the certificate is not even read (a render of a
    big certificate would otherwise fail only at its end)."""
    from harness.lean.certdata import RenderError
    from harness.lean.render import render

    for fn in (R.render_nonwin, render):
        with pytest.raises(RenderError, match="'c5lean' is not a Lean module name"):
            fn(tmp_path / "no-such-certificate", tmp_path / "c5lean")
