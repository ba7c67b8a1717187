"""Build hook: a wheel carries the Lean project (``lean/``) as ``harness/lean/project/``.

Everything else about the package is declared in ``pyproject.toml``. The files copied are
the ones ``verify`` copies into a run (``harness.verify.sections.copy_lean_project``): the
project's sources, without build output (``.lake``, ``build``), rendered modules
(``Generated``) or hidden files. An editable install needs no copy: the package finds the
checkout's ``lean/`` (``harness.lean.project``).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SKIPPED_TOPS = (".lake", "build", "Generated")


def lean_sources(root: Path) -> list[Path]:
    """The project's source files under ``root``, relative to it, sorted."""
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in SKIPPED_TOPS or any(p.startswith(".") for p in rel.parts):
            continue
        if path.is_file() and not path.is_symlink():
            found.append(rel)
    return found


class BuildWithLean(build_py):
    """``build_py`` that also copies ``lean/`` into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        source = Path(__file__).resolve().parent / "lean"
        files = lean_sources(source)
        if not files:
            raise SystemExit(f"{source}: no Lean project to put in the wheel")
        target = Path(self.build_lib) / "harness" / "lean" / "project"
        for rel in files:
            self.mkpath(str((target / rel).parent))
            self.copy_file(str(source / rel), str(target / rel))


setup(cmdclass={"build_py": BuildWithLean})
