"""The shared option group and the cluster configuration file."""

from __future__ import annotations

import argparse
import re

import pytest

from harness.cli import build_parser
from harness.cluster.options import (
    ClusterSpec,
    add_cluster_arguments,
    cluster_spec,
    machine_cores,
    scheduler_address,
)
from harness.cluster.session import load_config
from harness.errors import HarnessError


def parse(*argv: str) -> ClusterSpec:
    parser = argparse.ArgumentParser()
    add_cluster_arguments(parser)
    return cluster_spec(parser.parse_args(list(argv)))


def test_no_option_means_this_machine_as_before() -> None:
    assert parse() == ClusterSpec() and not parse().requested


def test_workers_without_a_number_means_the_cores() -> None:
    assert parse("--workers").workers == machine_cores()
    assert parse("--workers", "2").workers == 2


def test_shared_alone_asks_for_a_local_cluster() -> None:
    spec = parse("--shared", "/tmp/x")
    assert spec.requested and spec.workers is None


@pytest.mark.parametrize(
    "argv",
    [["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], ["--workers", "0"]],
)
def test_bad_combinations_are_usage_errors(argv, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        parse(*argv)
    assert exc.value.code == 2


@pytest.mark.parametrize("command", ["lean", "certify", "results"])
def test_every_many_piece_command_has_the_same_group(command) -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {o for a in sub.choices[command]._actions for o in a.option_strings}
    assert {"--workers", "--scheduler", "--cluster-config", "--shared"} <= flags


def test_a_slurm_config_names_kind_size_and_passes_the_rest(tmp_path) -> None:
    path = tmp_path / "slurm.yaml"
    path.write_text("kind: slurm\njobs: 4\ncores: 16\nmemory: 64GB\nqueue: compute\n")
    kind, kwargs, scale = load_config(path)
    assert (kind, scale) == ("slurm", {"jobs": 4})
    assert kwargs == {"cores": 16, "memory": "64GB", "queue": "compute"}


def test_the_slurm_job_script_asks_for_what_the_file_says(tmp_path) -> None:
    from dask_jobqueue import SLURMCluster  # the cluster extra, which the tests install

    path = tmp_path / "slurm.yaml"
    path.write_text("kind: slurm\ncores: 8\nprocesses: 8\nmemory: 32GB\nqueue: compute\n")
    _, kwargs, _ = load_config(path)
    with SLURMCluster(**kwargs, scheduler_options={"host": "127.0.0.1"}) as cluster:
        script = cluster.job_script()
    assert "#SBATCH -p compute" in script and "--nworkers 8" in script


@pytest.mark.parametrize(
    "text, message",
    [
        ("kind: kubernetes\n", "kind 'kubernetes'"),
        ("cores: 4\n", "kind '(missing)'"),
        ("kind: pbs\njobs: 0\n", "jobs must be a positive"),
        ("- a list\n", "expected a mapping"),
    ],
)
def test_bad_config_files_are_one_line_errors(tmp_path, text, message) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(HarnessError, match=re.escape(message)):
        load_config(path)


@pytest.mark.parametrize(
    "given, address",
    [
        ("10.0.0.5:8786", "tcp://10.0.0.5:8786"),
        ("tcp://node-1:8786", "tcp://node-1:8786"),
        ("tls://[::1]:8786", "tls://[::1]:8786"),
    ],
)
def test_a_scheduler_address_is_tcp_or_tls_with_a_port(given, address):
    assert scheduler_address(given) == address


@pytest.mark.parametrize(
    "given, why",
    [
        ("inproc://x", "the scheme must be tcp or tls"),
        ("ucx://h:1", "the scheme must be tcp or tls"),
        ("tcp://h", "not an address"),
        ("tcp://h:0", "not an address"),
        ("tcp://h:99999", "not an address"),
        ("tcp://:8786", "not an address"),
        ("tcp://h:8786/path", "not an address"),
        ("h" * 5000, "(5,000 characters)"),
    ],
    ids=lambda value: value[:20],
)
def test_a_bad_scheduler_address_is_refused_by_the_parser(given, why):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(why)):
        scheduler_address(given)
