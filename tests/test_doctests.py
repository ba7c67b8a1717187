"""The examples in every docstring of the package are tests too."""

import doctest
import importlib
import pkgutil

import pytest

import harness

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(harness.__path__, "harness.")
    if m.name != "harness.__main__"  # running it would parse pytest's argv
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
