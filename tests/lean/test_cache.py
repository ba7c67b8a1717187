"""Cache keys and the cache file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.lean.cache import ResultCache, model_hash, module_key, write_atomic

from .standin.world import make_project


def test_module_key_depends_on_every_input() -> None:
    base = module_key(b"src", ["k1", "k2"], "model", "lean")
    assert module_key(b"src", ["k2", "k1"], "model", "lean") == base  # import order is no input
    assert module_key(b"src!", ["k1", "k2"], "model", "lean") != base
    assert module_key(b"src", ["k1", "k3"], "model", "lean") != base
    assert module_key(b"src", ["k1"], "model", "lean") != base
    assert module_key(b"src", ["k1", "k2"], "model2", "lean") != base
    assert module_key(b"src", ["k1", "k2"], "model", "lean2") != base


def test_model_hash_covers_the_project_but_not_rendered_or_build_files(tmp_path: Path) -> None:
    project = tmp_path / "lean"
    make_project(project)
    first = model_hash(project, project / "Generated")
    # Rendered modules and Lake's build folder do not change the model.
    (project / "Generated" / "Shard0001.lean").write_text("changed")
    (project / ".lake" / "build").mkdir(parents=True)
    (project / ".lake" / "build" / "X.lean").write_text("x")
    assert model_hash(project, project / "Generated") == first
    # The same project elsewhere hashes the same.
    other = tmp_path / "elsewhere" / "lean"
    make_project(other)
    assert model_hash(other, other / "Generated") == first
    # Model sources, the lakefile and the pin do.
    for rel, text in [
        ("Pop/Rules.lean", "-- edited"),
        ("lakefile.toml", "# edited"),
        ("lean-toolchain", "leanprover/lean4:v4.23.0"),
        ("Pop/New.lean", "def x := 1"),
    ]:
        fresh = tmp_path / f"p{abs(hash(rel))}"
        make_project(fresh)
        (fresh / rel).write_text(text)
        assert model_hash(fresh, fresh / "Generated") != first, rel


def test_cache_roundtrip_and_atomic_file(tmp_path: Path) -> None:
    path = tmp_path / "out" / "cache.json"
    cache = ResultCache(path)
    assert len(cache) == 0 and not path.exists()
    cache.put("abc", {"status": "passed", "module": "M"})
    cache.save()
    data = json.loads(path.read_text())
    assert data["format"] == ResultCache.FORMAT and data["entries"]["abc"]["module"] == "M"
    assert list(path.parent.iterdir()) == [path], "no temporary file left behind"
    assert ResultCache(path).get("abc") == {"status": "passed", "module": "M"}
    assert ResultCache(path).get("nope") is None


@pytest.mark.parametrize("content", ["{not json", '{"format": "other", "entries": {}}', "[]"])
def test_unreadable_cache_is_ignored_with_a_warning(
    tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cache.json"
    path.write_text(content)
    cache = ResultCache(path)
    assert len(cache) == 0
    assert "ignoring unreadable cache" in capsys.readouterr().err
    cache.put("k", {"status": "passed"})
    cache.save()
    assert ResultCache(path).get("k") == {"status": "passed"}


def test_write_atomic_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("old")

    with pytest.raises(TypeError):
        write_atomic(path, object())  # type: ignore[arg-type]
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
