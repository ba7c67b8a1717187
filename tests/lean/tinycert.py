"""A tiny certificate builder for tests: solves a small research-family ruleset with the
mirror of the Lean model and writes the winner's strategy closure in certificate format 1,
positions stored exactly as play reaches them (or as another symmetric image, on request)."""

from __future__ import annotations

from pathlib import Path

from harness.cert.format import Entry, Shard, write_certificate
from harness.lean import model as M
from harness.lean.codec import (
    Cfg,
    action_of_code,
    action_text,
    code_of_action,
    position_text,
)
from harness.rules import Position
from harness.rules.symmetry import canonical

INF = 10**9


def game_graph(cfg: Cfg) -> tuple[list[M.Pos], dict[M.Pos, list[tuple[int, M.Outcome]]]]:
    start = M.initial(cfg)
    order, seen, succ = [start], {start}, {}
    for s in order:
        outs = [(a, M.step(cfg, s, a)) for a in M.legal(cfg, s)]
        succ[s] = outs
        for _, o in outs:
            if o.result is None and o.next not in seen:
                seen.add(o.next)
                order.append(o.next)
    return order, succ


def win_distances(cfg: Cfg, p: int, order, succ) -> dict[M.Pos, int]:
    """Plies to a forced win for ``p`` (winner fastest, loser slowest); absent: no forced win."""
    dist: dict[M.Pos, int] = {}
    changed = True
    while changed:
        changed = False
        for s in order:
            outs = succ[s]
            if not outs:
                continue
            vals = []
            for _, o in outs:
                if o.result is not None:
                    vals.append(1 if o.result == p else INF)
                else:
                    d = dist.get(o.next)
                    vals.append(INF if d is None else d + 1)
            v = min(vals) if s.turn == p else max(vals)
            if v < INF and dist.get(s) != v:
                dist[s] = v
                changed = True
    return dist


def strategy(cfg: Cfg, winner: int, dist, succ) -> dict[M.Pos, tuple[int, int]]:
    """Winner-to-move positions reached from the root under the fastest strategy:
    position -> (action code, rank)."""
    chosen: dict[M.Pos, tuple[int, int]] = {}
    todo = [M.initial(cfg)]
    seen = set()
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        if s.turn == winner:
            best = None
            for a, o in succ[s]:
                d = 1 if o.result == winner else dist.get(o.next, INF) + 1
                if o.result is not None and o.result != winner:
                    d = INF
                if best is None or d < best[0]:
                    best = (d, a, o)
            d, a, o = best
            chosen[s] = (a, dist[s])
            if o.result is None:
                todo.append(o.next)
        else:
            for _, o in succ[s]:
                if o.result is None:
                    todo.append(o.next)
    return chosen


def solve(cfg: Cfg) -> tuple[int, dict[M.Pos, tuple[int, int]]]:
    order, succ = game_graph(cfg)
    for p in (0, 1):
        dist = win_distances(cfg, p, order, succ)
        if M.initial(cfg) in dist:
            return p, strategy(cfg, p, dist, succ)
    raise ValueError(f"{cfg}: no forced win")


def write(
    cfg: Cfg,
    out: Path,
    winner: int,
    chosen,
    *,
    per_shard: int = 10**9,
    canonical_images: bool = False,
) -> dict:
    """Write ``chosen`` as a certificate: one entry per symmetry class (the checker refuses two
    images of one position): the least-key image as reached, or with ``canonical_images`` the
    canonical image with its action mapped. Shards by placement rank, lowest first, then by
    rank, at most ``per_shard`` entries each."""
    rs = cfg.ruleset()
    classes: dict = {}
    for s, (a, rank) in sorted(chosen.items(), key=lambda kv: M.pos_encode(cfg, kv[0])):
        here = Position((s.x, s.o), (s.xbin, s.obin), s.turn)
        canon, sym = canonical(rs, here)
        if canon in classes:
            continue
        if canonical_images:
            act = sym.action(action_of_code(cfg, a))
            s = M.Pos(canon.board[0], canon.board[1], s.xbin, s.obin, s.turn)
            a = code_of_action(cfg, act)
        classes[canon] = (rank, M.pos_encode(cfg, s), a)
    by_pr: dict[int, list] = {}
    for rank, key, a in classes.values():
        d = M.pos_decode(cfg, key)
        by_pr.setdefault(d.xbin + d.obin, []).append((rank, key, a))
    shards = []
    for pr in sorted(by_pr):
        items = sorted(by_pr[pr])
        for i in range(0, len(items), per_shard):
            part = items[i : i + per_shard]
            shards.append(
                Shard(
                    pr,
                    [
                        Entry(position_text(cfg, k), action_text(cfg, a), rank)
                        for rank, k, a in part
                    ],
                )
            )
    root = position_text(cfg, M.pos_encode(cfg, M.initial(cfg)))
    return write_certificate(out, rs.id, "xo"[winner], root, shards, force=True)
