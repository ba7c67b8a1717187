"""The edge geometry of a ruleset as Lean literals: the pop rays, king moves, shifts and
lines that ``Geo.of`` computes, written out so the kernel checks them once per module.
"""

from __future__ import annotations

from harness.lean import model as M
from harness.lean.codec import Cfg


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
