import os

import pytest

from harness.atomic import atomic_file, staging_dir, write_atomic


def test_a_failed_write_leaves_the_old_file_and_no_litter(tmp_path):
    target = tmp_path / "result.json"
    write_atomic(target, b"good")
    with pytest.raises(RuntimeError):
        with atomic_file(target) as fh:
            fh.write(b"half")
            raise RuntimeError("crash mid-write")
    assert target.read_bytes() == b"good"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_exclusive_refuses_to_replace_and_mode_is_applied(tmp_path):
    key = tmp_path / "key.pem"
    write_atomic(key, b"secret", mode=0o600, exclusive=True)
    assert key.stat().st_mode & 0o777 == 0o600
    with pytest.raises(FileExistsError):
        write_atomic(key, b"other", exclusive=True)
    assert key.read_bytes() == b"secret"
    assert [p.name for p in tmp_path.iterdir()] == ["key.pem"]


def test_a_failed_folder_build_keeps_the_old_folder(tmp_path):
    out = tmp_path / "cert"
    with staging_dir(out) as tmp:
        (tmp / "index.yaml").write_text("v1")
    assert out.stat().st_mode & 0o777 == 0o777 & ~_umask()
    with pytest.raises(RuntimeError):
        with staging_dir(out) as tmp:
            (tmp / "index.yaml").write_text("v2, half")
            raise RuntimeError("crash mid-build")
    assert (out / "index.yaml").read_text() == "v1"
    assert [p.name for p in tmp_path.iterdir()] == ["cert"]
    with staging_dir(out) as tmp:
        (tmp / "index.yaml").write_text("v2")
    assert (out / "index.yaml").read_text() == "v2"
    assert [p.name for p in tmp_path.iterdir()] == ["cert"]


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask
