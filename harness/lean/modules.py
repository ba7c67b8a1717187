"""The rendered modules of a Lean project and their imports: discovery, and the order in
which they are built.
"""

from __future__ import annotations

import graphlib
import re
from dataclasses import dataclass
from pathlib import Path

from harness.bounded import read_text
from harness.errors import HarnessError
from harness.lean.cache import MAX_SOURCE_BYTES
from harness.lean.parse import parse_imports


@dataclass(frozen=True)
class Module:
    name: str  # "Generated.Shard0003"
    rel: str  # "Generated/Shard0003.lean", relative to the project
    deps: tuple[str, ...]  # rendered modules it imports
    model_imports: tuple[str, ...]  # other project modules it imports
    kind: str  # "shard" | "corpus" | "module"
    source: str


def module_name(rel: Path) -> str:
    """``Generated/Shard0003.lean`` -> ``Generated.Shard0003``."""
    return ".".join(rel.with_suffix("").parts)


def discover_modules(project: Path, generated: str = "Generated") -> dict[str, Module]:
    """Every ``*.lean`` under ``project/generated``, with the imports that link them.

    Raises HarnessError for no modules, an import of a missing rendered module, or a cycle.
    """
    project = Path(project)
    root = project / generated
    if not root.is_dir():
        raise HarnessError(
            f"no rendered modules: {root} does not exist (run `python -m harness render` first)"
        )
    prefix = module_name(Path(generated)) + "."
    files = sorted(p for p in root.rglob("*.lean") if p.is_file())
    if not files:
        raise HarnessError(f"no rendered modules in {root} (run `python -m harness render` first)")
    names = {module_name(p.relative_to(project)): p for p in files}
    modules: dict[str, Module] = {}
    for name, path in names.items():
        rel = path.relative_to(project).as_posix()
        try:
            source = read_text(path, MAX_SOURCE_BYTES, "Lean module")
        except (OSError, ValueError) as exc:
            raise HarnessError(str(exc)) from None
        deps, model = [], []
        for imp in parse_imports(source):
            if imp in names:
                deps.append(imp)
            elif imp.startswith(prefix):
                raise HarnessError(f"{rel} imports {imp}, which has no file under {root}")
            elif (project / (imp.replace(".", "/") + ".lean")).is_file():
                model.append(imp)
            # Anything else (Init, Std, Lean) comes with the toolchain.
        last = name.rsplit(".", 1)[-1]
        if re.fullmatch(r"Shard\d+", last):
            kind = "shard"
        elif "GUARD_HITS" in source:
            kind = "corpus"
        else:
            kind = "module"
        modules[name] = Module(name, rel, tuple(deps), tuple(model), kind, source)
    build_order(modules)  # reject cycles now, with a readable message
    return modules


def build_order(modules: dict[str, Module]) -> list[str]:
    """A dependency order (imports first; ties by name), or HarnessError naming a cycle."""
    sorter = graphlib.TopologicalSorter({n: m.deps for n, m in sorted(modules.items())})
    try:
        return list(sorter.static_order())
    except graphlib.CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise HarnessError(f"import cycle among rendered modules: {cycle}") from None
