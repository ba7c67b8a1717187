"""The sealed model file: a Lean project flattened into one file for plain ``lean``."""

from __future__ import annotations

import pytest

from harness.manifest.leanflat import FlattenError, flatten


def write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_modules_come_in_import_order_without_project_imports(tmp_path):
    write(
        tmp_path,
        {
            "Pop.lean": "import Pop.Rules\nimport Pop.Check\n",
            "Pop/Rules.lean": "/-! doc -/\nnamespace Pop\ndef rows := 4\nend Pop\n",
            "Pop/Check.lean": "import Pop.Rules\nnamespace Pop\ndef ok := rows\nend Pop\n",
            "Gen/Main.lean": (
                "/- header -/\nimport Pop\nimport Std.Data\n-- c\ntheorem t : True := trivial\n"
            ),
        },
    )
    text, order = flatten(tmp_path, ["Gen.Main"])
    assert order == ["Pop.Rules", "Pop.Check", "Pop", "Gen.Main"]
    # Imports from outside the project are hoisted to the top, project ones are gone.
    lines = text.splitlines()
    assert "import Std.Data" in lines
    assert not any(ln.startswith("import Pop") for ln in lines)
    assert text.index("def rows") < text.index("def ok") < text.index("theorem t")
    # Each module in its own section, so its `open`s and options stay local.
    assert text.count("\nsection\n") == 4 and text.count("\nend\n") == 4
    # Same input, same bytes.
    assert flatten(tmp_path, ["Gen.Main"])[0] == text


def test_a_cycle_a_missing_module_and_prelude_are_refused(tmp_path):
    write(tmp_path, {"A.lean": "import B\n", "B.lean": "import A\n"})
    with pytest.raises(FlattenError, match="import cycle"):
        flatten(tmp_path, ["A"])
    with pytest.raises(FlattenError, match="module Nope: no file"):
        flatten(tmp_path, ["Nope"])
    write(tmp_path, {"P.lean": "prelude\nimport Init.Core\n"})
    with pytest.raises(FlattenError, match="prelude"):
        flatten(tmp_path, ["P"])


def test_private_names_that_would_clash_are_refused(tmp_path):
    write(
        tmp_path,
        {
            "A.lean": "private def helper := 1\n",
            "B.lean": "import A\nprivate def helper := 2\n",
        },
    )
    with pytest.raises(FlattenError, match="private name helper"):
        flatten(tmp_path, ["B"])


def test_each_module_is_stripped_of_comments_once(tmp_path, monkeypatch):
    # Stripping is the one full scan of a module (hundreds of MB for a big certificate).
    import harness.lean.parse as parse
    import harness.manifest.leanflat as leanflat

    write(
        tmp_path,
        {
            "A.lean": "/- a -/ import B\ndef a := 1\n",
            "B.lean": "-- b\nimport C\ndef b := 2\n",
            "C.lean": "def c := 3\n",
        },
    )
    calls = []
    real = parse.strip_comments

    def counting(source):
        calls.append(source)
        return real(source)

    monkeypatch.setattr(parse, "strip_comments", counting)
    monkeypatch.setattr(leanflat, "strip_comments", counting)
    _, order = flatten(tmp_path, ["A"])
    assert order == ["C", "B", "A"]
    assert len(calls) == 3
