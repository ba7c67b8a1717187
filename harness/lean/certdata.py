"""A certificate read for rendering (:class:`CertData`): every shard's entries as packed
keys, and the whole strategy expanded from them (:func:`expand`), with the errors of that
reading (:class:`RenderError`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness.cert.format import (
    CertificateError,
    certificate_hash,
    digest,
    parse_entry,
    read_index,
    read_shard_file,
    shard_lines,
)
from harness.lean import model as M
from harness.lean.codec import (
    Cfg,
    action_code,
    action_text,
    code_of_action,
    position_key,
    position_text,
)
from harness.lean.codec import decode as decode_key
from harness.rules import PLAYERS, Action, Position, Ruleset
from harness.rules.symmetry import canonical


class RenderError(ValueError):
    """A certificate, corpus or output directory the renderer cannot use (one line)."""


@dataclass
class ShardData:
    """One certificate shard, encoded: ``entries`` are (key, action code, rank) as stored."""

    file: str
    blake3: str
    placement_rank: int
    entries: list[tuple[int, int, int]]
    aliases: list[tuple[int, int, int]] = field(default_factory=list)
    # Filled by :func:`weigh`: per rendered entry (sorted by key), estimated kernel steps now
    # ("v2") and before the kernel-cheap hot path ("v1"), whether the mirror accepts it, and
    # the declarations (contiguous runs of rendered entries).
    weights: list[int] = field(default_factory=list)
    weights_v1: list[int] = field(default_factory=list)
    accepted: list[bool] = field(default_factory=list)
    runs: list[range] = field(default_factory=list)

    def rendered(self) -> list[tuple[int, int, int]]:
        """Stored entries and aliases, sorted by key: the order of the tree literal."""
        return sorted(self.entries + self.aliases)


@dataclass
class CertData:
    ruleset: str
    winner: str
    root: str
    hash: str
    cfg: Cfg
    shards: list[ShardData]

    def canonical(self) -> dict:
        """A comparable form: metadata, and each shard's stored entries as sorted text."""
        return {
            "ruleset": self.ruleset,
            "winner": self.winner,
            "root": self.root,
            "hash": self.hash,
            "shards": [
                {
                    "file": s.file,
                    "blake3": s.blake3,
                    "placement_rank": s.placement_rank,
                    "entries": sorted(
                        (position_text(self.cfg, k), action_text(self.cfg, a), n)
                        for k, a, n in s.entries
                    ),
                }
                for s in self.shards
            ],
        }


def read_certificate(cert_dir: str | os.PathLike[str]) -> CertData:
    """Read and encode a certificate; hashes are verified, the game is not (that is Lean's job).

    Raises :class:`RenderError` naming the file and line for anything unreadable.
    """
    cert_dir = Path(cert_dir)
    try:
        index = read_index(cert_dir)
    except CertificateError as exc:
        raise RenderError(str(exc)) from None
    where = cert_dir / "index.yaml"
    try:
        rs = Ruleset.from_id(index["ruleset"])
        cfg = Cfg.of(rs)
    except ValueError as exc:
        raise RenderError(f"{where}: {exc}") from None
    try:
        root_pos = Position.from_text(rs, index["root"])
    except ValueError as exc:
        raise RenderError(f"{where}: root: {exc}") from None
    if root_pos != Position.initial(rs):
        raise RenderError(f"{where}: root {index['root']!r} is not the initial position")
    winner = PLAYERS.index(index["winner"])
    shards = []
    seen: dict[int, str] = {}
    for meta in index["shards"]:
        name = meta["file"]
        try:
            data = read_shard_file(cert_dir / name)
        except OSError as exc:
            raise RenderError(f"{cert_dir / name}: cannot read ({exc.strerror})") from None
        except CertificateError as exc:
            raise RenderError(str(exc)) from None
        if digest(data) != meta["blake3"]:
            raise RenderError(f"{cert_dir / name}: blake3 does not match index.yaml")
        entries = []
        try:
            lines = shard_lines(data, meta["entries"], name)
            for number, line in lines:
                at = f"{name} line {number}"
                e = parse_entry(line, at)
                try:
                    key = position_key(cfg, e.position)
                    code = action_code(cfg, e.action)
                except ValueError as exc:
                    raise RenderError(f"{at}: {exc}") from None
                _, _, xbin, obin, turn = decode_key(cfg, key)
                if turn != winner:
                    raise RenderError(f"{at}: {e.position!r}: the winner is not to move")
                if xbin + obin != meta["placement_rank"]:
                    raise RenderError(
                        f"{at}: {e.position!r}: placement rank {xbin + obin}, "
                        f"shard says {meta['placement_rank']}"
                    )
                if key in seen:
                    raise RenderError(f"{at}: {e.position!r} is already an entry at {seen[key]}")
                seen[key] = at
                entries.append((key, code, e.rank))
        except CertificateError as exc:
            raise RenderError(str(exc)) from None
        if len(entries) != meta["entries"]:
            raise RenderError(
                f"{cert_dir / name}: index.yaml says {meta['entries']} entries, "
                f"the file has {len(entries)}"
            )
        shards.append(ShardData(name, meta["blake3"], meta["placement_rank"], entries))
    expected = certificate_hash([s.blake3 for s in shards])
    if index["hash"] != expected:
        raise RenderError(f"{where}: hash does not match the shard digests")
    return CertData(rs.id, index["winner"], index["root"], index["hash"], cfg, shards)


