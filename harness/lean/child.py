"""One child process under limits: a wall-clock timeout and an address-space cap set by a
small trampoline before ``exec``, its output read within a bound, and how it ended
(:class:`ChildResult`). Used by every ``lake build`` of the ``lean`` stage, locally or on a
Dask worker, and by ``audit``'s Lean run.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

GIB = 1 << 30


MIB = 1 << 20


# Output kept from one child: generous for Lean messages, bounded for a runaway printer.
MAX_OUTPUT = 32 * MIB


# Messages kept per module in the result file.
MAX_MESSAGES = 200


MAX_MESSAGE_CHARS = 4000


# Runs as the child: set the address-space cap, then run the real program in a fork of this
# small interpreter, wait for it, and report its rusage on the report pipe. Why not exec in
# place: on Linux a child's ru_maxrss starts at its parent's peak (fork copies the page
# tables; vfork shares the parent's memory until exec), so wait4 on a direct child of a big
# harness process would report the harness's size, not lean's. A grandchild forked from this
# ~10 MiB interpreter is measured cleanly. The exit status (code or signal) is passed on.
# The parent-death signal makes a build die with the process that started it: a SIGKILLed
# Dask worker leaves no lake behind to race the rerun of its task in the same workspace.
# argv: cap, report fd, program, args...
_TRAMPOLINE = """\
import os, resource, signal, sys
cap, report = int(sys.argv[1]), int(sys.argv[2])
try:  # Linux: if whoever started us dies (a killed Dask worker), take lake and lean along
    import ctypes
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
    ctypes.CDLL(None).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    if os.getppid() == 1:
        os.killpg(0, signal.SIGKILL)
except (OSError, AttributeError):
    pass
if cap > 0:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
pid = os.fork()
if pid == 0:
    os.close(report)
    try:
        os.execv(sys.argv[3], sys.argv[3:])
    except OSError as exc:
        sys.stderr.write(f"error: cannot run {sys.argv[3]}: {exc.strerror}\\n")
    os._exit(127)
while True:
    try:
        _, status, usage = os.wait4(pid, 0)
        break
    except InterruptedError:
        continue
