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
aliases are marked ``/-alias-/`` in the literal so that reading the modules back
(:func:`harness.lean.readback.read_back`) gives exactly the stored certificate. A successor
the expansion cannot find is simply not rendered: the kernel (and :func:`mirror_check`) then
rejects the shard, as it should.

Output is deterministic (same certificate, same bytes) and written atomically: everything goes
to a temporary sibling directory that replaces ``out_dir`` only when complete.

>>> from harness.lean.emit import balanced_literal
>>> balanced_literal([(5, 1, 0), (9, 2, 1), (12, 3, 0)], set())
'.node (.node .leaf 5 1 0 .leaf) 9 2 1 (.node .leaf 12 3 0 .leaf)'
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from harness.lean import model as M
from harness.lean import sizing
from harness.lean.certdata import CertData, RenderError, expand, read_certificate, render_progress
from harness.lean.codec import action_text, position_text
from harness.lean.corpus_module import corpus_records, model_records, render_corpus_text
from harness.lean.emit import (
    DECL_OVERHEAD,
    MARKER,
    Rendered,
    balanced_literal,
    check_options,
    check_prefix,
    corpus_entry,
    force_win_statement,
    node_literal,
    parenthesized,
    side_name,
    write_atomically,
)
from harness.lean.geometry_decl import geo_declaration, geo_fields
from harness.lean.templating import ALLOWED_AXIOMS, PINNED, lean_string, template_env
from harness.rules import PLAYERS

GENERATED_DIR = Path("lean") / "Generated"


CHUNK = 512  # entries per tree definition: keeps every literal small for the elaborator


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


def weigh(
    cert: CertData, budget: int = sizing.BUDGET, max_items: int = CHUNK, progress: bool = True
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
        shard.runs = sizing.pack(shard.weights, budget, max_items, DECL_OVERHEAD)
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
        blocks.append((f"b{i}", balanced_literal(entries[lo : r.stop], alias_keys)))
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
                "steps": sizing.run_weights(weights, [r], DECL_OVERHEAD)[0] if weights else 0,
            }
        )

    def skel(i: int, j: int) -> tuple[str, str]:
        if i == j:
            return f"b{i}", ("part0" if i == 0 else f"(band_right part{i})")
        mid = (i + j + 1) // 2
        (lt, lp), (rt, rp) = skel(i, mid - 1), skel(mid, j)
        node = node_literal(
            entries[runs[mid].start], alias_keys, parenthesized(lt), parenthesized(rt)
        )
        return node, f"(Tree.all_node_of {lp} (band_left part{mid}) {rp})"

    root, combine = skel(0, len(runs) - 1)
    if combine.startswith("(") and combine.endswith(")") and len(runs) > 1:
        combine = combine[1:-1]
    return ShardText(blocks, root, parts, combine)


def _groups_lean(names: list[str], groups: list[tuple[int, list[int]]]) -> list[str]:
    return [
        f"({pr}, [{', '.join(names[i] + '.proved' for i in members)}])" for pr, members in groups
    ]


def render_text(
    cert: CertData,
    prefix: str = "Generated",
    corpus: list[dict] | None = None,
    chunk: int = CHUNK,
    budget: int = sizing.BUDGET,
) -> Rendered:
    """Every module's text, without touching the disk (deterministic). Weighs the certificate
    with the cost model first if :func:`weigh` has not run (``chunk`` caps a declaration's
    entries, ``budget`` its estimated kernel steps)."""
    check_prefix(prefix)
    if any(len(s.weights) != len(s.entries) + len(s.aliases) for s in cert.shards):
        weigh(cert, budget, chunk)
    env = template_env()
    cfg, side = cert.cfg, side_name(cert.winner)
    statement = force_win_statement(cfg.lean(), cert.winner)
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
        statement=statement,
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
            "statement": f"theorem initial_force_win : {statement}",
            "axioms": list(ALLOWED_AXIOMS),
        },
        "modules": modules,
        "declarations": declarations,
    }
    if corpus is not None:
        text, info, corpus_decls = render_corpus_text(corpus + model_records(), prefix, env)
        files["Corpus.lean"] = text
        modules.append(corpus_entry(prefix))
        declarations.extend(corpus_decls)
        summary["corpus"] = info
    for name, text in files.items():
        check_options(text, name)
    return Rendered(files, summary)


def render(
    cert_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] = GENERATED_DIR,
    *,
    corpus: str | os.PathLike[str] | None = None,
    check: bool = False,
    chunk: int = CHUNK,
    budget: int = sizing.BUDGET,
) -> dict:
    """Render ``cert_dir`` (and optionally a corpus file) into ``out_dir``; return the summary.

    With ``check``, the mirror of the Lean checker runs first and a certificate it rejects is
    a :class:`RenderError` (nothing is written)."""
    out_dir = Path(out_dir)
    check_prefix(out_dir.name)  # before the work: a bad name is refused at once
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


__all__ = [
    "CertData",
    "RenderError",
    "expand",
    "mirror_check",
    "read_certificate",
    "render",
    "render_text",
]
