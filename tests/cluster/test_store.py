"""Objects by content hash on the shared folder: atomic writes, hashes checked on read."""

from __future__ import annotations

import pytest

from harness.cluster.store import SharedStore, StoreError, fetch, publish


def test_an_object_round_trips_and_is_stored_once(tmp_path) -> None:
    store = SharedStore(tmp_path)
    ref = store.put(b"shard entries")
    assert store.put(b"shard entries") == ref
    assert fetch(ref) == b"shard entries"
    assert ref.path().is_file() and ref.size == 13
    assert [p.name for p in (tmp_path / "objects").rglob("*")].count(ref.path().name) == 1


def test_a_damaged_object_is_never_used(tmp_path) -> None:
    store = SharedStore(tmp_path)
    ref = store.put(b"complete data")
    ref.path().write_bytes(b"complete da")  # what a killed writer without rename would leave
    with pytest.raises(StoreError, match="does not match its hash"):
        fetch(ref)
    # Writing the object again replaces the damaged copy.
    assert fetch(store.put(b"complete data")) == b"complete data"


def test_a_missing_object_is_an_error_naming_its_path(tmp_path) -> None:
    ref = SharedStore(tmp_path).put(b"x")
    ref.path().unlink()
    with pytest.raises(StoreError, match=str(ref.path())):
        fetch(ref)


def test_results_travel_inline_without_a_shared_folder(tmp_path) -> None:
    assert publish(b"small", None) == b"small"
    ref = publish(b"big", str(tmp_path))
    assert fetch(ref) == b"big" and ref.root == str(tmp_path)
