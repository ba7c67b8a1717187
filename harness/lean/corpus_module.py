"""``Corpus.lean``: the transition corpus (and seeded games on the model's own boards)
rendered as Lean checks that print ``GUARD_HITS`` per rule branch.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jinja2

from harness.bounded import MAX_LINE, TooDeepError, loads_json, read_text, reason
from harness.lean.certdata import RenderError
from harness.lean.codec import Cfg, EncodingError, action_code, position_key
from harness.lean.templating import PINNED, lean_string, template_env
from harness.rules import Ruleset

MAX_CORPUS_BYTES = 256 << 20  # a transition corpus (the shared one is about 4 MB)

CORPUS_CHUNK = 200  # corpus records per list definition (long list literals nest deeply)


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
