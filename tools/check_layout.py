"""Check the layout rules of the ``harness`` package: no import cycle among its modules (imports
inside functions count), no module over 800 lines, no import of a ``_private`` name from
another module. Prints one line per finding and exits 1 if there is any.

Usage: ``python tools/check_layout.py [PACKAGE_DIR]`` (default ``harness``); ``nox -s lint``
runs it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_LINES = 800


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve(base: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module a relative ``from`` import names."""
    if level == 0:
        return target or ""
    parts = base.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join(parts + ([target] if target else []))


def imports_of(path: Path, name: str, modules: set[str]) -> list[tuple[str, str | None, int]]:
    """(module imported, name imported from it or None, line) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((alias.name, None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = resolve(name, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:  # `from harness.x import y` where y is a module
                    found.append((sub, None, node.lineno))
                else:
                    found.append((base, alias.name, node.lineno))
    return found


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return cycles


def check(root: Path) -> list[str]:
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    modules = set(files)
    problems = []
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in files.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            problems.append(f"{path}: {lines} lines, more than {MAX_LINES}: split it by idea")
        for target, imported, line in imports_of(path, name, modules):
            if target in modules and target != name:
                # A package's __init__ importing its own modules is how it exports them.
                if not name or not target.startswith(name + ".") or path.name != "__init__.py":
                    graph[name].add(target)
            if (
                imported
                and imported.startswith("_")
                and not imported.startswith("__")
                and target in modules
                and target != name
            ):
                problems.append(f"{path}:{line}: imports the private name {imported} from {target}")
    for cycle in find_cycles(graph):
        problems.append("import cycle among: " + ", ".join(cycle))
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else "harness")
    problems = check(root)
    for problem in problems:
        print(problem)
    print(f"layout: {len(problems)} finding(s) in {root}/")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
