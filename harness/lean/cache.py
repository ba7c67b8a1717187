"""Remember which rendered modules Lean already accepted, so a re-run checks only changes.

A result is keyed by everything it depends on:

* the module's own bytes (a shard module carries its certificate entries as literals, so
  this is the shard's content hash),
* the keys of the rendered modules it imports (a shard's theorem uses the theorems of the
  lower shards, so a changed lower shard invalidates everything above it),
* the *model hash*: every other file of the Lean project (``Pop/*.lean``, the lakefile, the
  toolchain pin, ``lake-manifest.json``), since the checker and its soundness proof live there,
* the toolchain's identity (exact ``lean --version`` and ``lake --version``),
* :data:`CACHE_VERSION`, bumped whenever what counts as "passed" changes.

Only passing results are stored: a failure is worth seeing again after a fix, and a timeout
or memory-cap hit depends on the limits of that run.

>>> k1 = module_key(b"theorem t : True := trivial", [], "model", "lean 4")
>>> k1 == module_key(b"theorem t : True := trivial", [], "model", "lean 4")
True
>>> k1 == module_key(b"theorem t : True := trivial", [], "model", "lean 5")
False
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

import blake3

from harness.atomic import write_atomic
from harness.bounded import MAX_DOCUMENT, loads_json, read_regular, read_text

CACHE_VERSION = "pop-harness lean result cache 1"
MAX_SOURCE_BYTES = 256 << 20  # one file of a Lean project (a generated shard module: a few MB)

# Files of the Lean project that are not modules but change what the modules mean.
_PROJECT_FILES = ("lakefile.toml", "lakefile.lean", "lean-toolchain", "lake-manifest.json")


def write_json_atomic(path: Path, obj: object) -> None:
    """:func:`write_atomic` of ``obj`` as indented, key-sorted JSON with a final newline."""
    text = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_atomic(path, text.encode("utf-8"))


def _framed(hasher: blake3.blake3, *parts: bytes) -> None:
    # Length-prefix every part so ("ab", "c") and ("a", "bc") hash differently.
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big"))
        hasher.update(part)


def model_hash(project: Path, generated: Path) -> str:
    """Hex blake3 over the Lean project outside the rendered folder and Lake's build folder.

    ``generated`` is the rendered-modules folder (excluded, since each rendered module is keyed
    on its own). Paths are hashed relative to ``project`` so the hash does not depend on where
    the clone lives.
    """
    project = Path(project).resolve()
    generated = Path(generated).resolve()
    files: list[Path] = [project / name for name in _PROJECT_FILES if (project / name).is_file()]
    for path in project.rglob("*.lean"):
        rel_parts = path.relative_to(project).parts
        if rel_parts[0] in {".lake", "lake-packages", "build"}:
            continue
        if path.resolve().is_relative_to(generated):
            continue
        files.append(path)
    hasher = blake3.blake3()
    _framed(hasher, CACHE_VERSION.encode())
    for path in sorted(set(files)):
        data = read_regular(path, MAX_SOURCE_BYTES, "Lean project file")
        _framed(hasher, path.relative_to(project).as_posix().encode(), data)
    return hasher.hexdigest()


def module_key(source: bytes, dep_keys: Iterable[str], model: str, toolchain_identity: str) -> str:
    """Hex blake3 key of one rendered module's result (see the module docstring)."""
    hasher = blake3.blake3()
    _framed(hasher, CACHE_VERSION.encode(), toolchain_identity.encode(), model.encode(), source)
    for key in sorted(dep_keys):
        _framed(hasher, key.encode())
    return hasher.hexdigest()


class ResultCache:
    """A JSON file mapping module keys to the passing result records they produced.

    A missing file is an empty cache. An unreadable one is reported on stderr and treated
    as empty (it only ever saves work; starting over is always correct); :meth:`save`
    then replaces it.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "cache.json"
    >>> cache = ResultCache(path)
    >>> cache.put("k", {"status": "passed"}); cache.save()
    >>> ResultCache(path).get("k")
    {'status': 'passed'}
    """

    FORMAT = "pop-harness/lean-cache/1"

    def __init__(self, path: Path | None) -> None:
        self.path = None if path is None else Path(path)
        self._entries: dict[str, dict] = {}
        if self.path is not None and self.path.exists():
            try:
                data = loads_json(read_text(self.path, MAX_DOCUMENT, "result cache"))
                if data.get("format") != self.FORMAT or not isinstance(data.get("entries"), dict):
                    raise ValueError("not a pop-harness Lean result cache")
                self._entries = data["entries"]
            except (OSError, ValueError, AttributeError) as exc:
                print(f"warning: ignoring unreadable cache {self.path}: {exc}", file=sys.stderr)
                self._entries = {}

    def get(self, key: str) -> dict | None:
        entry = self._entries.get(key)
        return dict(entry) if isinstance(entry, dict) else None

    def put(self, key: str, record: dict) -> None:
        self._entries[key] = dict(record)

    def __len__(self) -> int:
        return len(self._entries)

    def save(self) -> None:
        """Write the cache atomically (no-op for a cache without a file)."""
        if self.path is not None:
            write_json_atomic(self.path, {"format": self.FORMAT, "entries": self._entries})
