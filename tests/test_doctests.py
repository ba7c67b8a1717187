"""The examples in the package's docstrings are tests too: the one runner for all of them.

Every module with an example runs here, and must run at least one; a module without one is
left out rather than counted as a test that cannot fail.
"""

import doctest
import importlib
import pkgutil

import pytest

import harness

ALL = sorted(
    m.name
    for m in pkgutil.walk_packages(harness.__path__, "harness.")
    if m.name != "harness.__main__"  # running it would parse pytest's argv
)


def _examples(name: str) -> int:
    finder = doctest.DocTestFinder()
    return sum(len(t.examples) for t in finder.find(importlib.import_module(name)))


WITH_EXAMPLES = [name for name in ALL if _examples(name)]


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
