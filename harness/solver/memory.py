"""What the solvers ask of the process's memory: the resident size now and at its peak,
handing freed memory back to the system, and small pages for arrays grown row by row.
"""

from __future__ import annotations

import os
import resource
from contextlib import contextmanager

import numpy as np


def resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def peak_resident_bytes() -> int:
    """Peak resident memory of this process image (VmHWM: unlike ``ru_maxrss`` it does not
    carry over the parent's peak through fork and exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# glibc's mallopt parameters.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


# Freed blocks of at least this size are unmapped at once; smaller ones stay in the heap
# and are reused. A solve allocates and frees batch-sized temporaries (up to a few MB) all
# the time, and a fresh mapping costs a page fault for every 4 KiB it touches: with a
# threshold of 256 KiB, a solve of 5x5 c4 torus spent a third of its CPU time in the
# kernel (8 of 23 s retrograde, 8 of 40 s lean). 32 MiB is glibc's own upper bound.
MMAP_THRESHOLD = 32 << 20


def _mallopt(param: int, value: int) -> None:
    """Set a glibc malloc parameter; best effort: nothing happens off glibc."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(param, value)
    except (OSError, AttributeError):
        pass


def return_freed_memory() -> None:
    """Fix glibc's mmap threshold (:data:`MMAP_THRESHOLD`) and trim the heap's top above
    1 MiB.

    By default glibc raises its threshold each time a mapped block is freed: once high, big
    arrays come from the heap, and a resized one is copied, not remapped. A fixed threshold
    keeps the trade-off the same for the whole solve; :func:`own_mappings` lowers it while
    the arrays that grow are allocated.
    """
    _mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    _mallopt(_M_TRIM_THRESHOLD, 1 << 20)


@contextmanager
def own_mappings():
    """Allocations in this block get a mapping of their own, whatever their size.

    A mapped block grows and shrinks in place (``realloc`` remaps its pages), so a growing
    column is never held twice; from the heap, a resize may copy it and hold both (on 5x5 c4
    torus the compact solver's keys are 22 MB, under :data:`MMAP_THRESHOLD`).
    """
    _mallopt(_M_MMAP_THRESHOLD, 128 << 10)
    try:
        yield
    finally:
        _mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def trim_heap() -> None:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim``).

    Freed small blocks (a batch's flags, a chunk of sides) leave holes in the heap that stay
    resident; between passes of a solve they add up to hundreds of MB. Best effort.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def small_pages() -> None:
    """Ask numpy to stop advising the kernel to back its big arrays (4 MiB and more) with
    transparent huge pages, for the rest of the process; best effort (numpy's private
    switch, the one its ``NUMPY_MADVISE_HUGEPAGE`` variable sets at import).

    Where the kernel honours the advice (``transparent_hugepage`` set to ``madvise``, as
    here), the first write to each 2 MiB of a fresh array can make it compact memory to
    find a huge page. The proof-number search writes its tree's rows into such arrays: on
    6x6 c8 torus that cost 2.2 CPU s in the kernel out of 12.9 (0.4 with small pages), in
    adding the children. The strong solvers gain little from it (5x5 c4 torus: retrograde
    0.5 s of system time, lean none).
    """
    switch = hugepage_switch()
    if switch is not None:
        switch(False)


def hugepage_switch():
    """numpy's private setter of its huge-page advice (it returns the previous setting), or
    ``None`` where this numpy has none (``numpy._core`` from 2.0, ``numpy.core`` before)."""
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    return getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
