"""Non-win sets (format 2): built from strong solutions, accepted when honest, every mutation
rejected with its shard and line.

Mutations rewrite the certificate consistently (digests, counts, set and certificate hashes
recomputed) unless a hash is the point, so the rejection seen is the one named.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
import yaml

from harness.cert.format import Shard, certificate_hash, digest, dump_index
from harness.cert.nonwin_builder import NonWinError, build_nonwin, consolidate
from harness.cert.nonwin_checker import check_nonwin
from harness.cert.nonwin_format import NonWinEntry, NonWinSet, write_nonwin
from harness.lean.certdata import RenderError
from harness.lean.codec import lean_model_gap
from harness.lean.render_nonwin import expand, mirror_check, read_nonwin_certificate
from harness.rules import Action, Position, Ruleset, legal_actions, play_unchecked
from harness.rules.symmetry import canonical
from harness.solver.retrograde import solve
from harness.solver.solution import Solution

TORUS_3X3 = "pop1-3x3-c3-torus-continue-nomove-king-nozero-nojump"  # a draw (stuck passes)
TORUS_3X4 = "pop1-3x4-c3-torus-continue-binempty-king-nozero-nojump"  # a draw
REINC_4X4 = "pop1-4x4-c8-reincarnation-continue-binempty-king-nozero-nojump"  # a draw
REINC_4X4_C4 = "pop1-4x4-c4-reincarnation-continue-binempty-king-nozero-nojump"  # a draw
X_WINS = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"  # x wins in 7


@pytest.fixture(scope="module")
def solutions() -> dict[str, Solution]:
    return {rid: solve(Ruleset.from_id(rid)) for rid in (TORUS_3X3, TORUS_3X4, X_WINS)}


def certify(sol: Solution, out: Path, players=(0, 1), max_entries: int = 20) -> dict:
    rs = sol.ruleset
    sets = [build_nonwin(sol, p).as_set(rs, max_entries) for p in players]
    return write_nonwin(out, rs.id, Position.initial(rs).text(rs), sets)


@pytest.fixture(scope="module")
def good(solutions, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("nonwin") / "torus3x4"
    certify(solutions[TORUS_3X4], out)
    return out


@pytest.fixture
def cert(good, tmp_path) -> Path:
    copy = tmp_path / "cert"
    shutil.copytree(good, copy)
    return copy


def load(cert: Path) -> tuple[dict, list[list[list[dict]]]]:
    index = yaml.safe_load((cert / "index.yaml").read_text())
    sets = []
    for nws in index["sets"]:
        shards = []
        for meta in nws["shards"]:
            lines = gzip.decompress((cert / meta["file"]).read_bytes()).decode().splitlines()
            shards.append([json.loads(line) for line in lines])
        sets.append(shards)
    return index, sets


def save(cert: Path, index: dict, sets: list[list[list]], raw: bool = False) -> None:
    """Write every shard (dicts, or text lines when ``raw``) and a consistent index."""
    for nws, shards in zip(index["sets"], sets, strict=True):
        for meta, lines in zip(nws["shards"], shards, strict=True):
            text = "".join((line if raw else json.dumps(line)) + "\n" for line in lines)
            data = gzip.compress(text.encode(), mtime=0)
            (cert / meta["file"]).write_bytes(data)
            meta["blake3"] = digest(data)
            meta["entries"] = len(lines)
        nws["entries"] = sum(len(s) for s in shards)
        nws["hash"] = certificate_hash([m["blake3"] for m in nws["shards"]])
    index["entries"] = sum(n["entries"] for n in index["sets"])
    index["hash"] = certificate_hash([n["hash"] for n in index["sets"]])
    (cert / "index.yaml").write_text(dump_index(index))


def mirror_verdict(cert: Path) -> tuple[bool, str]:
    """The Python mirror of the Lean checker on ``cert``: what the rendered modules would ask
    the kernel (reading errors count as rejections, as Lean would never get the modules)."""
    try:
        data = read_nonwin_certificate(cert)
        expand(data)
    except RenderError as exc:
        return False, str(exc)
    return mirror_check(data)


def rejected(cert: Path, *needles: str, ruleset: str | None = None) -> str:
    """Both checkers reject ``cert``: the Python checker with the reasons named, and the mirror
    of the Lean checker whenever the Lean model covers the ruleset."""
    report = check_nonwin(cert, ruleset=ruleset)
    assert not report.ok
    text = "\n".join(report.errors)
    for needle in needles:
        assert needle in text, text
    if ruleset is None and _in_lean_model(cert):
        ok, reason = mirror_verdict(cert)
        assert not ok, "the Lean mirror accepts what the Python checker rejects"
    return text


def _in_lean_model(cert: Path) -> bool:
    try:
        rid = yaml.safe_load((cert / "index.yaml").read_text())["ruleset"]
        return lean_model_gap(Ruleset.from_id(rid)) is None
    except (OSError, ValueError, KeyError, TypeError):
        return False


def entries_of(index, sets, rs):
    """(set number, shard number, line number, entry, position) of every entry."""
    for j, shards in enumerate(sets):
        for i, lines in enumerate(shards):
            for n, e in enumerate(lines):
                yield j, i, n, e, Position.from_text(rs, e["position"])


# --- accepted ---------------------------------------------------------------------------


@pytest.mark.parametrize("rid", [TORUS_3X3, TORUS_3X4])
def test_draws_accepted(rid, solutions, tmp_path):
    index = certify(solutions[rid], tmp_path / "c")
    report = check_nonwin(tmp_path / "c", ruleset=rid)
    assert report.ok, report.errors
    assert report.value == index["value"] == "draw"
    assert report.players == ["x", "o"]
    assert report.entries == index["entries"] > 0
    assert report.turns >= report.entries
    if lean_model_gap(Ruleset.from_id(rid)) is None:
        assert mirror_verdict(tmp_path / "c") == (True, "accepted")


def test_reincarnation_4x4_draw_accepted_and_agrees_with_the_solution(tmp_path):
    sol = solve(Ruleset.from_id(REINC_4X4))
    assert sol.value == "draw"
    certify(sol, tmp_path / "c", max_entries=20000)
    report = check_nonwin(tmp_path / "c", ruleset=REINC_4X4)
    assert report.ok, report.errors
    assert_values_agree(sol, tmp_path / "c")


def assert_values_agree(sol: Solution, cert: Path) -> None:
    """No position of p's set is a win for p by the strong solution; the defender's action
    keeps p from winning by the solution too."""
    rs = sol.ruleset
    index, sets = load(cert)
    checked = 0
    for j, _, _, e, pos in entries_of(index, sets, rs):
        p = index["sets"][j]["player"]
        value, _ = sol.value_of(pos)
        assert value is not None and value != p, (e, value)
        if e["action"] is not None:
            rated = dict((a.text(rs), v) for a, v, _ in sol.rated_actions(pos))
            assert rated[e["action"]] != p, e
        checked += 1
    assert checked == index["entries"]


def test_values_agree_on_small_draws(solutions, tmp_path):
    for rid in (TORUS_3X3, TORUS_3X4):
        certify(solutions[rid], tmp_path / rid)
        assert_values_agree(solutions[rid], tmp_path / rid)


def test_o_cannot_win_where_x_wins(solutions, tmp_path):
    """One set alone: o cannot force a win in a ruleset x wins; x's set cannot be built."""
    sol = solutions[X_WINS]
    index = certify(sol, tmp_path / "c", players=(1,))
    assert index["value"] == "not o"
    assert check_nonwin(tmp_path / "c").ok
    assert mirror_verdict(tmp_path / "c") == (True, "accepted")
    with pytest.raises(NonWinError, match="x wins from the initial position"):
        build_nonwin(sol, 0)


