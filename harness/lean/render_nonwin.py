"""Render a non-win certificate (format 2: a draw, or one "p cannot win" set) as Lean modules.

Under ``out_dir`` (module prefix ``out_dir``'s name, ``Generated`` by default)::

    Cert.lean               the ruleset as ``Pop.Cfg``, its literal tables ``geo`` with
                            ``geo_eq : geo = Geo.of cfg``, the value and the certificate's hash
    NonWinX0000.lean …      the set "x cannot force a win" in pieces (consecutive key ranges):
                            search-tree literals of ``(key, defender's action, 0)``
    SetX.lean               ``index``: the pieces as leaves of a balanced ``PieceIndex``
    CheckX0000.lean …       one kernel check per piece: ``checkSet`` over ``inIndex`` of the
                            whole set, ``by decide +kernel``
    (the same for o)
    Main.lean               ``IndexChecked`` from the checks along the index, ``inIndex`` of
                            the initial position, carried to ``Geo.of cfg`` by ``geo_eq``,
                            and the final theorem (``initial_draw`` for a draw: neither player can
                            force a win), axioms pinned with ``#guard_msgs``
    render.json             what was rendered

**Positions as play reaches them.** As for wins (:mod:`harness.lean.render`), the Lean model
has no symmetry theory, so each set is *expanded*: from the initial position (and from every
stored entry) play is followed with the mirror of the Lean model (:mod:`harness.lean.model`),
every action where ``p`` is to move and the stored action (mapped by the symmetry) where the
defender is; every position reached in a frame other than the stored one becomes an alias
entry. A position the expansion cannot find in the certificate is not rendered: the kernel
(and :func:`mirror_check`) then reject the set.

**Pieces.** The expanded set, sorted by key, is weighed entry by entry with the kernel cost
model (:func:`weigh`: the closure check, every ``step`` and every membership lookup) and cut
into consecutive key ranges by :func:`harness.lean.sizing.pack`, each under
:data:`harness.lean.sizing.BUDGET` estimated steps and at most :data:`PIECE` positions; each
piece is checked by its own declaration. The pieces are the leaves of a balanced ``PieceIndex``
(``SetX.lean``), so a lookup walks to the one piece whose key range holds the key and searches
it alone: a declaration's cost does not grow with the number of pieces.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from harness.cert.format import (
    CertificateError,
    certificate_hash,
    digest,
    read_shard_file,
    shard_lines,
)
from harness.cert.nonwin_format import PLAYER_TEXT, parse_nonwin_entry, read_nonwin_index
from harness.lean import model as M
from harness.lean import nonwin_model as N
from harness.lean import sizing
from harness.lean.certdata import RenderError, action_of, render_progress
from harness.lean.codec import Cfg, action_code, code_of_action, position_key
from harness.lean.corpus_module import corpus_records, render_corpus_text
from harness.lean.emit import (
    ALIAS,
    DECL_OVERHEAD,
    MARKER,
    Rendered,
    check_options,
    check_prefix,
    corpus_entry,
    force_win_statement,
    lean_tree_expr,
    side_name,
    write_atomically,
)
from harness.lean.geometry_decl import geo_declaration, geo_fields
from harness.lean.templating import ALLOWED_AXIOMS, PINNED, lean_string, template_env
from harness.rules import Position, Ruleset
from harness.rules.symmetry import canonical

PIECE = 4096  # at most this many expanded positions per kernel check (see the docstring)
CHUNK = 512  # entries per tree definition inside a piece


@dataclass
class SetData:
    """One set, encoded: stored ``entries`` (key, action code or 0, 0) and expansion aliases."""

    player: int
    hash: str
    files: list[str]
    entries: list[tuple[int, int, int]]
    aliases: list[tuple[int, int, int]] = field(default_factory=list)
    # Filled by :func:`weigh`: per expanded entry (sorted by key) its estimated kernel steps,
    # and the pieces (contiguous runs of expanded entries).
    weights: list[int] = field(default_factory=list)
    runs: list[range] = field(default_factory=list)

    def expanded(self) -> list[tuple[int, int, int]]:
        return sorted(self.entries + self.aliases)


@dataclass
class NonWinData:
    ruleset: str
    root: str
    value: str
    hash: str
    cfg: Cfg
    sets: list[SetData]


def read_nonwin_certificate(cert_dir: str | os.PathLike[str]) -> NonWinData:
    """Read and encode a format-2 certificate; hashes are verified, the game is not."""
    cert_dir = Path(cert_dir)
    try:
        index = read_nonwin_index(cert_dir)
    except CertificateError as exc:
        raise RenderError(str(exc)) from None
    where = cert_dir / "index.yaml"
    try:
        rs = Ruleset.from_id(index["ruleset"])
        cfg = Cfg.of(rs)
        root = Position.from_text(rs, index["root"])
    except ValueError as exc:
        raise RenderError(f"{where}: {exc}") from None
    if root != Position.initial(rs):
        raise RenderError(f"{where}: root {index['root']!r} is not the initial position")
    sets = []
    for nws in index["sets"]:
        player = PLAYER_TEXT.index(nws["player"])
        entries: list[tuple[int, int, int]] = []
        seen: dict[int, str] = {}
        for meta in nws["shards"]:
            name = meta["file"]
            try:
                data = read_shard_file(cert_dir / name)
            except OSError as exc:
                raise RenderError(f"{cert_dir / name}: cannot read ({exc.strerror})") from None
            except CertificateError as exc:
                raise RenderError(str(exc)) from None
            if digest(data) != meta["blake3"]:
                raise RenderError(f"{cert_dir / name}: blake3 does not match index.yaml")
            try:
                lines = shard_lines(data, meta["entries"], name)
                count = 0
                for number, line in lines:
                    at = f"{name} line {number}"
                    e = parse_nonwin_entry(line, at)
                    try:
                        key = position_key(cfg, e.position)
                        pos = Position.from_text(rs, e.position)
                        code = 0 if e.action is None else action_code(cfg, e.action)
                    except ValueError as exc:
                        raise RenderError(f"{at}: {exc}") from None
                    if (pos.turn == player) != (e.action is None):
                        raise RenderError(
                            f"{at}: {e.position!r}: an action must be named exactly where the "
                            f"defender is to move"
                        )
                    if pos.placement_rank() != meta["placement_rank"]:
                        raise RenderError(
                            f"{at}: {e.position!r}: placement rank {pos.placement_rank()}, "
                            f"shard says {meta['placement_rank']}"
                        )
                    if key in seen:
                        raise RenderError(
                            f"{at}: {e.position!r} is already an entry at {seen[key]}"
                        )
                    seen[key] = at
                    entries.append((key, code, 0))
                    count += 1
            except CertificateError as exc:
                raise RenderError(str(exc)) from None
            if count != meta["entries"]:
                raise RenderError(
                    f"{cert_dir / name}: index.yaml says {meta['entries']} entries, the file "
                    f"has {count}"
                )
        expected = certificate_hash([m["blake3"] for m in nws["shards"]])
        if nws["hash"] != expected:
            raise RenderError(f"{where}: set {nws['player']}: hash does not match its shards")
        files = [m["file"] for m in nws["shards"]]
        sets.append(SetData(player, nws["hash"], files, entries))
    if index["hash"] != certificate_hash([s.hash for s in sets]):
        raise RenderError(f"{where}: hash does not match the set hashes")
    return NonWinData(rs.id, index["root"], index["value"], index["hash"], cfg, sets)


def _canon_key(rs: Ruleset, s: M.Pos) -> tuple[Position, object]:
    return canonical(rs, Position((s.x, s.o), (s.xbin, s.obin), s.turn))


def expand(cert: NonWinData) -> None:
    """Fill every set's ``aliases``: positions play reaches in a frame other than the stored."""
    cfg, rs = cert.cfg, cert.cfg.ruleset()
    for nws in cert.sets:
        p = nws.player
        exact = {k: a for k, a, _ in nws.entries}
        by_canon: dict[Position, tuple[int, int]] = {}
        for key, code, _ in nws.entries:
            c, _ = _canon_key(rs, M.pos_decode(cfg, key))
            by_canon.setdefault(c, (key, code))
        aliases: dict[int, int] = {}
        seen = {M.pos_encode(cfg, M.initial(cfg))}
        todo = [M.initial(cfg)]
        for key in exact:
            if key not in seen:
                seen.add(key)
                todo.append(M.pos_decode(cfg, key))
        bar = render_progress(None, f"expanding {PLAYER_TEXT[p]}")
        while todo:
            s = todo.pop()
            if bar is not None:
                bar.update()
            key = M.pos_encode(cfg, s)
            if key in exact:
                code = exact[key]
            else:
                canon, sym_here = _canon_key(rs, s)
                found = by_canon.get(canon)
                if found is None:
                    continue  # outside the set: left for the checker to reject
                stored_key, stored_code = found
                if s.turn == p:
                    code = 0
                else:
                    sym_stored = _canon_key(rs, M.pos_decode(cfg, stored_key))[1]
                    act = action_of(cfg, stored_code)
                    code = code_of_action(cfg, sym_here.inverse().action(sym_stored.action(act)))
                aliases[key] = code
            actions = M.legal(cfg, s) if s.turn == p else [code]
            for b in actions:
                if s.turn != p and b not in M.legal(cfg, s):
                    continue  # an illegal stored action: the checker rejects it
                out = M.step(cfg, s, b)
                if out.result is None:
                    k2 = M.pos_encode(cfg, out.next)
                    if k2 not in seen:
                        seen.add(k2)
                        todo.append(out.next)
        if bar is not None:
            bar.close()
        nws.aliases = sorted((k, a, 0) for k, a in aliases.items())