os.write(report, f"{usage.ru_maxrss} {usage.ru_utime} {usage.ru_stime}\\n".encode())
os.close(report)
code = os.waitstatus_to_exitcode(status)
if code < 0:
    try:
        signal.signal(-code, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL and SIGSTOP keep their default anyway
        pass
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


@dataclass
class ChildResult:
    """How one limited child ended."""

    command: list[str]
    exit_code: int | None  # None when killed by a signal
    signal: int | None
    timed_out: bool
    seconds: float
    cpu_seconds: float
    peak_rss_bytes: int
    output: str  # stdout and stderr, interleaved as written

    @property
    def peak_mib(self) -> float:
        return round(self.peak_rss_bytes / MIB, 1)


class Child:
    """A started child; see :func:`run_limited` for the contract."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str] | None,
        memory_bytes: int,
        timeout: float,
    ) -> None:
        self.command = [str(c) for c in command]
        self._log = tempfile.TemporaryFile()
        self.timeout = timeout
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.result: ChildResult | None = None
        self._report, report_w = os.pipe()
        argv = [sys.executable, "-I", "-S", "-c", _TRAMPOLINE, str(int(memory_bytes))]
        try:
            self.proc = subprocess.Popen(
                [*argv, str(report_w), *self.command],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                pass_fds=(report_w,),
                start_new_session=True,  # own process group, so a kill reaches lean too
            )
        finally:
            os.close(report_w)
        self.pid = self.proc.pid
        try:
            self.pidfd: int | None = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux >= 5.3: fall back to polling
            self.pidfd = None

    def poll(self) -> bool:
        """Reap the child if it has ended (or kill it past its deadline); True once done."""
        if self.result is not None:
            return True
        pid, status, usage = os.wait4(self.pid, os.WNOHANG)
        if pid == 0:
            if time.monotonic() < self.deadline:
                return False
            self.kill(timed_out=True)
            return True
        self._finish(status, usage, timed_out=False)
        return True

    def kill(self, *, timed_out: bool = False) -> None:
        """SIGKILL the whole process group and reap the child."""
        if self.result is not None:
            return
        self._killpg()
        _, status, usage = os.wait4(self.pid, 0)
        self._finish(status, usage, timed_out=timed_out)

    def _killpg(self) -> None:
        # The leader is not reaped yet, so its pid (= the group id) cannot have been reused.
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _finish(self, status: int, usage, *, timed_out: bool) -> None:
        seconds = time.monotonic() - self.started
        # Whatever the leader left behind in its group goes too: no orphaned lean.
        self._killpg()
        code = os.waitstatus_to_exitcode(status)
        self.proc.returncode = code  # reaped by us; keep Popen from trying again
        # ru_maxrss is in KiB on Linux, in bytes on macOS.
        scale = 1 if sys.platform == "darwin" else 1024
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(0)
        if size <= MAX_OUTPUT:
            raw = self._log.read()
        else:
            head = self._log.read(MAX_OUTPUT // 2)
            self._log.seek(size - MAX_OUTPUT // 2)
            raw = head + b"\n[... output truncated by pop-harness ...]\n" + self._log.read()
        self._log.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        # The trampoline's report on the real program; the trampoline's own rusage (which
        # includes this process's size, see _TRAMPOLINE) only if it was killed first.
        maxrss, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
        os.set_blocking(self._report, False)
        try:
            report = os.read(self._report, 256).split()
        except BlockingIOError:
            report = []
        os.close(self._report)
        if len(report) == 3:
            maxrss, cpu = int(report[0]), float(report[1]) + float(report[2])
        self.result = ChildResult(
            command=self.command,
            exit_code=code if code >= 0 else None,
            signal=-code if code < 0 else None,
            timed_out=timed_out,
            seconds=round(seconds, 3),
            cpu_seconds=round(cpu, 3),
            peak_rss_bytes=int(maxrss) * scale,
            output=raw.decode("utf-8", errors="replace"),
        )


def wait_for_any(children: Sequence[Child]) -> None:
    """Block until a child may have ended or the nearest deadline passes (at most 1 s)."""
    now = time.monotonic()
    wait = max(0.0, min([c.deadline for c in children] + [now + 1.0]) - now)
    fds = [c.pidfd for c in children if c.pidfd is not None]
    if len(fds) == len(children):
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        poller.poll(wait * 1000)  # a pidfd becomes readable when its process exits
    else:
        time.sleep(min(wait, 0.05))


def run_limited(
    command: Sequence[str],
    *,
    cwd: Path,
    memory_bytes: int,
    timeout: float,
    env: dict[str, str] | None = None,
) -> ChildResult:
    """Run ``command`` with an address-space cap of ``memory_bytes`` (0: none) and a wall-clock
    ``timeout`` in seconds, killing its whole process group at the timeout.

    >>> r = run_limited(["/bin/sh", "-c", "echo hi"], cwd=Path("."), memory_bytes=GIB, timeout=30)
    >>> r.exit_code, r.output, r.timed_out
    (0, 'hi\\n', False)
    """
    child = Child(command, cwd=Path(cwd), env=env, memory_bytes=memory_bytes, timeout=timeout)
    try:
        while not child.poll():
            wait_for_any([child])
    finally:
        child.kill()
    assert child.result is not None
    return child.result


@dataclass
class Limits:
    """Per-child limits: jobs at once, address-space cap in bytes, wall-clock seconds."""

    jobs: int = 1
    memory_bytes: int = 8 * GIB
    timeout: float = 1800.0

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {self.jobs}")
        if self.memory_bytes <= 0:
            raise ValueError(f"memory cap must be positive, got {self.memory_bytes} bytes")
        if not self.timeout > 0:
            raise ValueError(f"timeout must be positive, got {self.timeout} s")


def physical_memory() -> int | None:
    """This machine's physical memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
