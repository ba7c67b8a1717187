"""The layout check (tools/check_layout.py) finds what it is for, and passes on the package."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_layout", REPO / "tools" / "check_layout.py")
check_layout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_layout)


def _package(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "pkg"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_the_package_keeps_its_layout_rules():
    assert check_layout.check(REPO / "harness") == []


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg.b import thing\n",
            "b.py": "def thing():\n    from pkg import a\n    return a\n",
        },
    )
    assert check_layout.check(pkg) == ["import cycle among: pkg.a, pkg.b"]


def test_a_private_name_from_another_module_is_found(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "def _helper():\n    pass\n",
            "b.py": "from .a import _helper\n",
        },
    )
    (problem,) = check_layout.check(pkg)
    assert problem.endswith("b.py:1: imports the private name _helper from pkg.a")


def test_a_module_over_800_lines_is_found(tmp_path):
    pkg = _package(
        tmp_path, {"__init__.py": "", "big.py": "x = 1\n" * 801, "ok.py": "y = 1\n" * 800}
    )
    (problem,) = check_layout.check(pkg)
    assert problem.endswith("big.py: 801 lines, more than 800: split it by idea")


def test_a_package_init_may_import_its_own_modules(tmp_path):
    pkg = _package(
        tmp_path,
        {"__init__.py": "from pkg.a import f\n", "a.py": "import pkg\n\ndef f():\n    pass\n"},
    )
    assert check_layout.check(pkg) == []