def weigh(cert: NonWinData, budget: int = sizing.BUDGET, piece: int = PIECE) -> None:
    """Fill every set's ``weights`` (the cost model on each entry's closure check) and ``runs``
    (pieces packed by weight under ``budget``, at most ``piece`` entries). Lookups are weighed
    on a balanced tree of the whole set: the index and the piece it routes to are as deep, give
    or take a level."""
    cfg = cert.cfg
    for nws in cert.sets:
        entries = nws.expanded()
        whole = M.balanced(entries)

        def mem(s: M.Pos, m: M.Meter, t=whole) -> bool:
            return N.in_index(cfg, s, t, m)

        nws.weights = [N.entry_cost(cfg, nws.player, mem, k, a)[1] for k, a, _ in entries]
        nws.runs = sizing.pack(nws.weights, budget, piece, DECL_OVERHEAD)


def _weighed(cert: NonWinData) -> None:
    if any(len(s.weights) != len(s.entries) + len(s.aliases) for s in cert.sets):
        weigh(cert)


def pieces(nws: SetData) -> list[list[tuple[int, int, int]]]:
    """The expanded set sorted by key, cut into its weighed runs (one empty piece if empty)."""
    entries = nws.expanded()
    return [entries[r.start : r.stop] for r in nws.runs] or [[]]


