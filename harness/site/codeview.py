"""The rule list of the replay pages: each rule in words, the branch names that report it, and
its code in the Python reference engine and in the Lean model, cut out of the source files at
build time (never copied into templates, so the page shows the code as it is).

A rule names its code by function (``python: engine.py:movement_allowed``), by a numbered
comment section of ``play_unchecked`` (the turn, step by step), or, for Lean, by declaration
name in ``lean/Pop/Rules.lean``. A name that is not found stops the build: a rule list with a
silently missing piece of code would misstate what explains a step.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError
from harness.lean.project import project_dir

REPO = Path(__file__).resolve().parents[2]
ENGINE = Path("harness/rules/engine.py")
GEOMETRY = Path("harness/rules/geometry.py")
LEAN_RULES = Path("lean/Pop/Rules.lean")

# The sections of play_unchecked, by the comment that opens each one, in order.
TURN = "play_unchecked"
SECTIONS = {
    "land": "# 1-3. Place or move",
    "pop": "# 4. Pop",
    "lines": "# 5.1 Lines",
    "ringout": "# 5.2 Ringout",
    "stuck": "# Stuck",
    "repetition": "# 5.3 Repetition",
}


@dataclass(frozen=True)
class PyRef:
    """A piece of Python: a whole function, or a section of the turn (``section`` set)."""

    path: Path
    name: str
    section: str | None = None

    @property
    def label(self) -> str:
        where = f"{self.name}, {self.section} section" if self.section else self.name
        return f"{self.path.as_posix()} · {where}"


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    summary: str
    branches: tuple[str, ...]
    python: tuple[PyRef, ...]
    lean: tuple[str, ...] = ()
    lean_note: str = ""
    extra: dict = field(default_factory=dict)


def _turn(section: str) -> PyRef:
    return PyRef(ENGINE, TURN, section)


def _fn(name: str, path: Path = ENGINE) -> PyRef:
    return PyRef(path, name)


NOT_IN_LEAN = "Not in the Lean model, which covers the research movement only"

RULES: tuple[Rule, ...] = (
    Rule(
        "place",
        "Place from the bin",
        "While your bin holds a checker you may put one on any empty square.",
        ("place",),
        (_fn("legal_actions"), _turn("land")),
        ("legal", "step"),
    ),
    Rule(
        "move",
        "Move a checker",
        "With movement allowed (always, or once your own bin is empty under binempty), one of "
        "your checkers goes to an empty square its pattern reaches: king, rook, bishop, queen "
        "or anywhere.",
        ("move_king", "move_rook", "move_bishop", "move_queen", "move_anywhere"),
        (_fn("movement_allowed"), _fn("_destinations"), _turn("land")),
        ("gridStep", "kingFrom", "kingMoves", "legal", "step"),
        "The Lean model has king moves once the bin is empty (binempty, king) and nothing else.",
    ),
    Rule(
        "move_zero",
        "Zero move",
        "With the zero field, a checker may stay where it is and pop again.",
        ("move_zero",),
        (_fn("_destinations"), _turn("land")),
        (),
        f"{NOT_IN_LEAN} (nozero).",
    ),
    Rule(
        "move_jump",
        "Jumps",
        "With the jump field, a sliding move may pass over occupied squares; without it the "
        "slide stops at the first occupied one.",
        ("move_jump",),
        (_fn("_destinations"), _fn("_passes_over")),
        (),
        f"{NOT_IN_LEAN} (nojump).",
    ),
    Rule(
        "move_from_edge",
        "Movement never wraps",
        "Moves stay on the plain board even when pops and lines wrap: a checker on the border "
        "cannot step across it.",
        ("move_from_edge",),
        (_fn("_destinations"), _turn("land")),
        ("gridStep",),
    ),
    Rule(
        "push",
        "The pop: neighbours pushed away",
        "Every checker next to the landing square is pushed one square further in the same "
        "direction, all at once, following the edge surface (wrapping on the torus; mirrored "
        "through the Klein twist).",
        ("push", "push_wrap", "push_twist"),
        (_fn("surface_step", GEOMETRY), _fn("_pop_rays", GEOMETRY), _turn("pop")),
        ("surfStep", "rayOf", "pushAll"),
    ),
    Rule(
        "push_blocked",
        "Failed pushes",
        "A push fails, and the checker stays, when the square behind it was occupied in the "
        "snapshot or when two pushes aim at the same square.",
        ("push_blocked_occupied", "push_blocked_shared"),
        (_turn("pop"),),
        ("sharedTargets", "pushAll"),
    ),
    Rule(
        "fall",
        "Pushed off the board",
        "On a non-wrapping edge a checker pushed off the board goes back to its owner's bin "
        "(reincarnation), leaves the game (ringout), or stays where it is (blocked).",
        ("fall_reincarnation", "fall_ringout", "fall_blocked"),
        (_fn("surface_step", GEOMETRY), _turn("pop")),
        ("rayOf", "Boards.fall", "step"),
    ),
    Rule(
        "lines",
        "Three in a line",
        "Three checkers of one colour in a row, column or diagonal, following the edge "
        "surface (lines wrap on the torus and the Klein bottle).",
        (
            "line_horizontal",
            "line_vertical",
            "line_diagonal",
            "line_antidiagonal",
            "line_wrapped",
        ),
        (_fn("_lines", GEOMETRY), _turn("lines")),
        ("lineMaps", "pull", "hasLine"),
    ),
    Rule(
        "result",
        "Who wins",
        "After the pop: only the mover has a line, the mover wins; only the opponent, the "
        "opponent wins; both, a draw.",
        ("win_mover", "win_opponent", "draw_lines"),
        (_turn("lines"),),
        ("step",),
    ),
    Rule(
        "ringout",
        "Too few checkers",
        "Under ringout a player left with fewer than three checkers (board and bin) loses; "
        "both at once is a draw.",
        ("ringout_loss", "ringout_draw"),
        (_turn("ringout"),),
        ("popcount", "ringoutResult", "afterLines"),
    ),
    Rule(
        "stuck",
        "No legal action",
        "A player with no legal action passes under continue (the other moves again) and the "
        "game is drawn under draw; if neither can act, it is a draw.",
        ("stuck_pass", "stuck_draw", "stuck_both_draw"),
        (_fn("has_legal_action"), _turn("stuck")),
        ("nonEmpty", "settle"),
        "The Lean model has the continue rule only.",
    ),
    Rule(
        "repetition",
        "Repetition",
        "A position (board, bins, player to move) that has occurred before in the game ends it "
        "in a draw.",
        ("repetition_draw",),
        (_turn("repetition"),),
        (),
        "Not modelled in Lean: values are judged from the position alone. Along any play "
        "that follows a force-win, the stage of the least fixed point strictly decreases, "
        "so no position can repeat on it.",
    ),
)

BRANCH_RULE = {b: r.id for r in RULES for b in r.branches}

# One phrase per branch, for the "Explained by" panel beside each replayed step.
BRANCH_WORDS = {
    "place": "a checker is placed from the bin",
    "move_king": "a king move, to a neighbouring square",
    "move_rook": "a rook move, along a row or column",
    "move_bishop": "a bishop move, along a diagonal",
    "move_queen": "a queen move, along a line or diagonal",
    "move_anywhere": "a move to any empty square",
    "move_zero": "a zero move: the checker stays and pops again",
    "move_jump": "the slide jumps over occupied squares",
    "move_from_edge": "a move from the border, on the plain board (moves never wrap)",
    "push": "neighbours are pushed one square away",
    "push_wrap": "a push crosses a wrapping edge",
    "push_twist": "a push crosses the Klein twist (column mirrored)",
    "fall_reincarnation": "a checker pushed off the board returns to its bin",
    "fall_ringout": "a checker pushed off the board leaves the game",
    "fall_blocked": "a checker at the border cannot be pushed off and stays",
    "push_blocked_occupied": "a push fails: the square behind is taken",
    "push_blocked_shared": "pushes fail: two aim at the same square",
    "line_horizontal": "three in a row",
    "line_vertical": "three in a column",
    "line_diagonal": "three on a diagonal (down-right)",
    "line_antidiagonal": "three on an antidiagonal (down-left)",
    "line_wrapped": "the line runs across a wrapping edge",
    "win_mover": "only the mover has a line: the mover wins",
    "win_opponent": "only the opponent has a line: the opponent wins",
    "draw_lines": "both have a line: a draw",
    "ringout_loss": "a player is left with fewer than three checkers and loses",
    "ringout_draw": "both players drop below three checkers: a draw",
    "repetition_draw": "the position has occurred before: a draw",
    "stuck_pass": "the opponent has no legal action and passes",
    "stuck_draw": "the player to move has no legal action: a draw",
    "stuck_both_draw": "neither player has a legal action: a draw",
}


# --- Python --------------------------------------------------------------------------------


def _read(root: Path, rel: Path) -> str:
    path = root / rel
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise HarnessError(f"site: cannot read {rel.as_posix()} for the rule list: {exc}") from None


def _function_node(tree: ast.Module, name: str, rel: Path) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise HarnessError(f"site: rule list: no function {name} in {rel.as_posix()}")


def python_code(ref: PyRef, root: Path = REPO) -> str:
    """The source of a function, or of one numbered section of the turn, dedented."""
    text = _read(root, ref.path)
    tree = ast.parse(text)
    node = _function_node(tree, ref.name, ref.path)
    lines = text.splitlines()
    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    body = lines[start : node.end_lineno]
    if ref.section is None:
        return "\n".join(body).rstrip() + "\n"
    marker = SECTIONS[ref.section]
    begin = next((i for i, ln in enumerate(body) if ln.strip().startswith(marker)), None)
    if begin is None:
        raise HarnessError(
            f"site: rule list: no section '{marker}' in {ref.name} ({ref.path.as_posix()})"
        )
    indent = len(body[begin]) - len(body[begin].lstrip())
    others = [m for m in SECTIONS.values() if m != marker]
    end = len(body)
    for i in range(begin + 1, len(body)):
        ln = body[i]
        if len(ln) - len(ln.lstrip()) == indent and any(ln.strip().startswith(m) for m in others):
            end = i
            break
    return textwrap.dedent("\n".join(body[begin:end])).rstrip() + "\n"


# --- Lean ----------------------------------------------------------------------------------

_TOP = re.compile(
    r"^(/--|/-!|def |theorem |lemma |inductive |structure |abbrev |instance |end |namespace "
    r"|section|@\[|private |noncomputable |open )"
)


def lean_code(name: str, text: str, where: str = LEAN_RULES.as_posix()) -> str:
    """The declaration ``def NAME`` (or inductive/structure/theorem) with its doc comment."""
    lines = text.splitlines()
    decl = re.compile(
        r"^(?:private |noncomputable )*(?:def|theorem|inductive|structure|abbrev) "
        + re.escape(name)
        + r"(?=[\s:(\[{]|$)"
    )
    at = next((i for i, ln in enumerate(lines) if decl.match(ln)), None)
    if at is None:
        raise HarnessError(f"site: rule list: no Lean declaration {name} in {where}")
    start = at
    if start > 0 and lines[start - 1].rstrip().endswith("-/"):
        # Walk back over the doc comment that belongs to the declaration.
        k = start - 1
        while k >= 0 and not lines[k].startswith("/--"):
            k -= 1
        if k >= 0:
            start = k
    end = len(lines)
    for i in range(at + 1, len(lines)):
        if _TOP.match(lines[i]):
            end = i
            break
    return "\n".join(lines[start:end]).rstrip() + "\n"


# --- the list, ready for a template ---------------------------------------------------------


def _lean_pieces(rule: Rule, text: str | None, where: str) -> tuple[list[dict], str]:
    """The rule's Lean declarations from ``text``; a declaration that the model as verified
    does not have (it was renamed since) is said, not invented. No text: none are shown."""
    if text is None:
        return [], "The Lean model's source is not part of this build."
    pieces, absent = [], []
    for name in rule.lean:
        try:
            pieces.append({"label": f"{where} · {name}", "code": lean_code(name, text, where)})
        except HarnessError:
            if where == LEAN_RULES.as_posix():
                raise  # the repository's own model must have every declaration named
            absent.append(name)
    note = f"Not in the model as verified: {', '.join(absent)}." if absent else ""
    return pieces, note


def rule_list(lean_text: str | None, root: Path = REPO, lean_where: str | None = None) -> list:
    """Every rule with its code: Python from ``root``, Lean from ``lean_text`` (the model as
    verified, when the run kept a copy) or, when None, from the repository's Rules.lean."""
    where = lean_where or LEAN_RULES.as_posix()
    if lean_text is None and (root / LEAN_RULES).is_file():
        lean_text = _read(root, LEAN_RULES)
    elif lean_text is None:  # an installed wheel: the copy of the project it carries
        lean_text = _read(project_dir(), LEAN_RULES.relative_to("lean"))
    out = []
    for rule in RULES:
        lean, missing = _lean_pieces(rule, lean_text, where)
        out.append(
            {
                "id": rule.id,
                "title": rule.title,
                "summary": rule.summary,
                "branches": list(rule.branches),
                "python": [{"label": r.label, "code": python_code(r, root)} for r in rule.python],
                "lean": lean,
                "lean_note": rule.lean_note or missing,
            }
        )
    return out