def test_greedy_choice_is_smaller_than_the_first_action(solutions):
    sol = solutions[TORUS_3X4]
    for p in (0, 1):
        assert len(build_nonwin(sol, p).positions) < len(
            build_nonwin(sol, p, greedy=False).positions
        )


def test_looking_ahead_and_rounds_give_a_smaller_reincarnation_set(tmp_path):
    """Each build's set is closed and accepted; the default (look-ahead, rounds preferring the
    previous set) is smaller than one plain greedy round on both sides."""
    sol = solve(Ruleset.from_id(REINC_4X4_C4))
    for p in (0, 1):
        plain = build_nonwin(sol, p, lookahead=0, rounds=1, consolidated=False)
        small = build_nonwin(sol, p, consolidated=False)
        assert plain.rounds == 1 and small.rounds > 1
        assert len(small.positions) < len(plain.positions)
    index = certify(sol, tmp_path / "c", max_entries=100)
    assert check_nonwin(tmp_path / "c").ok
    assert index["entries"] == sum(len(build_nonwin(sol, p).positions) for p in (0, 1))


def test_entries_are_canonical_images(good):
    rs = Ruleset.from_id(TORUS_3X4)
    index, sets = load(good)
    for *_, pos in entries_of(index, sets, rs):
        assert canonical(rs, pos)[0] == pos


