"""Finding elan, lake and lean; their versions; the pinned toolchain."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.lean.toolchain import (
    EXIT_NO_TOOLCHAIN,
    NoToolchainError,
    discover,
    parse_lean_version,
    read_pin,
    toolchain_dir_name,
)

from .standin.world import PIN, LeanWorld, world_fixture, write_shim  # noqa: F401


def test_found_on_path_with_versions(world: LeanWorld) -> None:
    tc = discover(world.project, env=world.env)
    assert tc.lake == world.bin / "lake" and tc.lean == world.bin / "lean"
    assert tc.elan is None and tc.elan_version_line is None
    assert tc.lean_version == "4.22.0"
    assert tc.lean_version_line.startswith("Lean (version 4.22.0,")
    assert tc.lake_version_line.startswith("Lake version 5.0.0")
    assert tc.pinned == PIN and tc.matches_pin() is True
    info = tc.to_json()
    assert info["pinned"] == PIN and info["paths"]["lake"] == str(world.bin / "lake")


def test_found_in_elan_home_when_not_on_path(world: LeanWorld, tmp_path: Path) -> None:
    elan = tmp_path / "elan-home"
    (elan / "bin").mkdir(parents=True)
    (elan / "toolchains" / toolchain_dir_name(PIN)).mkdir(parents=True)
    for tool in ("lake", "lean", "elan"):
        write_shim(elan / "bin", tool)
    env = {**world.env, "PATH": "/usr/bin:/bin", "ELAN_HOME": str(elan)}
    tc = discover(world.project, env=env)
    assert tc.lake == elan / "bin" / "lake"
    assert tc.elan == elan / "bin" / "elan"
    assert tc.elan_version_line.startswith("elan ")


def test_default_elan_home_is_under_home(world: LeanWorld) -> None:
    home = Path(world.env["HOME"])
    (home / ".elan" / "bin").mkdir(parents=True)
    (home / ".elan" / "toolchains" / toolchain_dir_name(PIN)).mkdir(parents=True)
    for tool in ("lake", "lean", "elan"):
        write_shim(home / ".elan" / "bin", tool)
    tc = discover(world.project, env={**world.env, "PATH": "/usr/bin:/bin"})
    assert tc.lean == home / ".elan" / "bin" / "lean"


def test_elan_without_the_pinned_toolchain(world: LeanWorld) -> None:
    write_shim(world.bin, "elan")
    with pytest.raises(NoToolchainError) as err:
        discover(world.project, env=world.env)
    message = str(err.value)
    assert "\n" not in message
    assert f"elan toolchain install {PIN}" in message
    assert err.value.exit_code == EXIT_NO_TOOLCHAIN == 4


def test_elan_listing_counts_as_installed(world: LeanWorld, tmp_path: Path) -> None:
    # A toolchain elan lists, even if its folder is named differently, is installed.
    write_shim(world.bin, "elan")
    elan_home = tmp_path / "eh"
    (elan_home / "toolchains" / "leanprover--lean4---v4.22.0").mkdir(parents=True)
    tc = discover(world.project, env={**world.env, "ELAN_HOME": str(elan_home)})
    assert tc.elan is not None


def test_no_toolchain_at_all(world: LeanWorld, tmp_path: Path) -> None:
    env = {**world.env, "PATH": str(tmp_path / "empty"), "ELAN_HOME": str(tmp_path / "none")}
    with pytest.raises(NoToolchainError) as err:
        discover(world.project, env=env)
    message = str(err.value)
    assert message.startswith("no Lean toolchain: lake and lean not found")
    assert "elan-init.sh" in message and f"elan toolchain install {PIN}" in message
    assert "\n" not in message


def test_only_lean_missing(world: LeanWorld) -> None:
    (world.bin / "lean").unlink()
    with pytest.raises(NoToolchainError, match="lean not found"):
        discover(world.project, env={**world.env, "PATH": str(world.bin)})


def test_version_mismatch_is_reported(world: LeanWorld) -> None:
    tc = discover(world.project, env={**world.env, "POP_STANDIN_VERSION": "4.21.0"})
    assert tc.lean_version == "4.21.0" and tc.matches_pin() is False


def test_broken_lean_is_no_toolchain(world: LeanWorld) -> None:
    (world.bin / "lean").write_text(
        "#!/bin/sh\necho 'lean: cannot load libleanshared' >&2\nexit 1\n"
    )
    with pytest.raises(NoToolchainError, match="cannot load libleanshared"):
        discover(world.project, env=world.env)


def test_unreadable_version_is_no_toolchain(world: LeanWorld) -> None:
    (world.bin / "lean").write_text("#!/bin/sh\necho 'something else'\n")
    with pytest.raises(NoToolchainError, match="cannot read a Lean version"):
        discover(world.project, env=world.env)


def test_pin_file(tmp_path: Path) -> None:
    assert read_pin(tmp_path) is None
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.34.0\n")
    assert read_pin(tmp_path) == "leanprover/lean4:v4.34.0"
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.34.0\nextra line\n")
    with pytest.raises(ValueError, match="lean-toolchain: expected one toolchain name"):
        read_pin(tmp_path)
    (tmp_path / "lean-toolchain").write_text("not a toolchain!\n")
    with pytest.raises(ValueError, match="lean-toolchain"):
        read_pin(tmp_path)


def test_parse_lean_version_forms() -> None:
    assert (
        parse_lean_version(
            "Lean (version 4.9.0, x86_64-unknown-linux-gnu, commit 8f9843a4a5fe, Release)"
        )
        == "4.9.0"
    )
    assert (
        parse_lean_version("Lean (version 4.24.0-rc1, arm64-apple-darwin, commit 1, Release)")
        == "4.24.0-rc1"
    )
    nightly = "Lean (version 4.10.0-nightly-2024-06-01, x86_64-unknown-linux-gnu, commit 1)"
    assert parse_lean_version(nightly) == "4.10.0-nightly-2024-06-01"
    with pytest.raises(ValueError):
        parse_lean_version("Lake version 5.0.0-abc (Lean version 4.9.0)")
