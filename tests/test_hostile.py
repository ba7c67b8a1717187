"""Hostile input across the commands, as a stranger would send it: lock files that are links
or FIFOs, nesting bombs whose strings are full of escaped quotes, readers handed a FIFO or a
link to ``/dev/zero``, a ``--scheduler`` that is not Dask, a deeply nested
``--cluster-config``, folders that are files, absurd seeds and shard names.

Each case runs ``python -m harness`` in a child process under a memory cap (``RLIMIT_AS``)
and a deadline, and must end with the documented exit code and one line that names the
input, leaving no file outside the output folder touched.
"""

from __future__ import annotations

import os
import resource
import shutil
import socket
import subprocess
import threading
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.harness_cli import run_harness

REPO = Path(__file__).resolve().parents[1]
RS = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
SMALL = "pop1-3x3-c8-torus-continue-binempty-king-nozero-nojump"
DRAW = "pop1-3x4-c3-torus-continue-binempty-king-nozero-nojump"
PUBLISHED_KEY = REPO / "manifests" / "keys" / "c94b13b79e960cc6.pub"
MEMORY_CAP = 3 << 30  # bytes of address space each child may take
DEADLINE = 60  # seconds; every case below ends in about one

# An unterminated string of escaped quotes behind 65 brackets: a backtracking string regex
# takes minutes over these 200 KB, a linear scan milliseconds.
ESCAPED_QUOTES = "[" * 65 + '"' + '\\"' * 100_000


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def harness(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, POP_HARNESS_LOG_DIR=str(cwd / "logs"))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return run_harness(*args, cwd=cwd, env=env, timeout=DEADLINE, stdin=stdin, preexec_fn=_cap)