def test_writing_is_deterministic(solutions, tmp_path):
    a = certify(solutions[TORUS_3X4], tmp_path / "a")
    b = certify(solutions[TORUS_3X4], tmp_path / "b")
    assert a["hash"] == b["hash"]


# --- rejected: the game -----------------------------------------------------------------


def _defender_entries(index, sets, rs):
    for j, i, n, e, pos in entries_of(index, sets, rs):
        if e["action"] is not None:
            yield j, i, n, e, pos


def test_a_set_closed_except_for_one_position(cert):
    """Drop one non-root entry: whoever reached it now leads outside the set."""
    index, sets = load(cert)
    j, i = 0, len(sets[0]) - 1
    dropped = sets[j][i].pop()
    save(cert, index, sets)
    text = rejected(cert, "leads outside the set")
    assert dropped["position"] not in text or "to '" in text
    assert "line" in text and "nonwin-x-" in text


def test_defender_action_illegal(cert):
    rs = Ruleset.from_id(TORUS_3X4)
    index, sets = load(cert)
    j, i, n, e, pos = next(_defender_entries(index, sets, rs))
    occupied = next(sq for sq in range(rs.rows * rs.cols) if pos.occupied >> sq & 1)
    sets[j][i][n]["action"] = Action(None, occupied).text(rs)
    save(cert, index, sets)
    rejected(cert, "illegal action", f"line {n + 1}")


def test_defender_action_leading_outside(cert):
    rs = Ruleset.from_id(TORUS_3X4)
    index, sets = load(cert)
    member = {canonical(rs, pos)[0] for j, _, _, _, pos in entries_of(index, sets, rs) if j == 0}
    for j, i, n, _e, pos in _defender_entries(index, sets, rs):
        if j != 0:
            continue
        for a in legal_actions(rs, pos):
            out = play_unchecked(rs, pos, a)
            if out.result is None and canonical(rs, out.next)[0] not in member:
                sets[j][i][n]["action"] = a.text(rs)
                save(cert, index, sets)
                rejected(cert, "the defender's action", "leads outside the set")
                return
    raise AssertionError("no defender action leaves the set")


def test_an_action_that_wins_for_the_wrong_side(cert):
    """A defender's action that makes p's line (a pop) or completes the defender's own
    losing move: p wins, and the set claims p cannot."""
    rs = Ruleset.from_id(TORUS_3X4)
    index, sets = load(cert)
    for j, i, n, _e, pos in _defender_entries(index, sets, rs):
        p = index["sets"][j]["player"]
        for a in legal_actions(rs, pos):
            if play_unchecked(rs, pos, a).result == p:
                sets[j][i][n]["action"] = a.text(rs)
                save(cert, index, sets)
                rejected(cert, f"ends the game in a win for {p}")
                return
    raise AssertionError("no defender action in the certificate hands p a win")


def test_a_certificate_for_a_position_that_is_lost(tmp_path):
    """Claim 'x cannot win' where x wins: the closure of o's first actions, with x's winning
    actions left out as if they did not win; the checker finds x's win."""
    rs = Ruleset.from_id(X_WINS)
    root = Position.initial(rs)
    seen, todo, entries = {canonical(rs, root)[0]}, [canonical(rs, root)[0]], []
    while todo:
        pos = todo.pop()
        actions = legal_actions(rs, pos)
        chosen = actions if pos.turn == 0 else actions[:1]
        entries.append(NonWinEntry(pos.text(rs), None if pos.turn == 0 else chosen[0].text(rs)))
        for a in chosen:
            out = play_unchecked(rs, pos, a)
            key = canonical(rs, out.next)[0]
            if out.result is None and key not in seen:
                seen.add(key)
                todo.append(key)
    ranks = sorted({Position.from_text(rs, e.position).placement_rank() for e in entries})
    shards = [
        Shard(r, [e for e in entries if Position.from_text(rs, e.position).placement_rank() == r])
        for r in ranks
    ]
    write_nonwin(tmp_path / "c", rs.id, root.text(rs), [NonWinSet(0, shards)])
    rejected(tmp_path / "c", "ends the game in a win for x")


def test_a_p_action_not_covered(cert):
    """Drop an entry that only p's actions reach."""
    rs = Ruleset.from_id(TORUS_3X4)
    index, sets = load(cert)
    by_key = {}
    for j, i, n, _e, pos in entries_of(index, sets, rs):
        if j == 0:
            by_key[canonical(rs, pos)[0]] = (i, n)
    for j, i, n, e, pos in entries_of(index, sets, rs):
        if j != 0 or e["action"] is not None:
            continue
        for a in legal_actions(rs, pos):
            out = play_unchecked(rs, pos, a)
            if out.result is None:
                ti, tn = by_key[canonical(rs, out.next)[0]]
                if (ti, tn) != (i, n) and ti > 0:
                    del sets[0][ti][tn]
                    save(cert, index, sets)
                    rejected(cert, "x's action", "leads outside the set")
                    return
    raise AssertionError("nothing to drop")