def index_text(names: list[str], parts: list[list[tuple[int, int, int]]]) -> str:
    """The Lean literal of :func:`harness.lean.nonwin_model.index_of` over the pieces' trees."""

    def build(lo: int, hi: int) -> str:
        if hi - lo == 1:
            return f"(.piece {names[lo]}.tree)"
        mid = (lo + hi) // 2
        return f"(.split {parts[mid][0][0]} {build(lo, mid)} {build(mid, hi)})"

    return build(0, len(parts))


def checked_text(names: list[str]) -> str:
    """The proof of ``IndexChecked`` along the index: as deep as the index."""

    def build(lo: int, hi: int) -> str:
        if hi - lo == 1:
            return f"(IndexChecked.piece {names[lo]}.checked)"
        mid = (lo + hi) // 2
        return f"(IndexChecked.split {build(lo, mid)} {build(mid, hi)})"

    return build(0, len(names))[1:-1]


def root_cost(cert: NonWinData, nws: SetData) -> int:
    """``Main.<p>_root`` on the mirror: estimated kernel steps of the initial lookup."""
    m = M.Meter()
    N.in_index(cert.cfg, M.initial(cert.cfg), N.index_of(pieces(nws)), m)
    return M.estimate(m, "v2") + DECL_OVERHEAD


def mirror_check(cert: NonWinData) -> tuple[bool, str]:
    """Run the Python mirror of what the rendered modules ask the kernel; (accepted, reason)."""
    cfg = cert.cfg
    _weighed(cert)
    for nws in cert.sets:
        me = PLAYER_TEXT[nws.player]
        ix = N.index_of(pieces(nws))
        bad = N.failing(cfg, nws.player, ix)
        if bad:
            from harness.lean.codec import position_text

            return False, (
                f"set {me}: checkSet fails at {position_text(cfg, bad[0].key)!r} "
                f"({len(bad)} position(s))"
            )
        if not N.in_index(cfg, M.initial(cfg), ix):
            return False, f"set {me}: the initial position is not in the set"
    return True, "accepted"


