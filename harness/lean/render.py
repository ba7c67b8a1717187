"""Render a certificate (and the transition corpus) as Lean modules for the kernel to check.

``render(cert_dir, out_dir)`` writes, under ``out_dir`` (default ``lean/Generated``, module
prefix ``Generated``)::

    Cert.lean           the ruleset as ``Pop.Cfg``, the winner, the certificate's hash
    Shard0000.lean …    one module per certificate shard, in index order: its entries as a
                        balanced search-tree literal, ``checked`` (``by decide +kernel``),
                        ``sound`` (every entry has ``ForceWin``) from the earlier shards'
                        theorems, and its axioms pinned with ``#guard_msgs``
    Main.lean           ``initial_force_win``: the winner's force-win of the initial position
    Corpus.lean         (with ``corpus=``) research-family transitions checked against the
                        model, printing ``GUARD_HITS``
    render.json         what was rendered, and what each module is expected to print

**Positions as play reaches them.** A certificate may store any symmetric image of a
position; the Lean model has no symmetry theory, so the renderer *expands* the certificate:
from the root it follows the certified strategy with the mirror of the Lean model
(:mod:`harness.lean.model`) and, where play reaches an image of a stored entry other than the
stored one, adds an *alias* entry (the position as reached, the stored action mapped by the
symmetry, the stored rank) to the stored entry's shard. Stored entries are rendered verbatim;
aliases are marked ``/-alias-/`` in the literal so that :func:`decode` returns exactly the
stored certificate. A successor the expansion cannot find is simply not rendered: the kernel
(and :func:`mirror_check`) then rejects the shard, as it should.

Output is deterministic (same certificate, same bytes) and written atomically: everything goes
to a temporary sibling directory that replaces ``out_dir`` only when complete.

>>> _balanced_lit([(5, 1, 0), (9, 2, 1), (12, 3, 0)], set())
'.node (.node .leaf 5 1 0 .leaf) 9 2 1 (.node .leaf 12 3 0 .leaf)'
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from harness.atomic import staging_dir
from harness.bounded import MAX_LINE, TooDeepError, loads_json, read_text, reason
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
from harness.lean import split
from harness.lean.codec import (
    Cfg,
    EncodingError,
    action_code,
    action_text,
    code_of_action,
    position_key,
    position_text,
)
from harness.lean.codec import decode as decode_key
from harness.rules import PLAYERS, Action, Position, Ruleset
from harness.rules.symmetry import canonical

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "lean"
DEFAULT_OUT = Path("lean") / "Generated"
CHUNK = 512  # entries per tree definition: keeps every literal small for the elaborator
CORPUS_CHUNK = 200  # corpus records per list definition (long list literals nest deeply)
ALLOWED_AXIOMS = ("propext", "Classical.choice", "Quot.sound")
PINNED = "[" + ", ".join(ALLOWED_AXIOMS) + "]"
ALIAS = "/-alias-/"
MARKER = "render.json"
MAX_CORPUS_BYTES = 256 << 20  # a transition corpus (the shared one is about 4 MB)


class RenderError(ValueError):
    """A certificate, corpus or output directory the renderer cannot use (one line)."""


# --- reading the certificate -------------------------------------------------------------------


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


# --- expanding to positions as reached ---------------------------------------------------------


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


# --- the Python mirror of what Lean will check, and its cost -----------------------------------


def lower_groups(cert: CertData, j: int) -> list[tuple[int, list[int]]]:
    """Shard ``j``'s lookup table: the earlier shards grouped by placement rank, highest first
    (the likeliest group of a successor comes first)."""
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(j):
        groups[cert.shards[i].placement_rank].append(i)
    return sorted(groups.items(), key=lambda g: -g[0])


def layout_tree(entries: list[tuple[int, int, int]], runs: list[range]) -> M.Node | None:
    """The rendered shape of a shard's tree: run 0 is block 0; every later run is a separator
    (its first entry) and a block; blocks are balanced, and a balanced skeleton of separators
    joins them, so every block is a subtree a declaration can check on its own."""
    if not runs:
        return None
    blocks = [M.balanced(entries[r.start : r.stop]) for r in runs[:1]] + [
        M.balanced(entries[r.start + 1 : r.stop]) for r in runs[1:]
    ]

    def skel(i: int, j: int) -> M.Node | None:
        if i == j:
            return blocks[i]
        mid = (i + j + 1) // 2
        k, a, n = entries[runs[mid].start]
        return M.Node(skel(i, mid - 1), k, a, n, skel(mid, j))

    return skel(0, len(runs) - 1)


def shard_trees(cert: CertData) -> list[M.Node | None]:
    """The search tree of each shard as rendered (stored entries and aliases)."""
    return [
        layout_tree(s.rendered(), s.runs or [range(0, len(s.rendered()))] * bool(s.rendered()))
        for s in cert.shards
    ]


DECL_OVERHEAD = 2_000  # steps per declaration outside its entries: decide's instance, unfolding


def weigh(
    cert: CertData, budget: int = split.BUDGET, max_items: int = CHUNK, progress: bool = True
) -> None:
    """Run the mirror of the Lean checker with the cost model on every rendered entry, fill
    each shard's ``weights``, ``weights_v1``, ``accepted`` and ``runs`` (declarations packed
    by weight under ``budget``), in shard order so that lookups into earlier shards see their
    final trees. Own-shard lookups are weighed on a balanced tree of the whole shard; the
    rendered layout differs from it by at most a couple of levels."""
    cfg, p = cert.cfg, PLAYERS.index(cert.winner)
    trees: list[M.Node | None] = []
    total = sum(len(s.entries) + len(s.aliases) for s in cert.shards)
    bar = render_progress(total, "weighing") if progress else None
    for j, shard in enumerate(cert.shards):
        entries = shard.rendered()
        own = M.balanced(entries)
        groups = [(pr, [trees[i] for i in members]) for pr, members in lower_groups(cert, j)]

        def lower(s: M.Pos, g=groups) -> bool:
            return M.lookup_table(cfg, g, s)

        shard.weights, shard.weights_v1, shard.accepted = [], [], []
        for k, a, n in entries:
            m = M.Meter()
            e = M.Node(None, k, a, n, None)
            ok = M.shard_entry_ok(cfg, p, lower, shard.placement_rank, own, e, m, groups)
            shard.weights.append(M.estimate(m, "v2"))
            shard.weights_v1.append(M.estimate(m, "v1"))
            shard.accepted.append(ok)
            if bar is not None:
                bar.update()
        shard.runs = split.pack(shard.weights, budget, max_items, DECL_OVERHEAD)
        trees.append(layout_tree(entries, shard.runs))
    if bar is not None:
        bar.close()


def root_cost(cert: CertData) -> tuple[bool, int, int]:
    """``Main.root_checked`` on the mirror: (accepted, estimated steps v2, v1)."""
    cfg, p = cert.cfg, PLAYERS.index(cert.winner)
    trees = shard_trees(cert)
    groups = [(pr, [trees[i] for i in members]) for pr, members in lower_groups(cert, len(trees))]
    m = M.Meter()

    def proved(s: M.Pos) -> bool:
        M.lookup_cost(cfg, groups, s, m, "v1")
        M.lookup_cost(cfg, groups, s, m, "v2")
        return M.lookup_table(cfg, groups, s)

    ok = M.node_ok(cfg, p, proved, M.fuel_of(cfg), M.initial(cfg), m)
    return ok, M.estimate(m, "v2") + DECL_OVERHEAD, M.estimate(m, "v1") + DECL_OVERHEAD


def mirror_check(cert: CertData) -> tuple[bool, str]:
    """Run the Python mirror of the Lean checker on the rendered data: every shard's
    declarations and ``Main.root_checked``. Returns (accepted, reason)."""
    cfg = cert.cfg
    if any(len(s.accepted) != len(s.entries) + len(s.aliases) for s in cert.shards):
        weigh(cert)
    for shard in cert.shards:
        for (k, a, n), ok in zip(shard.rendered(), shard.accepted, strict=True):
            if not ok:
                return False, (
                    f"{shard.file}: entry {position_text(cfg, k)!r} "
                    f"{action_text(cfg, a)!r} rank {n} is rejected"
                )
    if not root_cost(cert)[0]:
        return False, "root: the initial position is not won for the certificate's winner"
    return True, "accepted"


# --- Lean text ---------------------------------------------------------------------------------


def _node_lit(entry: tuple[int, int, int], alias_keys: set[int], left: str, right: str) -> str:
    k, a, n = entry
    mark = ALIAS + " " if k in alias_keys else ""
    return f"{mark}.node {left} {k} {a} {n} {right}"


def _paren(expr: str) -> str:
    return expr if expr == ".leaf" or " " not in expr else f"({expr})"


def _balanced_lit(entries: list[tuple[int, int, int]], alias_keys: set[int]) -> str:
    """A balanced tree literal of ``entries`` (sorted), as :func:`model.balanced` builds it."""

    def node(lo: int, hi: int) -> str:
        if lo >= hi:
            return ".leaf"
        mid = (lo + hi) // 2
        return _node_lit(entries[mid], alias_keys, _paren(node(lo, mid)), _paren(node(mid + 1, hi)))

    return node(0, len(entries))


def lean_tree_expr(
    entries: list[tuple[int, int, int]], alias_keys: set[int], chunk: int
) -> tuple[list[tuple[str, str]], str]:
    """Definitions (name, expression) for the subtrees too big to inline, and the root
    expression, of a balanced tree of ``entries`` (sorted by key); names ``t0, t1, …`` in
    dependency order. (The non-win renderer's pieces; win shards use :func:`shard_text`.)"""
    defs: list[tuple[str, str]] = []

    def node(lo: int, hi: int, inline: bool) -> str:
        if lo >= hi:
            return ".leaf"
        mid = (lo + hi) // 2
        if not inline and hi - lo > chunk:
            left, right = named(lo, mid), named(mid + 1, hi)
        else:
            left = _paren(node(lo, mid, True))
            right = _paren(node(mid + 1, hi, True))
        return _node_lit(entries[mid], alias_keys, left, right)

    def named(lo: int, hi: int) -> str:
        if lo >= hi:
            return ".leaf"
        expr = node(lo, hi, hi - lo <= chunk)
        name = f"t{len(defs)}"
        defs.append((name, expr))
        return name

    return defs, node(0, len(entries), len(entries) <= chunk)


@dataclass
class ShardText:
    """The Lean pieces of one shard: block definitions, the skeleton, the declarations and the
    proof that combines them (all following :func:`layout_tree`)."""

    blocks: list[tuple[str, str]]
    root: str
    parts: list[dict]
    combine: str


def shard_text(
    entries: list[tuple[int, int, int]],
    alias_keys: set[int],
    runs: list[range],
    weights: list[int] | None = None,
) -> ShardText:
    """Lean text of a shard laid out in ``runs``: block ``bI`` holds run ``I`` (without its
    separator), declaration ``partI`` checks separator and block, ``all_ok`` combines them."""
    if not runs:
        return ShardText([], ".leaf", [], "Tree.all_leaf entry")
    blocks, parts = [], []
    for i, r in enumerate(runs):
        lo = r.start if i == 0 else r.start + 1
        blocks.append((f"b{i}", _balanced_lit(entries[lo : r.stop], alias_keys)))
        if i == 0:
            statement = "Tree.all entry b0 = true"
        else:
            k, a, n = entries[r.start]
            statement = f"(entry {k} {a} {n} && Tree.all entry b{i}) = true"
        parts.append(
            {
                "name": f"part{i}",
                "statement": statement,
                "entries": len(r),
                "steps": split.run_weights(weights, [r], DECL_OVERHEAD)[0] if weights else 0,
            }
        )

    def skel(i: int, j: int) -> tuple[str, str]:
        if i == j:
            return f"b{i}", ("part0" if i == 0 else f"(band_right part{i})")
        mid = (i + j + 1) // 2
        (lt, lp), (rt, rp) = skel(i, mid - 1), skel(mid, j)
        node = _node_lit(entries[runs[mid].start], alias_keys, _paren(lt), _paren(rt))
        return node, f"(Tree.all_node_of {lp} (band_left part{mid}) {rp})"

    root, combine = skel(0, len(runs) - 1)
    if combine.startswith("(") and combine.endswith(")") and len(runs) > 1:
        combine = combine[1:-1]
    return ShardText(blocks, root, parts, combine)


# Options a rendered module may set. `#print axioms` cannot see an option such as
# `debug.skipKernelTC` that a generated file sets, so the renderer refuses every other one.
ALLOWED_OPTIONS = ("maxRecDepth", "maxHeartbeats")
_SET_OPTION = re.compile(r"\bset_option\s+([^\s]+)")


def check_options(text: str, where: str) -> None:
    """Refuse a rendered text that sets an option outside :data:`ALLOWED_OPTIONS`."""
    for m in _SET_OPTION.finditer(text):
        if m.group(1) not in ALLOWED_OPTIONS:
            line = text.count("\n", 0, m.start()) + 1
            raise RenderError(
                f"{where} line {line}: set_option {m.group(1)} is not allowed in a rendered "
                f"module (allowed: {', '.join(ALLOWED_OPTIONS)})"
            )


def _rays_lit(rays) -> str:
    def one(r) -> str:
        return f".push {r[1]} {r[2]}" if r[0] == "push" else f".fall {r[1]}"

    return "[" + ",\n       ".join("[" + ", ".join(map(one, rs)) + "]" for rs in rays) + "]"


def _king_lit(king) -> str:
    return (
        "["
        + ",\n       ".join("[" + ", ".join(f"({t}, {c})" for t, c in ms) + "]" for ms in king)
        + "]"
    )


def _shifts_lit(shifts) -> str:
    return "[" + ", ".join(f"⟨{m}, {'true' if r else 'false'}, {a}⟩" for m, r, a in shifts) + "]"


def _lines_lit(lines) -> str:
    return (
        "["
        + ",\n       ".join(f"({_shifts_lit(f)},\n        {_shifts_lit(s)})" for f, s in lines)
        + "]"
    )


GEO_EQ_STEPS_PER_SQUARE = 20_000  # Geo.of and the derived DecidableEq, per square (generous)


def geo_fields(cfg: Cfg) -> dict[str, object]:
    """The template fields of ``geo.lean.jinja``: the literal tables of ``Geo.of cfg``."""
    geo = M.geo_of(cfg)
    return {
        "size": geo.size,
        "span": geo.span,
        "rays": _rays_lit(geo.rays),
        "king": _king_lit(geo.king),
        "lines": _lines_lit(geo.lines),
    }


def geo_declaration(prefix: str, cfg: Cfg) -> dict:
    """The ``render.json`` declaration row of ``Cert.geo_eq``."""
    return {
        "module": f"{prefix}.Cert",
        "theorem": f"{prefix}.Cert.geo_eq",
        "entries": 0,
        "estimated_steps": GEO_EQ_STEPS_PER_SQUARE * M.geo_of(cfg).size,
    }


def template_env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def _groups_lean(names: list[str], groups: list[tuple[int, list[int]]]) -> list[str]:
    return [
        f"({pr}, [{', '.join(names[i] + '.proved' for i in members)}])" for pr, members in groups
    ]


def _side(winner: str) -> str:
    return "Side.x" if winner == "x" else "Side.o"


def lean_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class Rendered:
    """What :func:`render` wrote: file name -> text, plus the summary in ``render.json``."""

    files: dict[str, str]
    summary: dict


def render_text(
    cert: CertData,
    prefix: str = "Generated",
    corpus: list[dict] | None = None,
    chunk: int = CHUNK,
    budget: int = split.BUDGET,
) -> Rendered:
    """Every module's text, without touching the disk (deterministic). Weighs the certificate
    with the cost model first if :func:`weigh` has not run (``chunk`` caps a declaration's
    entries, ``budget`` its estimated kernel steps)."""
    if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", prefix):
        raise RenderError(
            f"output directory name {prefix!r} is not a Lean module name (e.g. Generated)"
        )
    if any(len(s.weights) != len(s.entries) + len(s.aliases) for s in cert.shards):
        weigh(cert, budget, chunk)
    env = template_env()
    cfg, side = cert.cfg, _side(cert.winner)
    files: dict[str, str] = {}
    modules = []
    declarations = []
    names = [f"{prefix}.Shard{i:04d}" for i in range(len(cert.shards))]
    files["Cert.lean"] = env.get_template("cert.lean.jinja").render(
        prefix=prefix,
        cfg=cfg.lean(),
        ruleset=lean_string(cert.ruleset),
        side=side,
        winner=cert.winner,
        cert_hash=lean_string(cert.hash),
        root=lean_string(cert.root),
        ruleset_id=cert.ruleset,
        **geo_fields(cfg),
    )
    modules.append({"module": f"{prefix}.Cert", "file": "Cert.lean", "kind": "cert", "imports": []})
    declarations.append(geo_declaration(prefix, cfg))
    for j, shard in enumerate(cert.shards):
        entries = shard.rendered()
        text = shard_text(entries, {k for k, _, _ in shard.aliases}, shard.runs, shard.weights)
        groups = _groups_lean(names, lower_groups(cert, j))
        module = names[j]
        files[f"Shard{j:04d}.lean"] = env.get_template("shard.lean.jinja").render(
            prefix=prefix,
            module=module,
            imports=names[:j],
            blocks=text.blocks,
            root=text.root,
            parts=text.parts,
            combine=text.combine,
            groups=groups,
            side=side,
            index=j,
            count=len(cert.shards),
            file=shard.file,
            file_lit=lean_string(shard.file),
            blake3=shard.blake3,
            blake3_lit=lean_string(shard.blake3),
            placement_rank=shard.placement_rank,
            stored=len(shard.entries),
            aliases=len(shard.aliases),
            pinned=PINNED,
            cert_hash=cert.hash,
            ruleset=cert.ruleset,
        )
        for part in text.parts:
            declarations.append(
                {
                    "module": module,
                    "theorem": f"{module}.{part['name']}",
                    "entries": part["entries"],
                    "estimated_steps": part["steps"],
                }
            )
        modules.append(
            {
                "module": module,
                "file": f"Shard{j:04d}.lean",
                "kind": "shard",
                "imports": [f"{prefix}.Cert", *names[:j]],
                "shard": shard.file,
                "blake3": shard.blake3,
                "placement_rank": shard.placement_rank,
                "entries": len(shard.entries),
                "aliases": len(shard.aliases),
                "declarations": len(text.parts),
                "estimated_steps": sum(p["steps"] for p in text.parts),
                "estimated_steps_v1": sum(shard.weights_v1) + DECL_OVERHEAD,
                "axioms": {f"{module}.sound": list(ALLOWED_AXIOMS)},
            }
        )
    groups = _groups_lean(names, lower_groups(cert, len(cert.shards)))
    files["Main.lean"] = env.get_template("main.lean.jinja").render(
        prefix=prefix,
        module=f"{prefix}.Main",
        imports=names,
        groups=groups,
        side=side,
        cfg=cfg.lean(),
        ruleset=cert.ruleset,
        winner=cert.winner,
        cert_hash=cert.hash,
        pinned=PINNED,
    )
    final = f"{prefix}.Main.initial_force_win"
    _, root_steps, root_steps_v1 = root_cost(cert)
    declarations.append(
        {
            "module": f"{prefix}.Main",
            "theorem": f"{prefix}.Main.root_checked",
            "entries": 0,
            "estimated_steps": root_steps,
        }
    )
    modules.append(
        {
            "module": f"{prefix}.Main",
            "file": "Main.lean",
            "kind": "main",
            "imports": [f"{prefix}.Cert", *names],
            "declarations": 1,
            "estimated_steps": root_steps,
            "estimated_steps_v1": root_steps_v1,
            "axioms": {final: list(ALLOWED_AXIOMS)},
        }
    )
    summary = {
        "format": 2,
        "ruleset": cert.ruleset,
        "winner": cert.winner,
        "certificate": cert.hash,
        "entries": sum(len(s.entries) for s in cert.shards),
        "aliases": sum(len(s.aliases) for s in cert.shards),
        "budget": budget,
        "theorem": {
            "name": final,
            "statement": (
                f"theorem initial_force_win : ForceWin (Geo.of {cfg.lean()}) {side} "
                f"(Node.live (Pos.initial {cfg.lean()}))"
            ),
            "axioms": list(ALLOWED_AXIOMS),
        },
        "modules": modules,
        "declarations": declarations,
    }
    if corpus is not None:
        text, info, corpus_decls = render_corpus_text(corpus + model_records(), prefix, env)
        files["Corpus.lean"] = text
        modules.append(
            {
                "module": f"{prefix}.Corpus",
                "file": "Corpus.lean",
                "kind": "corpus",
                "imports": [],
                "axioms": {f"{prefix}.Corpus.consistent": list(ALLOWED_AXIOMS)},
            }
        )
        declarations.extend(corpus_decls)
        summary["corpus"] = info
    for name, text in files.items():
        check_options(text, name)
    return Rendered(files, summary)


# --- the corpus --------------------------------------------------------------------------------

RESULT_CODES = {None: 0, "x": 1, "o": 2, "draw": 3}


def corpus_records(path: str | os.PathLike[str]) -> list[dict]:
    """Read a transition corpus (JSON lines); a bad line is a :class:`RenderError`."""
    path = Path(path)
    try:
        text = read_text(path, MAX_CORPUS_BYTES, "corpus")
    except (OSError, ValueError) as exc:
        raise RenderError(f"{path}: cannot read the corpus: {reason(exc, path)}") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            raise RenderError(f"{path} line {n}: {len(line):,} characters, not a corpus record")
        try:
            rec = loads_json(line)
        except (json.JSONDecodeError, TooDeepError) as exc:
            raise RenderError(f"{path} line {n}: not JSON ({getattr(exc, 'msg', exc)})") from None
        if (
            not isinstance(rec, dict)
            or not {"ruleset", "position", "action", "next", "result", "actions", "branches"}
            <= rec.keys()
        ):
            raise RenderError(f"{path} line {n}: not a corpus record")
        out.append(rec)
    return out


# Boards the Lean corpus always holds records of, on every edge, besides the shared corpus's
# own: the headline size and the largest board (the shared corpus plays smaller boards).
MODEL_BOARDS = ((6, 6, 8), (8, 8, 16))
MODEL_GAMES = 2  # seeded random games per board and edge


def model_records(seed: int = 0) -> list[dict]:
    """Corpus records the reference engine writes for the Lean corpus: ``MODEL_GAMES`` seeded
    random games on every board of :data:`MODEL_BOARDS` and every edge, with the research
    movement; each game's transitions are kept (every fifth, and every game-ending one), so
    pushes, falls, twists, lines and results of the big boards are checked against the model.
    Deterministic per seed."""
    import random

    from harness.rules import Game
    from harness.rules.corpus import transition_record
    from harness.rules.ruleset import EDGES

    rng = random.Random(seed)
    out = []
    for rows, cols, checkers in MODEL_BOARDS:
        for edge in EDGES:
            rs = Ruleset(rows=rows, cols=cols, checkers=checkers, edge=edge)
            for _ in range(MODEL_GAMES):
                game = Game(rs)
                while not game.is_terminal() and len(game.actions) < 120:
                    action = rng.choice(game.legal_actions())
                    before, pos = game.positions[:-1], game.position
                    done = game.apply_action(action).result is not None
                    if done or len(game.actions) % 5 == 0:
                        out.append(transition_record(rs, before, pos, action, "lean-model"))
    return out


CORPUS_STEPS_PER_RECORD = 40_000  # legal + one step + Geo.of's share, per record (generous)


def render_corpus_text(
    records: list[dict], prefix: str, env: jinja2.Environment | None = None
) -> tuple[str, dict, list[dict]]:
    """The corpus module: the records of every ruleset the model covers (the research movement,
    every edge and board), without a repetition draw (the model judges positions without
    history), grouped by ruleset, in corpus order; one kernel-checked declaration per chunk."""
    from harness.rules.corpus import BRANCHES

    env = env or template_env()
    index = {b: i for i, b in enumerate(BRANCHES)}
    by_rs: dict[str, list[str]] = {}
    counts = [0] * len(BRANCHES)
    kept = skipped = 0
    for n, rec in enumerate(records, 1):
        try:
            rs = Ruleset.from_id(rec["ruleset"])
        except ValueError as exc:
            raise RenderError(f"corpus record {n}: {exc}") from None
        try:
            cfg = Cfg.of(rs)
        except EncodingError:
            skipped += 1
            continue
        if "repetition_draw" in rec["branches"]:
            skipped += 1
            continue
        try:
            acts = sorted(action_code(cfg, a) for a in rec["actions"])
            fields = (
                position_key(cfg, rec["position"]),
                acts,
                action_code(cfg, rec["action"]),
                position_key(cfg, rec["next"]),
                RESULT_CODES[rec["result"]],
                [index[b] for b in rec["branches"]],
            )
        except (ValueError, KeyError) as exc:
            raise RenderError(f"corpus record {n}: {exc}") from None
        for b in fields[5]:
            counts[b] += 1
        key, acts, act, nxt, result, branches = fields
        lit = (
            f"⟨{key}, [{', '.join(map(str, acts))}], {act}, {nxt}, {result}, "
            f"[{', '.join(map(str, branches))}]⟩"
        )
        by_rs.setdefault(cfg.lean(), []).append(lit)
        kept += 1
    chunks = []
    for cfg_lit, recs in by_rs.items():
        for i in range(0, len(recs), CORPUS_CHUNK):
            chunks.append(
                {"name": f"r{len(chunks)}", "cfg": cfg_lit, "records": recs[i : i + CORPUS_CHUNK]}
            )
    guard = "GUARD_HITS " + ",".join(
        f"{b}={counts[i]}" for i, b in enumerate(BRANCHES) if counts[i]
    )
    combine = "chunksOk_nil"
    for c in reversed(chunks):
        combine = f"(chunksOk_cons {c['name']}_ok {combine})"
    module = f"{prefix}.Corpus"
    text = env.get_template("corpus.lean.jinja").render(
        prefix=prefix,
        module=module,
        chunks=chunks,
        combine=combine,
        branches=", ".join(lean_string(b) for b in BRANCHES),
        records=kept,
        skipped=skipped,
        pinned=PINNED,
        guard=guard,
    )
    decls = [
        {
            "module": module,
            "theorem": f"{module}.{c['name']}_ok",
            "entries": len(c["records"]),
            "estimated_steps": CORPUS_STEPS_PER_RECORD * len(c["records"]),
        }
        for c in chunks
    ]
    rulesets = sorted({c["cfg"] for c in chunks})
    return text, {"records": kept, "skipped": skipped, "guard_hits": guard, "cfgs": rulesets}, decls


# --- writing -----------------------------------------------------------------------------------


def write_atomically(out_dir: Path, files: dict[str, str]) -> None:
    """Replace ``out_dir`` by a directory holding exactly ``files``, never half-written.

    Refuses to replace a non-empty directory that the renderer did not write."""
    if out_dir.exists() and not out_dir.is_dir():
        raise RenderError(f"{out_dir}: exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / MARKER).is_file():
        raise RenderError(f"{out_dir}: not empty and not written by render (no {MARKER})")
    with staging_dir(out_dir) as tmp:
        for name, text in sorted(files.items()):
            (tmp / name).write_text(text, encoding="utf-8")


def render(
    cert_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] = DEFAULT_OUT,
    *,
    corpus: str | os.PathLike[str] | None = None,
    check: bool = False,
    chunk: int = CHUNK,
    budget: int = split.BUDGET,
) -> dict:
    """Render ``cert_dir`` (and optionally a corpus file) into ``out_dir``; return the summary.

    With ``check``, the mirror of the Lean checker runs first and a certificate it rejects is
    a :class:`RenderError` (nothing is written)."""
    out_dir = Path(out_dir)
    cert = read_certificate(cert_dir)
    expand(cert)
    weigh(cert, budget, chunk)
    if check:
        ok, reason = mirror_check(cert)
        if not ok:
            raise RenderError(f"{cert_dir}: the Lean checker would reject it: {reason}")
    records = corpus_records(corpus) if corpus is not None else None
    rendered = render_text(cert, out_dir.name, records, chunk, budget)
    files = dict(rendered.files)
    files[MARKER] = json.dumps(rendered.summary, indent=2, sort_keys=True) + "\n"
    write_atomically(out_dir, files)
    return rendered.summary


# --- reading the rendered modules back -----------------------------------------------------------

_TOKEN = re.compile(r"/-alias-/|\.node|\.leaf|\(|\)|\d+|[A-Za-z_][A-Za-z0-9_']*")


def _parse_tree(text: str, defs: dict[str, list], where: str) -> list:
    """Parse a tree expression into a list of (key, act, rank, is_alias), in-order."""
    tokens = _TOKEN.findall(text)
    pos = 0

    def expr() -> list:
        nonlocal pos
        if pos >= len(tokens):
            raise RenderError(f"{where}: truncated tree literal")
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            inner = expr()
            if pos >= len(tokens) or tokens[pos] != ")":
                raise RenderError(f"{where}: unbalanced parentheses in tree literal")
            pos += 1
            return inner
        if tok == ".leaf":
            return []
        alias = tok == ALIAS
        if alias:
            tok = tokens[pos]
            pos += 1
        if tok == ".node":
            left = expr()
            try:
                k, a, n = (int(tokens[pos + i]) for i in range(3))
            except (ValueError, IndexError):
                raise RenderError(f"{where}: malformed node in tree literal") from None
            pos += 3
            right = expr()
            return [*left, (k, a, n, alias), *right]
        if tok in defs:
            return defs[tok]
        raise RenderError(f"{where}: unexpected {tok!r} in tree literal")

    out = expr()
    if pos != len(tokens):
        raise RenderError(f"{where}: trailing text after tree literal")
    return out


_DEF = re.compile(r"^(?:noncomputable )?def (\w+) : Tree :=\n((?:  .*\n)+)", re.M)
_STR = re.compile(r'^def (\w+) : String := "((?:[^"\\]|\\.)*)"$', re.M)
_NAT = re.compile(r"^def (\w+) : Nat := (\d+)$", re.M)


def decode(out_dir: str | os.PathLike[str]) -> CertData:
    """Read the rendered modules back into the certificate they were rendered from."""
    out_dir = Path(out_dir)
    try:
        cert_text = (out_dir / "Cert.lean").read_text(encoding="utf-8")
    except OSError as exc:
        raise RenderError(f"{out_dir / 'Cert.lean'}: cannot read ({exc.strerror})") from None
    strings = {k: json.loads(f'"{v}"') for k, v in _STR.findall(cert_text)}
    try:
        rs = Ruleset.from_id(strings["rulesetId"])
        winner, root, cert_hash = strings["winnerName"], strings["root"], strings["certHash"]
    except (KeyError, ValueError) as exc:
        raise RenderError(f"{out_dir / 'Cert.lean'}: unreadable ({exc})") from None
    cfg = Cfg.of(rs)
    shards = []
    for path in sorted(out_dir.glob("Shard[0-9][0-9][0-9][0-9].lean")):
        text = path.read_text(encoding="utf-8")
        meta = {k: json.loads(f'"{v}"') for k, v in _STR.findall(text)}
        nats = {k: int(v) for k, v in _NAT.findall(text)}
        defs: dict[str, list] = {}
        for name, body in _DEF.findall(text):
            defs[name] = _parse_tree(body, defs, f"{path.name}: {name}")
        if "tree" not in defs or not {"shardFile", "shardBlake3"} <= meta.keys():
            raise RenderError(f"{path}: not a rendered shard module")
        stored = [(k, a, n) for k, a, n, alias in defs["tree"] if not alias]
        aliases = [(k, a, n) for k, a, n, alias in defs["tree"] if alias]
        shards.append(
            ShardData(
                meta["shardFile"], meta["shardBlake3"], nats["placementRank"], stored, aliases
            )
        )
    return CertData(rs.id, winner, root, cert_hash, cfg, shards)


def decode_records(text: str) -> Iterable[tuple[int, int, int]]:
    """Every (key, act, rank) of a tree literal text (for tests and tools)."""
    return [(k, a, n) for k, a, n, _ in _parse_tree(text, {}, "literal")]


__all__ = [
    "CertData",
    "RenderError",
    "ShardData",
    "decode",
    "expand",
    "mirror_check",
    "read_certificate",
    "render",
    "render_text",
]
