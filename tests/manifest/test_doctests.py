"""The examples in the manifest package's docstrings are tests too."""

import doctest
import importlib
import pkgutil

import pytest

import harness.manifest

MODULES = sorted(
    m.name for m in pkgutil.iter_modules(harness.manifest.__path__, "harness.manifest.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
