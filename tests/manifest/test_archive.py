"""The zip layer: hostile structures refused before extraction; deterministic writing."""

from __future__ import annotations

import io
import stat
import struct
import warnings
import zipfile

import pytest

from harness.manifest.archive import (
    ArchiveError,
    IntegrityError,
    Limits,
    SafeArchive,
    write_deterministic,
)


def make_zip(entries, compression=zipfile.ZIP_DEFLATED) -> bytes:
    """A zip of (name or ZipInfo, bytes) pairs, written as given (no safety checks)."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names
        with zipfile.ZipFile(buf, "w", compression) as zf:
            for name, data in entries:
                zf.writestr(name, data)
    return buf.getvalue()


def open_bytes(data: bytes, limits: Limits | None = None) -> SafeArchive:
    return SafeArchive(io.BytesIO(data), limits)


def refused(data: bytes, match: str, limits: Limits | None = None) -> None:
    with pytest.raises(ArchiveError, match=match):
        open_bytes(data, limits)


@pytest.mark.parametrize(
    "name, match",
    [
        ("../evil.txt", r"climbs out"),
        ("a/../../evil.txt", r"climbs out"),
        ("/etc/cron.d/evil", r"absolute path"),
        ("C:/Windows/evil", r"absolute path"),
        ("a\\..\\evil", r"backslash"),
        ("a//b", r"empty or '\.'"),
        ("./a", r"empty or '\.'"),
        ("a\x07b", r"control character"),
    ],
)
def test_bad_member_names_are_refused(name, match):
    refused(make_zip([("ok.txt", b"fine"), (name, b"x")]), match)


def test_symlinks_are_refused():
    info = zipfile.ZipInfo("link")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    refused(make_zip([(info, b"/etc/passwd")]), "symbolic link")


def test_devices_and_fifos_are_refused():
    info = zipfile.ZipInfo("fifo")
    info.create_system = 3
    info.external_attr = (stat.S_IFIFO | 0o644) << 16
    refused(make_zip([(info, b"")]), "not a regular file")


def test_duplicate_names_are_refused():
    refused(make_zip([("a.txt", b"1"), ("a.txt", b"2")]), "duplicate name")
    refused(make_zip([("README", b"1"), ("readme", b"2")]), r"up to case")
    refused(make_zip([("a", b"file"), ("a/b", b"under a file")]), "is also a file")


def test_a_highly_compressed_member_is_refused_as_a_bomb():
    bomb = make_zip([("zeros.bin", bytes(16 << 20))])
    assert len(bomb) < 100_000
    refused(bomb, r"compression ratio \d+:1")


def test_size_limits_hold_for_members_totals_and_counts():
    data = make_zip([("a", b"x" * 2000), ("b", b"y" * 2000)], zipfile.ZIP_STORED)
    refused(data, "over 1000", Limits(max_member_bytes=1000))
    refused(data, "more than 3000 bytes", Limits(max_total_bytes=3000))
    refused(data, "2 members, over 1", Limits(max_members=1))


def _central_offsets(data: bytes):
    """(offset of each central directory record, its name)."""
    out, pos = [], data.find(b"PK\x01\x02")
    while pos >= 0:
        name_len = struct.unpack_from("<H", data, pos + 28)[0]
        out.append((pos, data[pos + 46 : pos + 46 + name_len]))
        pos = data.find(b"PK\x01\x02", pos + 4)
    return out


def test_overlapping_members_are_refused():
    data = bytearray(make_zip([("a", b"A" * 500), ("b", b"B" * 500)], zipfile.ZIP_STORED))
    (_, _), (second, name) = _central_offsets(bytes(data))
    assert name == b"b"
    struct.pack_into("<L", data, second + 42, 0)  # b's data now starts where a's does
    refused(bytes(data), "overlap")


def test_a_header_that_understates_the_size_is_corruption():
    data = bytearray(make_zip([("a", b"A" * 500)], zipfile.ZIP_STORED))
    ((record, _),) = _central_offsets(bytes(data))
    struct.pack_into("<L", data, record + 24, 100)  # uncompressed size: 100 instead of 500
    with open_bytes(bytes(data)) as ar, pytest.raises(IntegrityError):
        ar.read("a")


def test_encryption_and_other_compressors_are_refused():
    data = bytearray(make_zip([("secret", b"x")]))
    ((record, _),) = _central_offsets(bytes(data))
    struct.pack_into("<H", data, record + 8, 0x1)  # general purpose flag: encrypted
    struct.pack_into("<H", data, 6, 0x1)  # the same in the local header
    refused(bytes(data), "encrypted")
    refused(make_zip([("b.txt", b"x" * 100)], zipfile.ZIP_BZIP2), "compression method")


def test_a_bit_flip_in_member_data_is_an_integrity_error():
    data = bytearray(make_zip([("a.txt", b"hello world " * 20)], zipfile.ZIP_STORED))
    data[data.find(b"hello") + 3] ^= 0x01
    with open_bytes(bytes(data)) as ar, pytest.raises(IntegrityError, match="a.txt"):
        ar.read("a.txt")


def test_truncated_or_foreign_files_are_not_archives():
    data = make_zip([("a.txt", b"x" * 1000)])
    refused(data[: len(data) // 2], "not a readable zip")
    refused(b"just some text, not a zip at all", "not a readable zip")


def test_extract_all_writes_only_below_a_fresh_folder(tmp_path):
    data = make_zip([("top/a.txt", b"1"), ("top/sub/b.txt", b"2")])
    dest = tmp_path / "dest"
    with open_bytes(data) as ar:
        ar.extract_all(dest)
        with pytest.raises(FileExistsError):
            ar.extract_all(dest)  # never into a folder that already exists
    found = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert found == ["dest/top/a.txt", "dest/top/sub/b.txt"]


def test_write_deterministic_is_byte_stable_and_clean():
    files = {"z/last.txt": b"z", "a/first.txt": b"a" * 1000, "m.bin": bytes(range(256))}
    one, two = io.BytesIO(), io.BytesIO()
    write_deterministic(one, files)
    write_deterministic(two, dict(reversed(list(files.items()))))
    assert one.getvalue() == two.getvalue()
    with zipfile.ZipFile(io.BytesIO(one.getvalue())) as zf:
        infos = zf.infolist()
        assert [i.filename for i in infos] == sorted(files)
        for info in infos:
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.external_attr >> 16 == stat.S_IFREG | 0o644
            assert info.extra == b""
    with SafeArchive(io.BytesIO(one.getvalue())) as ar:
        assert {n: ar.read(n) for n in ar.names} == files


def test_write_deterministic_refuses_bad_names():
    with pytest.raises(ArchiveError, match="climbs out"):
        write_deterministic(io.BytesIO(), {"../x": b""})
