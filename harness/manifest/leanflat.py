"""Flatten a Lean project into one sealed model file that plain ``lean`` can check.

The published re-run steps (as on the seeds' "Check it yourself" pages) give one file, its
SHA-256, and one command: ``lean +TOOLCHAIN -M… Check.lean``. No Lake, no project layout,
nothing else to trust. This module writes that file from the project: every module the
rendered modules need, in import order, with the project's own ``import`` lines removed and
each module's body wrapped in ``section``/``end`` so that its ``open``, ``set_option`` and
``variable`` commands stay as local as they were in their own file.

What stays different from building module by module: ``private`` names share one file (two
modules with the same private name would clash, so :func:`flatten` refuses that), and imports
from outside the project (``Std``, ``Lean``) are hoisted to the top; core-only projects have
none. A ``prelude`` module cannot be flattened and is refused.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp())
>>> _ = (p / "A.lean").write_text("namespace A\\ndef a := 1\\nend A\\n")
>>> _ = (p / "B.lean").write_text("/- doc -/\\nimport A\\ndef b := A.a\\n")
>>> text, order = flatten(p, ["B"])
>>> order
['A', 'B']
>>> "import A" in text, text.count("section")
(False, 2)
"""

from __future__ import annotations

import graphlib
import re
from pathlib import Path

from harness.atomic import write_atomic
from harness.bounded import read_text
from harness.lean.cache import MAX_SOURCE_BYTES
from harness.lean.parse import header_imports, strip_comments

MODEL_FILE = "formal/Game.lean"
"""Where a verified run and its sealed archive keep the flattened project."""

TOOLCHAIN_FILE = "formal/lean-toolchain"
"""The Lean release to check :data:`MODEL_FILE` with, beside it."""


class FlattenError(ValueError):
    """The project cannot be made into one file (one line, naming the module)."""


def module_path(project: Path, module: str) -> Path:
    """``Generated.Main`` -> ``project/Generated/Main.lean``."""
    return project.joinpath(*module.split(".")).with_suffix(".lean")


def _header_end(stripped: str) -> int:
    """Offset just past the header (``module``/``prelude``/``import …``) of a source with its
    comments stripped (:func:`~harness.lean.parse.strip_comments` keeps offsets)."""
    pos = 0
    pattern = re.compile(r"\s*(?:(?:public|meta|private)\s+)*import\s+(?:(?:all|runtime)\s+)?\S+")
    while True:
        m = pattern.match(stripped, pos)
        if m is None:
            m = re.compile(r"\s*module\b").match(stripped, pos)
            if m is None:
                return pos
        pos = m.end()


_PRIVATE_RE = re.compile(
    r"\bprivate\s+(?:(?:noncomputable|partial|unsafe)\s+)*"
    r"(?:def|theorem|abbrev|instance|structure|inductive|axiom)\s+(\S+)"
)


def flatten(project: Path, roots: list[str]) -> tuple[str, list[str]]:
    """(file text, modules in the order inlined) for ``roots`` and everything they import
    from ``project``. Deterministic: ties in the import order are broken by name."""
    project = Path(project)
    sources: dict[str, str] = {}
    stripped: dict[str, str] = {}  # each source without comments, made once (big modules)
    deps: dict[str, list[str]] = {}
    external: list[str] = []
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in sources:
            continue
        path = module_path(project, name)
        if not path.is_file():
            raise FlattenError(f"module {name}: no file {path}")
        try:
            source = read_text(path, MAX_SOURCE_BYTES, "Lean module")
        except (OSError, ValueError) as exc:
            raise FlattenError(f"module {name}: {exc}") from None
        bare = strip_comments(source)
        if re.match(r"\s*prelude\b", bare):
            raise FlattenError(f"module {name} ({path}): a prelude module cannot be flattened")
        sources[name], stripped[name] = source, bare
        deps[name] = []
        for imp in header_imports(bare):
            if module_path(project, imp).is_file():
                deps[name].append(imp)
                todo.append(imp)
            elif imp not in external:
                external.append(imp)
    sorter = graphlib.TopologicalSorter(deps)
    order: list[str] = []
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        raise FlattenError(f"import cycle: {' -> '.join(exc.args[1])}") from None
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order.extend(ready)
        sorter.done(*ready)
    privates: dict[str, str] = {}
    for name in order:
        for priv in _PRIVATE_RE.findall(stripped[name]):
            if priv in privates:
                raise FlattenError(
                    f"private name {priv} is declared in {privates[priv]} and {name}; "
                    "in one file they would clash"
                )
            privates[priv] = name
    parts = [
        "/-\nSealed model file: the Lean modules below, concatenated in import order so that\n"
        "plain `lean` checks everything in one run. Written by `python -m harness verify`;\n"
        "each part is the named module with its import lines removed.\n-/\n"
    ]
    parts.extend(f"import {imp}\n" for imp in sorted(external))
    for name in order:
        source = sources[name]
        body = source[_header_end(stripped[name]) :].strip("\n")
        rel = module_path(Path("."), name).as_posix()
        parts.append(f"\n-- ===== module {name} ({rel}) =====\nsection\n{body}\nend\n")
    return "".join(parts), order


def write_model(project: Path, roots: list[str], path: Path) -> list[str]:
    """Flatten ``project`` from ``roots`` (:func:`flatten`) into ``path``, written atomically;
    the modules in the order inlined. A :class:`FlattenError` leaves ``path`` as it was."""
    text, order = flatten(project, roots)
    write_atomic(path, text.encode("utf-8"))
    return order