def render_text(
    cert: NonWinData,
    prefix: str = "Generated",
    corpus: list[dict] | None = None,
) -> Rendered:
    """Every module's text, without touching the disk (deterministic). Weighs the sets with
    the cost model first if :func:`weigh` has not run."""
    check_prefix(prefix)
    _weighed(cert)
    env = template_env()
    cfg = cert.cfg
    files: dict[str, str] = {}
    modules = []
    declarations = [geo_declaration(prefix, cfg)]
    files["Cert.lean"] = env.get_template("nonwin_cert.lean.jinja").render(
        prefix=prefix,
        cfg=cfg.lean(),
        ruleset=lean_string(cert.ruleset),
        ruleset_id=cert.ruleset,
        value=lean_string(cert.value),
        root=lean_string(cert.root),
        cert_hash=lean_string(cert.hash),
        **geo_fields(cfg),
    )
    modules.append({"module": f"{prefix}.Cert", "file": "Cert.lean", "kind": "cert", "imports": []})
    main_sets = []
    checks_all = []
    for nws in cert.sets:
        me = PLAYER_TEXT[nws.player]
        tag = me.upper()
        side = side_name(me)
        parts = pieces(nws)
        steps = sizing.run_weights(nws.weights, nws.runs, DECL_OVERHEAD) or [DECL_OVERHEAD]
        alias_keys = {k for k, _, _ in nws.aliases}
        data_names = [f"{prefix}.NonWin{tag}{i:04d}" for i in range(len(parts))]
        set_module = f"{prefix}.Set{tag}"
        for i, part in enumerate(parts):
            defs, root = lean_tree_expr(part, alias_keys, CHUNK)
            files[f"NonWin{tag}{i:04d}.lean"] = env.get_template("nonwin_data.lean.jinja").render(
                prefix=prefix,
                module=data_names[i],
                defs=defs,
                root=root,
                player=me,
                index=i,
                count=len(parts),
                entries=len(part),
                stored=sum(1 for k, _, _ in part if k not in alias_keys),
                aliases=sum(1 for k, _, _ in part if k in alias_keys),
                files=", ".join(nws.files),
                cert_hash=cert.hash,
                ruleset=cert.ruleset,
            )
            modules.append(
                {
                    "module": data_names[i],
                    "file": f"NonWin{tag}{i:04d}.lean",
                    "kind": "data",
                    "imports": [f"{prefix}.Cert"],
                    "entries": len(part),
                }
            )
        files[f"Set{tag}.lean"] = env.get_template("nonwin_set.lean.jinja").render(
            prefix=prefix,
            module=set_module,
            pieces=data_names,
            index=index_text(data_names, parts),
            player=me,
            cert_hash=cert.hash,
        )
        modules.append(
            {
                "module": set_module,
                "file": f"Set{tag}.lean",
                "kind": "set",
                "imports": [f"{prefix}.Cert", *data_names],
            }
        )
        check_names = [f"{prefix}.Check{tag}{i:04d}" for i in range(len(parts))]
        for i, part in enumerate(parts):
            files[f"Check{tag}{i:04d}.lean"] = env.get_template("nonwin_check.lean.jinja").render(
                prefix=prefix,
                module=check_names[i],
                data=data_names[i],
                set_module=set_module,
                side=side,
                player=me,
                index=i,
                entries=len(part),
                steps=steps[i],
                cert_hash=cert.hash,
                ruleset=cert.ruleset,
            )
            modules.append(
                {
                    "module": check_names[i],
                    "file": f"Check{tag}{i:04d}.lean",
                    "kind": "shard",
                    "imports": [f"{prefix}.Cert", data_names[i], set_module],
                    "player": me,
                    "entries": len(part),
                    "declarations": 1,
                    "estimated_steps": steps[i],
                }
            )
            declarations.append(
                {
                    "module": check_names[i],
                    "theorem": f"{check_names[i]}.checked",
                    "entries": len(part),
                    "estimated_steps": steps[i],
                }
            )
        root_steps = root_cost(cert, nws)
        declarations.append(
            {
                "module": f"{prefix}.Main",
                "theorem": f"{prefix}.Main.{me}_root",
                "entries": 0,
                "estimated_steps": root_steps,
            }
        )
        checked = checked_text([f"{n}" for n in check_names])
        main_sets.append(
            {
                "player": me,
                "side": side,
                "set_module": set_module,
                "checked": checked,
                "claim": f"¬ {force_win_statement(cfg.lean(), me)}",
            }
        )
        checks_all += check_names
    lit = cfg.lean()
    claims = [f"¬ {force_win_statement(lit, PLAYER_TEXT[s.player])}" for s in cert.sets]
    if len(cert.sets) == 2:
        final, claim = "initial_draw", "a draw: neither player can force a win"
        statement = " ∧ ".join(claims)
        proof = "⟨" + ", ".join(f"{s['player']}_cannot_win" for s in main_sets) + "⟩"
    else:
        me = PLAYER_TEXT[cert.sets[0].player]
        final, claim = "initial_no_win", f"{me} cannot force a win"
        statement = claims[0]
        proof = f"{me}_cannot_win"
    files["Main.lean"] = env.get_template("nonwin_main.lean.jinja").render(
        prefix=prefix,
        module=f"{prefix}.Main",
        imports=[*(f"{prefix}.Set{PLAYER_TEXT[s.player].upper()}" for s in cert.sets), *checks_all],
        sets=main_sets,
        cfg=lit,
        ruleset=cert.ruleset,
        cert_hash=cert.hash,
        claim=claim,
        final=final,
        statement=statement,
        proof=proof,
        pinned=PINNED,
    )
    full = f"{prefix}.Main.{final}"
    modules.append(
        {
            "module": f"{prefix}.Main",
            "file": "Main.lean",
            "kind": "main",
            "imports": [f"{prefix}.Cert", *checks_all],
            "axioms": {full: list(ALLOWED_AXIOMS)},
        }
    )
    summary = {
        "format": 2,
        "ruleset": cert.ruleset,
        "value": cert.value,
        "winner": None,
        "certificate": cert.hash,
        "entries": sum(len(s.entries) for s in cert.sets),
        "aliases": sum(len(s.aliases) for s in cert.sets),
        "sets": {
            PLAYER_TEXT[s.player]: {"entries": len(s.entries), "aliases": len(s.aliases)}
            for s in cert.sets
        },
        "theorem": {
            "name": full,
            "statement": f"theorem {final} : {statement}",
            "axioms": list(ALLOWED_AXIOMS),
        },
        "budget": sizing.BUDGET,
        "modules": modules,
        "declarations": declarations,
    }
    if corpus is not None:
        text, info, corpus_decls = render_corpus_text(corpus, prefix, env)
        declarations.extend(corpus_decls)
        files["Corpus.lean"] = text
        modules.append(corpus_entry(prefix))
        summary["corpus"] = info
    for name, text in files.items():
        check_options(text, name)
    return Rendered(files, summary)


def render_nonwin(
    cert_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    corpus: str | os.PathLike[str] | None = None,
    check: bool = False,
) -> dict:
    """Render a format-2 ``cert_dir`` into ``out_dir``; return the summary (``render.json``).

    With ``check``, the mirror runs first and a certificate it rejects is a
    :class:`RenderError` (nothing is written)."""
    out_dir = Path(out_dir)
    check_prefix(out_dir.name)  # before the work: a bad name is refused at once
    cert = read_nonwin_certificate(cert_dir)
    expand(cert)
    if check:
        ok, reason = mirror_check(cert)
        if not ok:
            raise RenderError(f"{cert_dir}: the Lean checker would reject it: {reason}")
    records = corpus_records(corpus) if corpus is not None else None
    rendered = render_text(cert, out_dir.name, records)
    files = dict(rendered.files)
    files[MARKER] = json.dumps(rendered.summary, indent=2, sort_keys=True) + "\n"
    write_atomically(out_dir, files)
    return rendered.summary


__all__ = [
    "ALIAS",
    "render_nonwin",
    "mirror_check",
    "read_nonwin_certificate",
    "expand",
    "weigh",
]
