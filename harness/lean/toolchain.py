"""Find the Lean toolchain: ``elan``, ``lake`` and ``lean``, their versions, and the pin.

The project pins its toolchain in ``lean/lean-toolchain`` (one line such as
``leanprover/lean4:v4.22.0``). Tools are looked for on ``PATH`` first, then in elan's own
``bin`` folder (``$ELAN_HOME/bin``, by default ``~/.elan/bin``), because elan's installer
puts them there and a fresh shell may not have it on ``PATH`` yet.

Under elan, ``lake`` and ``lean`` are proxies that run the toolchain named by the nearest
``lean-toolchain`` file, installing it first if it is missing. A download is the last thing
a verification run should start on its own, so with elan present the pinned toolchain must
already be installed; if not, the run stops and says which command installs it.

Without any toolchain the runner stops with :class:`NoToolchainError`, whose exit code
(:data:`EXIT_NO_TOOLCHAIN`, 4) tells scripts "not run" apart from "failed".

>>> parse_lean_version("Lean (version 4.22.0, x86_64-unknown-linux-gnu, commit 0a1b, Release)")
'4.22.0'
>>> toolchain_dir_name("leanprover/lean4:v4.22.0")
'leanprover--lean4---v4.22.0'
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.bounded import read_text
from harness.errors import EXIT_NO_LEAN, HarnessError

EXIT_NO_TOOLCHAIN = EXIT_NO_LEAN

ELAN_INSTALL = (
    "curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf "
    "| sh -s -- -y --default-toolchain none"
)

_PIN_RE = re.compile(r"^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?(?::[A-Za-z0-9_.+-]+)?$")
_LEAN_VERSION_RE = re.compile(r"^Lean \(version (\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)")


class NoToolchainError(HarnessError):
    """No usable Lean toolchain: the run cannot happen here (exit code 4)."""

    exit_code = EXIT_NO_TOOLCHAIN


@dataclass(frozen=True)
class Toolchain:
    """A located toolchain and what its tools say about themselves."""

    lake: Path
    lean: Path
    elan: Path | None
    pinned: str | None  # contents of lean-toolchain, e.g. "leanprover/lean4:v4.22.0"
    lean_version: str  # "4.22.0"
    lean_version_line: str  # full `lean --version`
    lake_version_line: str  # full `lake --version`
    elan_version_line: str | None

    def matches_pin(self) -> bool | None:
        """Whether ``lean --version`` is the pinned release (None when nothing is pinned).

        >>> tc = Toolchain(Path("lake"), Path("lean"), None, "leanprover/lean4:v4.22.0",
        ...                "4.22.0", "", "", None)
        >>> tc.matches_pin()
        True
        """
        if self.pinned is None:
            return None
        return pinned_version(self.pinned) == self.lean_version

    def identity(self) -> str:
        """What results depend on: the exact Lean and Lake builds (for cache keys)."""
        return f"{self.lean_version_line}\n{self.lake_version_line}"

    def to_json(self) -> dict:
        return {
            "pinned": self.pinned,
            "lean_version": self.lean_version,
            "matches_pin": self.matches_pin(),
            "lean": self.lean_version_line,
            "lake": self.lake_version_line,
            "elan": self.elan_version_line,
            "paths": {
                "lake": str(self.lake),
                "lean": str(self.lean),
                "elan": None if self.elan is None else str(self.elan),
            },
        }


def read_pin(project: Path) -> str | None:
    """The toolchain pinned by ``project/lean-toolchain``, or None when there is no such file.

    Raises ValueError (naming the file) when the file is there but does not hold one
    toolchain name.
    """
    path = Path(project) / "lean-toolchain"
    if not path.is_file():
        return None
    text = read_text(path, 4096, "lean-toolchain file")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) != 1 or not _PIN_RE.match(lines[0]):
        raise ValueError(
            f"{path}: expected one toolchain name such as leanprover/lean4:v4.22.0, "
            f"found {lines[:2]!r}"
        )
    return lines[0]


def pinned_version(pin: str) -> str | None:
    """The release number in a pin (``leanprover/lean4:v4.22.0`` -> ``4.22.0``), if it has one.

    >>> pinned_version("leanprover/lean4:v4.22.0-rc1"), pinned_version("stable")
    ('4.22.0-rc1', None)
    """
    m = re.search(r":v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)$", pin)
    return m.group(1) if m else None


def toolchain_dir_name(pin: str) -> str:
    """The folder elan installs a toolchain into, under ``$ELAN_HOME/toolchains``."""
    return pin.replace("/", "--").replace(":", "---")


def elan_home(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("ELAN_HOME"):
        return Path(env["ELAN_HOME"])
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".elan"


def find_tool(name: str, env: dict[str, str] | None = None) -> Path | None:
    """``name`` on PATH, else in elan's bin folder; None when in neither."""
    env = os.environ if env is None else env
    found = shutil.which(name, path=env.get("PATH", ""))
    if found:
        return Path(found)
    candidate = elan_home(env) / "bin" / name
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate
    return None