def refused(done: subprocess.CompletedProcess, code: int, *named: str) -> str:
    """The one error line of ``done``, checked: exit ``code``, each of ``named`` in it."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code, done.stderr
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    for name in named:
        assert name in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def cert(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cert") / "cert"
    done = harness("certify", RS, "--out", str(out), cwd=out.parent)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.fixture
def zero(tmp_path) -> Path:
    path = tmp_path / "zero"
    path.symlink_to("/dev/zero")
    return path


@pytest.fixture
def small_manifests(tmp_path) -> Path:
    """A published folder of one small result: its record, envelope, archive and the keys."""
    folder = tmp_path / "manifests"
    shutil.copytree(REPO / "manifests" / "keys", folder / "keys")
    for suffix in (".yaml", ".dsse.json"):
        shutil.copy(REPO / "manifests" / f"{SMALL}{suffix}", folder)
    (folder / "archives").mkdir()
    for archive in (REPO / "manifests" / "archives").glob(f"{SMALL}-*.zip"):
        shutil.copy(archive, folder / "archives")
    return folder


# --- locks --------------------------------------------------------------------------------


def test_a_lock_file_that_is_a_link_is_refused_and_its_target_kept(tmp_path):
    precious = tmp_path / "precious"
    precious.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".cert.lock").symlink_to(precious)
    done = harness("certify", RS, "--out", str(out / "cert"), cwd=tmp_path)
    refused(done, 2, str(out / ".cert.lock"), "symbolic link")
    assert precious.read_text() == "keep me\n"
    assert not (out / "cert").exists()


def test_a_lock_file_that_is_a_fifo_is_refused_at_once(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / f".{RS}.lock")
    done = harness("verify", RS, "--work", str(work), cwd=tmp_path)
    refused(done, 2, f".{RS}.lock", "not a regular file")
    assert sorted(p.name for p in work.iterdir()) == [f".{RS}.lock"]


# --- the nesting scan ------------------------------------------------------------------


def test_check_refuses_an_index_of_escaped_quotes_at_once(cert, tmp_path):
    hostile = tmp_path / "cert"
    shutil.copytree(cert, hostile)
    (hostile / "index.yaml").write_text(ESCAPED_QUOTES)
    done = harness("check", str(hostile), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "nested deeper than 64 levels" in done.stdout + done.stderr


def test_manifest_verify_refuses_an_envelope_of_escaped_quotes_at_once(tmp_path):
    (tmp_path / "m.yaml").write_text("kind: verify\n")
    (tmp_path / "m.dsse.json").write_text(ESCAPED_QUOTES)
    done = harness("manifest", "verify", "m.yaml", "--key", str(PUBLISHED_KEY), cwd=tmp_path)
    refused(done, 2, "m.yaml", "nested deeper than 64 levels")


def test_audit_fails_an_archive_whose_envelope_is_escaped_quotes(tmp_path, small_manifests):
    (archive,) = (small_manifests / "archives").glob("*.zip")
    hostile = tmp_path / "hostile.zip"
    with zipfile.ZipFile(archive) as zin, zipfile.ZipFile(hostile, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("MANIFEST.dsse.json"):
                data = ESCAPED_QUOTES.encode()
            zout.writestr(info.filename, data)
    done = harness("audit", str(hostile), "--out", str(tmp_path / "audit"), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "FAIL" in done.stdout


def test_the_site_builds_beside_an_envelope_of_escaped_quotes(tmp_path, small_manifests):
    (small_manifests / f"{SMALL}.dsse.json").write_text(ESCAPED_QUOTES)
    done = harness("site", "--out", "site", "--manifests", str(small_manifests), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    replay = (tmp_path / "site" / f"replay-{SMALL}.html").read_text()
    assert "not checked: the key it names (?…) is not among the published keys" in replay


def test_a_long_rules_step_line_of_escaped_quotes_is_answered_at_once(tmp_path):
    line = '{"ruleset": "' + RS + '", "z": ' + ESCAPED_QUOTES[: 1 << 15] + "\n"
    done = harness("rules", "step", cwd=tmp_path, stdin=line)
    assert "nested deeper than 64 levels" in done.stdout, done.stdout[:300]


# --- readers handed a FIFO or a link to /dev/zero ------------------------------------


def _published(rs: str) -> str:
    return str(REPO / "manifests" / f"{rs}.yaml")


@pytest.mark.parametrize("special", ["fifo", "zero"])
@pytest.mark.parametrize(
    "command",
    ["manifest verify --key", "audit --key", "audit --expect", "cluster-config", "render"],
)
def test_a_reader_refuses_a_fifo_or_a_link_by_name(command, special, request, tmp_path, cert):
    path = str(request.getfixturevalue(special))
    archive = str(next((REPO / "manifests" / "archives").glob(f"{SMALL}-*.zip")))
    argv = {
        "manifest verify --key": ["manifest", "verify", _published(SMALL), "--key", path],
        "audit --key": ["audit", archive, "--key", path, "--out", "audit"],
        "audit --expect": ["audit", archive, "--expect", path, "--out", "audit"],
        "cluster-config": ["solve", SMALL, "--method", "compact", "--cluster-config", path],
        "render": ["render", str(cert), "--out", "Gen", "--corpus", path],
    }[command]
    done = harness(*argv, cwd=tmp_path)
    why = "FIFO" if special == "fifo" else "symbolic link"
    refused(done, 2, path, why)
    assert not (tmp_path / "audit").exists() and not (tmp_path / "Gen").exists()


def test_a_manifest_that_is_a_fifo_is_named_as_such(tmp_path):
    os.mkfifo(tmp_path / "m.yaml")
    shutil.copy(REPO / "manifests" / f"{SMALL}.dsse.json", tmp_path / "m.dsse.json")
    done = harness("manifest", "verify", "m.yaml", "--key", str(PUBLISHED_KEY), cwd=tmp_path)
    refused(done, 2, "m.yaml", "FIFO")


def test_the_site_passes_over_a_published_key_that_is_a_fifo(tmp_path, small_manifests):
    (small_manifests / "keys" / PUBLISHED_KEY.name).unlink()
    os.mkfifo(small_manifests / "keys" / PUBLISHED_KEY.name)
    done = harness("site", "--out", "site", "--manifests", str(small_manifests), cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_the_site_refuses_a_local_manifest_that_links_to_dev_zero(tmp_path, small_manifests):
    run = tmp_path / "out" / "verify" / RS
    run.mkdir(parents=True)
    for name in ("manifest.yaml", "manifest.dsse.json"):
        (run / name).symlink_to("/dev/zero")
    done = harness(
        "site", "--out", "site", "--include-local", "--manifests", str(small_manifests),
        cwd=tmp_path,
    )  # fmt: skip
    line = refused(done, 2, f"{RS}/manifest.yaml", "symbolic link")
    assert line.count("manifest.yaml") == 1
    assert not (tmp_path / "site").exists()


# --- a scheduler that is not Dask ------------------------------------------------------


@pytest.fixture
def listener():
    """A TCP listener on 127.0.0.1 that accepts and then says ``reply`` (or nothing)."""
    servers = []

    def start(reply: bytes | None) -> str:
        server = socket.create_server(("127.0.0.1", 0))
        servers.append(server)

        def serve() -> None:
            held = []
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                held.append(conn)
                if reply is not None:
                    conn.sendall(reply)

        threading.Thread(target=serve, daemon=True).start()
        return f"tcp://127.0.0.1:{server.getsockname()[1]}"

    yield start
    for server in servers:
        server.close()


@pytest.mark.parametrize(
    "reply, why",
    [
        (None, "no Dask scheduler answered within"),
        (b"\xff" * 64 + b"HTTP/1.1 200 OK\r\n\r\n", "is not a Dask scheduler"),
    ],
)
def test_a_scheduler_that_is_not_dask_is_one_line(listener, reply, why, tmp_path):
    address = listener(reply)
    done = harness("solve", SMALL, "--method", "compact", "--scheduler", address, cwd=tmp_path)
    refused(done, 2, f"--scheduler {address}", why)


def test_an_in_process_scheduler_address_names_the_option(tmp_path):
    done = harness("solve", SMALL, "--scheduler", "inproc://x", cwd=tmp_path)
    assert done.returncode == 2
    assert "argument --scheduler: 'inproc://x': the scheme must be tcp or tls" in done.stderr


# --- deep YAML -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "kind: slurm\nx: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "kind: slurm\n"
        + "".join("  " * i + f"k{i}:\n" for i in range(1000))
        + "  " * 1000
        + "v: 1\n",
    ],
    ids=["flow", "block"],
)
def test_a_deeply_nested_cluster_config_is_one_line(text, tmp_path):
    (tmp_path / "deep.yaml").write_text(text)
    done = harness(
        "solve", SMALL, "--method", "compact", "--cluster-config", "deep.yaml", cwd=tmp_path
    )
    refused(done, 2, "--cluster-config deep.yaml", "nested deeper than 64 levels")


# --- arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["verify", "results"])
def test_manifests_that_are_a_file_are_refused_before_any_work(command, tmp_path):
    (tmp_path / "manifests").write_text("not a folder\n")
    done = harness(command, "--work", "w", "--manifests", "manifests", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "argument --manifests: 'manifests' is not a folder" in done.stderr
    assert not (tmp_path / "w").exists()


def test_verify_says_when_there_is_no_published_record_to_compare_with(tmp_path):
    done = harness("verify", RS, "--work", "w", "--manifests", "gone", cwd=tmp_path)
    assert done.returncode in (0, 3), done.stderr  # 3: INCOMPLETE where Lean is missing
    said = done.stdout + done.stderr
    assert "no published record to compare with: none at gone/ (no such folder)" in said
    assert "REPRODUCED" not in said and not (tmp_path / "gone").exists()


def test_a_seed_of_5000_digits_is_quoted_in_part(tmp_path):
    done = harness("corpus", "--out", "c", "--seed", "9" * 5000, cwd=tmp_path)
    assert done.returncode == 2
    assert "(5,000 characters)" in done.stderr and "9" * 100 not in done.stderr
    assert not (tmp_path / "c").exists()


def test_a_nul_in_a_nonwin_shard_name_is_a_rejected_certificate(tmp_path):
    out = tmp_path / "cert"
    assert harness("certify", DRAW, "--out", str(out), cwd=tmp_path).returncode == 0
    index = yaml.safe_load((out / "index.yaml").read_text())
    index["sets"][0]["shards"][0]["file"] = "nonwin\0.jsonl.gz"
    (out / "index.yaml").write_text(yaml.safe_dump(index, sort_keys=False))
    done = harness("check", str(out), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "sets[0].shards[0]: file 'nonwin\\x00.jsonl.gz' is not a plain file name" in (
        done.stdout + done.stderr
    )
