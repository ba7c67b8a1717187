"""The examples in the rules package's docstrings are tests too."""

import doctest
import importlib
import pkgutil

import pytest

import harness.rules

MODULES = sorted(m.name for m in pkgutil.iter_modules(harness.rules.__path__, "harness.rules."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