def test_initial_position_missing(cert):
    index, sets = load(cert)
    assert sets[0][0][0]["position"] == index["root"]
    del sets[0][0][0]
    save(cert, index, sets)
    rejected(cert, "the initial position", "is not in the set")


def test_truncated_set_missing_shard(cert):
    index, sets = load(cert)
    (cert / index["sets"][1]["shards"][-1]["file"]).unlink()
    rejected(cert, "shard listed in index.yaml is missing")


def test_truncated_gzip(cert):
    index, _ = load(cert)
    path = cert / index["sets"][0]["shards"][0]["file"]
    data = path.read_bytes()[:-9]
    path.write_bytes(data)
    index["sets"][0]["shards"][0]["blake3"] = digest(data)
    nws = index["sets"][0]
    nws["hash"] = certificate_hash([m["blake3"] for m in nws["shards"]])
    index["hash"] = certificate_hash([n["hash"] for n in index["sets"]])
    (cert / "index.yaml").write_text(dump_index(index))
    rejected(cert, "corrupt or truncated gzip")


def test_truncated_set_shard_unlisted(cert):
    """A shard left out of the index: the set is not closed any more."""
    index, sets = load(cert)
    del index["sets"][0]["shards"][1]
    del sets[0][1]
    save(cert, index, sets)
    rejected(cert, "leads outside the set")


def test_action_named_where_p_is_to_move(cert):
    index, sets = load(cert)
    sets[0][0][0]["action"] = "a1"
    save(cert, index, sets)
    rejected(cert, "must not name one", "line 1")


def test_defender_without_action(cert):
    rs = Ruleset.from_id(TORUS_3X4)
    index, sets = load(cert)
    j, i, n, e, pos = next(_defender_entries(index, sets, rs))
    sets[j][i][n]["action"] = None
    save(cert, index, sets)
    rejected(cert, "names no action")


def test_duplicate_entry(cert):
    index, sets = load(cert)
    sets[0][-1].append(dict(sets[0][-1][0]))
    save(cert, index, sets)
    rejected(cert, "duplicate entry")


def test_placement_rank_mismatch(cert):
    index, sets = load(cert)
    index["sets"][0]["shards"][0]["placement_rank"] += 1
    save(cert, index, sets)
    rejected(cert, "placement rank")


def test_unknown_field_in_a_line(cert):
    index, sets = load(cert)
    sets[0][0][0]["rank"] = 3
    save(cert, index, sets)
    rejected(cert, "unknown field(s) rank")


def test_malformed_position(cert):
    index, sets = load(cert)
    sets[0][0][0]["position"] = "nonsense"
    save(cert, index, sets)
    rejected(cert, "malformed entry", "line 1")


# --- rejected: the index and hashes -------------------------------------------------------


def test_wrong_ruleset(cert):
    rejected(cert, "ruleset mismatch", ruleset=REINC_4X4)


def test_ruleset_in_index_changed(cert):
    index, sets = load(cert)
    index["ruleset"] = "pop1-3x4-c3-klein-continue-binempty-king-nozero-nojump"
    save(cert, index, sets)
    assert not check_nonwin(cert).ok


def test_bad_shard_hash(cert):
    index, _ = load(cert)
    path = cert / index["sets"][0]["shards"][0]["file"]
    data = bytearray(path.read_bytes())
    data[-5] ^= 1
    path.write_bytes(bytes(data))
    rejected(cert, "hash mismatch: index says blake3")


def test_bad_set_hash(cert):
    index, _ = load(cert)
    index["sets"][1]["hash"] = "0" * 64
    (cert / "index.yaml").write_text(dump_index(index))
    rejected(cert, "set o: hash mismatch")


def test_bad_certificate_hash(cert):
    index, _ = load(cert)
    index["hash"] = "0" * 64
    (cert / "index.yaml").write_text(dump_index(index))
    rejected(cert, "hash mismatch: index says")


def test_value_must_match_sets(cert):
    index, _ = load(cert)
    index["value"] = "not x"
    (cert / "index.yaml").write_text(dump_index(index))
    rejected(cert, "value 'not x'")


def test_root_not_initial(cert):
    index, sets = load(cert)
    index["root"] = "x.../..../.... 2 3 o"
    save(cert, index, sets)
    rejected(cert, "is not the initial position")


def test_no_index(tmp_path):
    rejected(tmp_path, "no index.yaml")


