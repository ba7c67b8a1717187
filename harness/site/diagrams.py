"""Small inline SVG diagrams for the Rules page, drawn at build time from the reference engine.

Nothing here is drawn by hand: where a pushed checker goes on each edge surface comes from
:func:`harness.rules.geometry.surface_step`, and the example pop is a real turn of
:func:`harness.rules.engine.apply_action`, so a diagram cannot drift away from the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from harness.rules.engine import apply_action
from harness.rules.geometry import surface_step
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset

CELL = 30
MARGIN = 34
X_FILL, O_FILL = "#c2410c", "#1d4ed8"
ARROW = "#0f766e"


@dataclass(frozen=True)
class EdgeDiagram:
    edge: str
    title: str
    caption: str
    svg: str


def _centre(r: int, c: int) -> tuple[float, float]:
    return MARGIN + c * CELL + CELL / 2, MARGIN + r * CELL + CELL / 2


def _board(rows: int, cols: int, edge: str, letters_below: bool = False) -> list[str]:
    w, h = cols * CELL, rows * CELL
    out = [f'<rect x="{MARGIN}" y="{MARGIN}" width="{w}" height="{h}" fill="#e8dcc0"/>']
    for r in range(rows):
        for c in range(cols):
            if (r + c) % 2:
                x, y = MARGIN + c * CELL, MARGIN + r * CELL
                out.append(f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="#e0d1ae"/>')
    for i in range(1, cols):
        x = MARGIN + i * CELL
        out.append(f'<line x1="{x}" y1="{MARGIN}" x2="{x}" y2="{MARGIN + h}" stroke="#c9b893"/>')
    for i in range(1, rows):
        y = MARGIN + i * CELL
        out.append(f'<line x1="{MARGIN}" y1="{y}" x2="{MARGIN + w}" y2="{y}" stroke="#c9b893"/>')
    # Wrapping edges are dashed (as on the Play page); Klein's twisted pair is purple with
    # arrows pointing opposite ways, the usual picture of a Klein bottle.
    dash = ' stroke-dasharray="6 4"' if edge in ("torus", "klein") else ""
    side = "#4a3f2c"
    top = "#7c3aed" if edge == "klein" else side
    x0, y0, x1, y1 = MARGIN, MARGIN, MARGIN + w, MARGIN + h
    out += [
        f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="{side}" stroke-width="3"{dash}/>',
        f'<line x1="{x1}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="{side}" stroke-width="3"{dash}/>',
        f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="{top}" stroke-width="3"{dash}/>',
        f'<line x1="{x0}" y1="{y1}" x2="{x1}" y2="{y1}" stroke="{top}" stroke-width="3"{dash}/>',
    ]
    if edge == "klein":
        mid = (x0 + x1) / 2
        out.append(_head(mid + 6, y0, 1, 0, "#7c3aed"))
        out.append(_head(mid - 6, y1, -1, 0, "#7c3aed"))
    # Below the board where arrows leave over the top edge, so no letter sits under an arrow.
    letters_y = MARGIN + h + 14 if letters_below else MARGIN - 6
    for c in range(cols):
        x, _ = _centre(0, c)
        out.append(_label(x, letters_y, chr(97 + c)))
    for r in range(rows):
        _, y = _centre(r, 0)
        out.append(_label(MARGIN - 10, y + 4, str(r + 1)))
    return out


def _label(x: float, y: float, text: str, size: int = 10, fill: str = "#5b6472") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="middle" '
        f'fill="{fill}">{escape(text)}</text>'
    )


def _checker(r: int, c: int, player: int, ghost: bool = False) -> str:
    x, y = _centre(r, c)
    fill = X_FILL if player == 0 else O_FILL
    if ghost:
        return (
            f'<circle cx="{x}" cy="{y}" r="{CELL * 0.34}" fill="none" stroke="{fill}" '
            f'stroke-width="2" stroke-dasharray="3 3"/>'
        )
    return f'<circle cx="{x}" cy="{y}" r="{CELL * 0.36}" fill="{fill}"/>' + _label(
        x, y + 4, "xo"[player], 11, "#fff"
    )


def _head(x: float, y: float, dx: float, dy: float, colour: str = ARROW) -> str:
    """An arrow head at (x, y) pointing along (dx, dy)."""
    n = (dx * dx + dy * dy) ** 0.5 or 1
    ux, uy = dx / n, dy / n
    px, py = -uy, ux
    a = (x - 8 * ux + 4 * px, y - 8 * uy + 4 * py)
    b = (x - 8 * ux - 4 * px, y - 8 * uy - 4 * py)
    return (
        f'<polygon points="{x:.1f},{y:.1f} {a[0]:.1f},{a[1]:.1f} {b[0]:.1f},{b[1]:.1f}" '
        f'fill="{colour}"/>'
    )


def _cross(x: float, y: float, r: float = 5.5) -> str:
    """A red x: a push that fails."""
    return (
        f'<path d="M{x - r:.1f},{y - r:.1f} L{x + r:.1f},{y + r:.1f} M{x - r:.1f},{y + r:.1f} '
        f'L{x + r:.1f},{y - r:.1f}" stroke="#b91c1c" stroke-width="3" stroke-linecap="round"/>'
    )


def _arrow(x0, y0, x1, y1, dashed: bool = False, colour: str = ARROW) -> str:
    dash = ' stroke-dasharray="4 3"' if dashed else ""
    return (
        f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="{colour}" '
        f'stroke-width="2.2"{dash}/>' + _head(x1, y1, x1 - x0, y1 - y0, colour)
    )


def _svg(rows: int, cols: int, parts: list[str], label: str) -> str:
    w, h = cols * CELL + 2 * MARGIN, rows * CELL + 2 * MARGIN
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" '
        f'height="{h}" role="img" aria-label="{escape(label)}">' + "".join(parts) + "</svg>"
    )


EDGE_TEXT = {
    "reincarnation": (
        "Reincarnation",
        "o is pushed off the board and goes back to o's bin: it can be placed again.",
    ),
    "ringout": (
        "Ringout",
        "o is pushed off the board and leaves the game for good.",
    ),
    "blocked": (
        "Blocked",
        "o would leave the board, so it stays where it is.",
    ),
    "torus": (
        "Torus",
        "Leaving the top comes back at the bottom (and right to left): o lands on the far side.",
    ),
    "klein": (
        "Klein bottle",
        "Left and right wrap as on the torus; across the top or bottom the column is "
        "mirrored, so o comes back at the other end of the board.",
    ),
}


def edge_diagram(edge: str, rows: int = 4, cols: int = 4) -> EdgeDiagram:
    """x lands on b2; its neighbour o on c1 is pushed up and to the right, over the top edge."""
    landing, direction = (1, 1), (-1, 1)
    first = surface_step(rows, cols, edge, *landing, direction)
    assert first is not None, "the neighbour is on the board for every edge"
    second = surface_step(rows, cols, edge, first.row, first.col, (first.dr, first.dc))
    parts = _board(rows, cols, edge, letters_below=True)
    parts.append(_checker(*landing, 0))
    nx, ny = _centre(first.row, first.col)
    dx, dy = direction[1] * CELL, direction[0] * CELL
    if second is None:
        exit_x, exit_y = nx + dx * 0.95, ny + dy * 0.95
        if edge == "blocked":
            parts.append(_checker(first.row, first.col, 1))
            parts.append(_arrow(nx + dx * 0.3, ny + dy * 0.3, nx + dx * 0.62, ny + dy * 0.62))
            parts.append(_cross(nx + dx * 0.72, ny + dy * 0.72))
        else:
            parts.append(_checker(first.row, first.col, 1, ghost=True))
            parts.append(_arrow(nx, ny, exit_x, exit_y))
            where = "to o's bin" if edge == "reincarnation" else "out of the game"
            parts.append(_label(exit_x + 4, exit_y - 6, where, 10, ARROW))
    else:
        tx, ty = _centre(second.row, second.col)
        parts.append(_checker(first.row, first.col, 1, ghost=True))
        parts.append(_checker(second.row, second.col, 1))
        # Out over the edge on one side, in from the far side into the target square.
        parts.append(_arrow(nx, ny, nx + dx * 0.75, ny + dy * 0.75))
        ddx, ddy = second.dc * CELL, second.dr * CELL
        parts.append(_arrow(tx - ddx * 0.8, ty - ddy * 0.8, tx - ddx * 0.3, ty - ddy * 0.3, True))
    title, caption = EDGE_TEXT[edge]
    label = f"{title}: x lands on b2 and pushes o on c1 toward the top-right"
    return EdgeDiagram(edge, title, caption, _svg(rows, cols, parts, label))


def edge_diagrams() -> list[EdgeDiagram]:
    return [edge_diagram(e) for e in ("reincarnation", "ringout", "blocked", "torus", "klein")]


# A turn with pushes that succeed and one that fails, played by the engine.
POP_RULESET = "pop1-5x5-c8-blocked-continue-binempty-king-nozero-nojump"
POP_BEFORE = "...../.o.x./...../.ooo./..o.. 7 3 x"
POP_ACTION = "c3"


def pop_diagrams() -> tuple[str, str, str]:
    """(before, after, caption) of an example pop: the engine decides every arrow."""
    rs = Ruleset.from_id(POP_RULESET)
    pos = Position.from_text(rs, POP_BEFORE)
    out = apply_action(rs, pos, Action.from_text(rs, POP_ACTION))
    land = Action.from_text(rs, POP_ACTION).dst
    before = _board(rs.rows, rs.cols, rs.edge)
    after = _board(rs.rows, rs.cols, rs.edge)
    for board, p in ((before, pos), (after, out.next)):
        for player in (0, 1):
            for sq in range(rs.rows * rs.cols):
                if p.board[player] >> sq & 1:
                    board.append(_checker(sq // rs.cols, sq % rs.cols, player))
    lr, lc = divmod(land, rs.cols)
    before.append(_checker(lr, lc, 0, ghost=True))
    pushed, failed = 0, []
    name = lambda sq: chr(97 + sq % rs.cols) + str(sq // rs.cols + 1)  # noqa: E731
    for pop in out.pops:
        sx, sy = _centre(*divmod(pop.src, rs.cols))
        if pop.kind == "push":
            tx, ty = _centre(*divmod(pop.dst, rs.cols))
            after.append(_arrow(sx, sy, tx + (sx - tx) * 0.4, ty + (sy - ty) * 0.4))
            pushed += 1
        else:
            failed.append(f"{name(pop.src)} (toward {name(pop.dst)}, which is taken)")
            tx, ty = _centre(*divmod(pop.dst, rs.cols)) if pop.dst is not None else (sx, sy)
            mx, my = sx + (tx - sx) * 0.5, sy + (ty - sy) * 0.5
            after.append(_cross(mx, my))
    caption = (
        f"x places on {POP_ACTION}: {pushed} neighbours are pushed one square away, all at the "
        "same moment, whichever colour they are."
        + (f" The push of {', '.join(failed)} fails (red cross)." if failed else "")
    )
    return (
        _svg(rs.rows, rs.cols, before, f"Before: x is about to land on {POP_ACTION}"),
        _svg(rs.rows, rs.cols, after, "After the pop"),
        caption,
    )
