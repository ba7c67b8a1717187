"""An independent oracle of docs/rules.md, written without reading ``harness.rules``.

It exists so that differential tests compare the reference engine against a second, plainly
written reading of the rule text: two implementations sharing no code rarely share a bug.
"""