# --- the commands -------------------------------------------------------------------------


def test_certify_a_draw_without_a_solution_and_check_it(tmp_path, capsys):
    """The issue's complaint: certify used to answer 'no forced win' for a draw."""
    from harness.cli import main

    out = tmp_path / "c"
    assert main(["certify", TORUS_3X4, "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["value"] == "draw" and summary["kind"] == "nonwin"
    assert main(["check", str(out), "--ruleset", TORUS_3X4, "--json"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["ok"] and report["value"] == "draw" and report["hash"] == summary["hash"]


def test_certify_with_a_solution_file(solutions, tmp_path, capsys):
    from harness.cli import main

    npz = solutions[TORUS_3X3].save(tmp_path / "sol.npz")
    out = tmp_path / "c"
    assert main(["certify", TORUS_3X3, "--solution", str(npz), "--out", str(out)]) == 0
    assert "a draw" in capsys.readouterr().out
    assert check_nonwin(out).ok
    assert main(["certify", TORUS_3X4, "--solution", str(npz), "--out", str(tmp_path / "d")]) == 2
    assert "not pop1-3x4" in capsys.readouterr().err


def test_check_rejects_a_mutated_draw_with_exit_1(cert, capsys):
    from harness.cli import main

    index, sets = load(cert)
    sets[0][-1].pop()
    save(cert, index, sets)
    assert main(["check", str(cert)]) == 1
    assert "rejected:" in capsys.readouterr().err


@pytest.mark.parametrize("rid", [REINC_4X4_C4, TORUS_3X4])
def test_consolidation_shrinks_a_set_and_keeps_it_closed(rid, tmp_path):
    """Replies moved onto the set's most reached positions: never a position that was not
    in the set, fewer in all on the reincarnation draw, and the checker accepts both sets."""
    rs = Ruleset.from_id(rid)
    sol = solve(rs)
    shrunk = 0
    for p in (0, 1):
        try:
            greedy = build_nonwin(sol, p, consolidated=False)
        except NonWinError:
            continue  # the player wins: no set
        small = consolidate(rs, greedy)
        assert small.positions[0] == Position.initial(rs) and small.player == p
        assert set(small.positions) <= set(greedy.positions)
        shrunk += len(greedy.positions) - len(small.positions)
        assert build_nonwin(sol, p).positions == small.positions
        write_nonwin(tmp_path / f"c{p}", rs.id, Position.initial(rs).text(rs), [small.as_set(rs)])
        assert check_nonwin(tmp_path / f"c{p}").ok
    if rid == REINC_4X4_C4:
        assert shrunk > 0


@pytest.mark.parametrize("rid", [REINC_4X4_C4, TORUS_3X4, TORUS_3X3])
def test_a_set_of_first_actions_consolidates_into_an_accepted_set(rid, tmp_path):
    """Where a defender's stored action is not the one that ends the game, consolidation
    still replies with an ending action, and nothing leads outside the set."""
    rs = Ruleset.from_id(rid)
    sol = solve(rs)
    sets = []
    for p in (0, 1):
        try:
            first = build_nonwin(sol, p, greedy=False)
        except NonWinError:
            continue
        sets.append(consolidate(rs, first).as_set(rs))
        assert len(sets[-1].shards) and sum(len(s.entries) for s in sets[-1].shards) <= len(
            first.positions
        )
    write_nonwin(tmp_path / "c", rs.id, Position.initial(rs).text(rs), sets)
    report = check_nonwin(tmp_path / "c")
    assert report.ok, report.errors[:3]


def test_the_index_says_whether_the_sets_were_consolidated(tmp_path, capsys):
    """certify records it; check accepts the field, and refuses anything but true or false."""
    from harness.cli import main

    sol_file = tmp_path / "sol.npz"
    solve(Ruleset.from_id(REINC_4X4)).save(sol_file)
    for name, extra, said in (("c", [], True), ("g", ["--no-consolidate"], False)):
        out = tmp_path / name
        args = ["certify", REINC_4X4, "--solution", str(sol_file), "--out", str(out)]
        assert main([*args, "--json", *extra]) == 0
        assert json.loads(capsys.readouterr().out)["consolidated"] is said
        assert yaml.safe_load((out / "index.yaml").read_text())["consolidated"] is said
        assert check_nonwin(out).ok
    index = tmp_path / "c" / "index.yaml"
    index.write_text(index.read_text().replace("consolidated: true", "consolidated: 'yes'"))
    report = check_nonwin(tmp_path / "c")
    assert not report.ok and "consolidated 'yes' is not true or false" in report.errors[0]