def render_progress(total: int | None, desc: str):
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="pos", file=sys.stderr, leave=False)


def expand(cert: CertData) -> None:
    """Add alias entries for every position play reaches as an image other than the stored one.

    Follows the certified strategy from the root with the mirror of the Lean model; fills
    ``shard.aliases`` in place (sorted, deterministic).
    """
    cfg, rs = cert.cfg, cert.cfg.ruleset()
    winner = PLAYERS.index(cert.winner)
    by_canon: dict[tuple[int, int, int, int, int], tuple[int, int, int, int]] = {}
    exact: dict[int, int] = {}
    for i, shard in enumerate(cert.shards):
        for key, code, rank in shard.entries:
            exact[key] = code
            pos = M.pos_decode(cfg, key)
            c = canonical(rs, Position((pos.x, pos.o), (pos.xbin, pos.obin), pos.turn))[0]
            by_canon.setdefault(
                (c.board[0], c.board[1], c.bins[0], c.bins[1], c.turn), (key, code, rank, i)
            )
    aliases: dict[int, tuple[int, int, int]] = {}
    seen: set[int] = set()
    todo: list[M.Pos] = []
    fuel = M.fuel_of(cfg)

    def reach(s: M.Pos, depth: int) -> None:
        """A live position after a turn: the winner's goes on the queue, the loser's replies
        are followed (a pass back to the loser repeats, up to the checker's fuel)."""
        if s.turn == winner:
            k = M.pos_encode(cfg, s)
            if k not in seen:
                seen.add(k)
                todo.append(s)
            return
        if depth == 0:
            return
        for b in M.legal(cfg, s):
            out = M.step(cfg, s, b)
            if out.result is None:
                reach(out.next, depth - 1)

    reach(M.initial(cfg), fuel)
    # Stored entries are rendered verbatim and checked too, so their plays need aliases as well.
    for shard in cert.shards:
        for key, _, _ in shard.entries:
            if key not in seen:
                seen.add(key)
                todo.append(M.pos_decode(cfg, key))
    bar = render_progress(None, "expanding")
    while todo:
        s = todo.pop()
        if bar is not None:
            bar.update()
        key = M.pos_encode(cfg, s)
        if key in exact:
            code = exact[key]
        else:
            here = Position((s.x, s.o), (s.xbin, s.obin), s.turn)
            canon, sym_here = canonical(rs, here)
            found = by_canon.get(
                (canon.board[0], canon.board[1], canon.bins[0], canon.bins[1], canon.turn)
            )
            if found is None:
                continue  # a missing successor: left for the checker to reject
            stored_key, stored_code, rank, shard_i = found
            sp = M.pos_decode(cfg, stored_key)
            sym_stored = canonical(rs, Position((sp.x, sp.o), (sp.xbin, sp.obin), sp.turn))[1]
            act = action_of(cfg, stored_code)
            mapped = sym_here.inverse().action(sym_stored.action(act))
            code = code_of_action(cfg, mapped)
            aliases[key] = (code, rank, shard_i)
        out = M.step(cfg, s, code)
        if out.result is None:
            reach(out.next, fuel)
    if bar is not None:
        bar.close()
    for shard in cert.shards:
        shard.aliases = []
    for key, (code, rank, i) in sorted(aliases.items()):
        cert.shards[i].aliases.append((key, code, rank))


def action_of(cfg: Cfg, code: int) -> Action:
    src1, dst = divmod(code, cfg.size)
    return Action(None if src1 == 0 else src1 - 1, dst)