REPLAY_CHECKERS = ("leanchecker", "lean4checker")


def find_replay_checker(lean: Path | None, env: dict[str, str] | None = None) -> Path | None:
    """The olean replay checker: Lean's ``leanchecker`` (shipped with recent toolchains) or
    the older ``lean4checker``, next to ``lean`` first, else on PATH or in elan's bin."""
    for name in REPLAY_CHECKERS:
        if lean is not None:
            beside = Path(lean).parent / name
            if beside.is_file() and os.access(beside, os.X_OK):
                return beside
        found = find_tool(name, env)
        if found is not None:
            return found
    return None


def parse_lean_version(line: str) -> str:
    """The release number in ``lean --version`` output (ValueError when there is none)."""
    m = _LEAN_VERSION_RE.search(line)
    if m is None:
        raise ValueError(f"cannot read a Lean version from {line.strip()!r}")
    return m.group(1)


def install_hint(pin: str | None) -> str:
    target = pin or "leanprover/lean4:stable"
    return f"install elan ({ELAN_INSTALL}), then `elan toolchain install {target}`"


def _version(tool: Path, cwd: Path, env: dict[str, str], timeout: float) -> str:
    try:
        proc = subprocess.run(
            [str(tool), "--version"],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise NoToolchainError(f"`{tool} --version` did not answer within {timeout:g} s") from None
    except OSError as exc:
        raise NoToolchainError(f"cannot run {tool}: {exc.strerror}") from None
    text = (proc.stdout or proc.stderr).strip()
    if proc.returncode != 0 or not text:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise NoToolchainError(
            f"`{tool} --version` failed (exit {proc.returncode})"
            + (f": {detail[-1]}" if detail else "")
        )
    return text.splitlines()[0]


def _pin_installed(pin: str, elan: Path, cwd: Path, env: dict[str, str]) -> bool:
    if (elan_home(env) / "toolchains" / toolchain_dir_name(pin)).is_dir():
        return True
    # Elan versions differ in folder naming; its own listing is the authority.
    try:
        proc = subprocess.run(
            [str(elan), "toolchain", "list"],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return any(line.split(" ")[0] == pin for line in proc.stdout.splitlines())


def discover(project: Path, env: dict[str, str] | None = None, timeout: float = 60.0) -> Toolchain:
    """Locate the toolchain to build ``project`` with.

    Raises :class:`NoToolchainError` (one line: what is missing and how to install it) when
    ``lake`` or ``lean`` cannot be found or run, or when elan lacks the pinned toolchain.
    """
    env = dict(os.environ if env is None else env)
    project = Path(project)
    pin = read_pin(project)
    lake, lean, elan = find_tool("lake", env), find_tool("lean", env), find_tool("elan", env)
    if lake is None or lean is None:
        missing = " and ".join(n for n, p in (("lake", lake), ("lean", lean)) if p is None)
        raise NoToolchainError(
            f"no Lean toolchain: {missing} not found on PATH or in {elan_home(env) / 'bin'}; "
            f"{install_hint(pin)}"
        )
    if elan is not None and pin is not None and not _pin_installed(pin, elan, project, env):
        raise NoToolchainError(
            f"elan is installed but the pinned toolchain {pin} (from "
            f"{project / 'lean-toolchain'}) is not; run `elan toolchain install {pin}`"
        )
    # Versions are asked from inside the project so elan proxies resolve the pin.
    lean_line = _version(lean, project, env, timeout)
    lake_line = _version(lake, project, env, timeout)
    elan_line = None if elan is None else _version(elan, project, env, timeout)
    try:
        lean_version = parse_lean_version(lean_line)
    except ValueError as exc:
        raise NoToolchainError(f"{lean}: {exc}") from None
    return Toolchain(
        lake=lake,
        lean=lean,
        elan=elan,
        pinned=pin,
        lean_version=lean_version,
        lean_version_line=lean_line,
        lake_version_line=lake_line,
        elan_version_line=elan_line,
    )
