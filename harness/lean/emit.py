"""What the win and the non-win renderers share: tree literals, the options a rendered
module may set, the final theorems' statements, the corpus module's entry, the record of a
rendering and its atomic write.

A win certificate renders as shards proving ``ForceWin`` (:mod:`harness.lean.render`), a
draw or a non-win as sets closed under the attacker's actions
(:mod:`harness.lean.render_nonwin`); both state their final theorem with
:func:`force_win_statement`, so the statement a ``render.json`` reports is the one the Lean
file proves.

>>> balanced_literal([(5, 1, 0), (7, 2, 1), (9, 3, 2)], {9})
'.node (.node .leaf 5 1 0 .leaf) 7 2 1 (/-alias-/ .node .leaf 9 3 2 .leaf)'
>>> force_win_statement("cfg", "x")
'ForceWin (Geo.of cfg) Side.x (Node.live (Pos.initial cfg))'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from harness.atomic import staging_dir
from harness.lean.certdata import RenderError
from harness.lean.templating import ALLOWED_AXIOMS

ALIAS = "/-alias-/"  # marks an entry the checker reaches through a symmetry, not by key
MARKER = "render.json"  # the summary a rendered folder holds; its presence marks our folders
DECL_OVERHEAD = 2_000  # steps per declaration outside its entries: decide's instance, unfolding

MODULE_NAME = re.compile(r"[A-Z][A-Za-z0-9_]*")


def check_prefix(prefix: str) -> None:
    """Refuse an output folder whose name cannot be a Lean module name."""
    if not MODULE_NAME.fullmatch(prefix):
        raise RenderError(
            f"output directory name {prefix!r} is not a Lean module name (e.g. Generated)"
        )


def side_name(player: str) -> str:
    """The Lean ``Side`` of a player named ``x`` or ``o``."""
    return "Side.x" if player == "x" else "Side.o"


def force_win_statement(cfg: str, player: str) -> str:
    """``player`` can force a win from the initial position of the configuration ``cfg``
    (a Lean expression): the proposition every final theorem is about."""
    return f"ForceWin (Geo.of {cfg}) {side_name(player)} (Node.live (Pos.initial {cfg}))"


def corpus_entry(prefix: str) -> dict:
    """The ``render.json`` entry of the corpus module rendered under ``prefix``."""
    return {
        "module": f"{prefix}.Corpus",
        "file": "Corpus.lean",
        "kind": "corpus",
        "imports": [],
        "axioms": {f"{prefix}.Corpus.consistent": list(ALLOWED_AXIOMS)},
    }


def node_literal(entry: tuple[int, int, int], alias_keys: set[int], left: str, right: str) -> str:
    k, a, n = entry
    mark = ALIAS + " " if k in alias_keys else ""
    return f"{mark}.node {left} {k} {a} {n} {right}"


def parenthesized(expr: str) -> str:
    return expr if expr == ".leaf" or " " not in expr else f"({expr})"


def balanced_literal(entries: list[tuple[int, int, int]], alias_keys: set[int]) -> str:
    """A balanced tree literal of ``entries`` (sorted), as :func:`model.balanced` builds it."""

    def node(lo: int, hi: int) -> str:
        if lo >= hi:
            return ".leaf"
        mid = (lo + hi) // 2
        left, right = parenthesized(node(lo, mid)), parenthesized(node(mid + 1, hi))
        return node_literal(entries[mid], alias_keys, left, right)

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
            left = parenthesized(node(lo, mid, True))
            right = parenthesized(node(mid + 1, hi, True))
        return node_literal(entries[mid], alias_keys, left, right)

    def named(lo: int, hi: int) -> str:
        if lo >= hi:
            return ".leaf"
        expr = node(lo, hi, hi - lo <= chunk)
        name = f"t{len(defs)}"
        defs.append((name, expr))
        return name

    return defs, node(0, len(entries), len(entries) <= chunk)


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


@dataclass
class Rendered:
    """What :func:`render` wrote: file name -> text, plus the summary in ``render.json``."""

    files: dict[str, str]
    summary: dict


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
