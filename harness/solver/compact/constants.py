"""The compact solver's constants: the 2-bit value codes, the bits of a class's meta byte,
the batch and piece sizes, the switch points between un-playing and sweeping, and the
markers of its work folder; and :class:`CompactError`, its one-line error."""

from __future__ import annotations

import numpy as np

# 2-bit codes while solving; AVOID is "undecided, and a drawing action exists".
OPEN, V_WIN, V_LOSS, AVOID = 0, 1, 2, 3


# Bits of the per-class meta byte during the enumeration: the colourings a class was reached
# with (SIDE_X, SIDE_O), what its first expansion found (WIN_NOW, CAN_AVOID), and the
# breadth-first frontier as colourings, two bits each: TODO, reached at the last level and
# to be expanded at this one, and NEW, reached at this level (the next level's TODO).
SIDE_X, SIDE_O, WIN_NOW, CAN_AVOID = 1, 2, 4, 8


NEW_SHIFT, TODO_SHIFT = 4, 6


NEW, TODO = np.uint8(3 << NEW_SHIFT), np.uint8(3 << TODO_SHIFT)


# Classes expanded at once: the expansion's temporaries stay a few MB, below the peak of
# the merges of new keys; 2,048 and 8,192 were no faster on 5x5 c4 torus (docs/solver.md).
BATCH = 4096


# Classes whose successors are looked up in the store at once (their distinct successors,
# sorted): a denser batch of look-ups shares more of the binary searches' paths. On 5x5 c4
# torus the solve took about 32 CPU s with 8,192, 39 with 2,048; 16,384 peaked 9 MB higher.
EXPAND_RANGE = 8192


VERIFY_SLICE = 256  # after-states whose proposals are played forward at once


# and with an open filter, which drops most proposals before the forward play: the kept
# ones would be too few for numpy's calls (1,024 random 5x5 c4 torus classes un-played
# through a filter of a quarter of the classes: 174 ms at 256, 127 at 1,024; a twentieth:
# 162 and 140; without a filter 256 stays the faster, 256 against 272)
VERIFY_SLICE_FILTERED = 1024


UNPLAY_BATCH = 1024  # decided classes un-played at once: ~45 parents each on 5x5 c4 torus


# Open classes re-expanded at once by a sweep: late in the game they have the most actions.
# 2,048 re-expand at 4.1 us a class against 5.7 at 1,024 (5x5 c4 torus), and since the
# expansion's columns are sized once and its keys made a slice at a time, a sweep of 2,048
# stays below the un-playing's peak.
SWEEP_BATCH = 2048


# UNPLAY_BATCH and SWEEP_BATCH suit a store of a few million classes (5x5 c4 torus: 31 MB
# of columns). A bigger store takes them times its size over SCALE_CLASSES (at most 8
# times), so that their temporaries stay the same small share of its columns while the
# batch engine's fixed cost per call, most of an un-playing's at 1,024 classes, is paid
# less often.
SCALE_CLASSES = 1 << 22


MERGE_CHUNK = 1 << 16


# Classes a level or a ply is taken from the store in, one piece at a time. Small pieces
# help: a class reached again at its own level, with its other colouring, by a class taken
# before it is then still to be taken, and is expanded once with both (4x5 c4 torus: 1.19
# expansions a class in pieces of 2**14, 1.57 in pieces of 2**18, 1.73 with whole levels).
# A Dask runner takes bigger ones, to keep every worker busy.
PIECE = 1 << 14


# A store of this many keys (64 MiB) no longer fits the processor's cache; look-ups then go
# by way of a directory of every DIRECTORY_STRIDE-th key (lower_bound): 1/8 byte a class.
DIRECTORY_MIN = 1 << 23


SCAN = 1 << 18  # store rows scanned at once (for the frontier, the open classes, ...)


PENDING_MIN = 1 << 18  # new keys held before they are merged into the store (at least)


FORMAT = 2  # 2: the frontier lives in the meta byte (1 had an EXPANDED bit there)


# A ply is swept forward (every open class re-expanded) instead of un-played when its
# decided classes times this exceed the open classes: un-playing a class costs about three
# expansions (module doc). On 5x5 c4 torus ply 1 holds 76% of the decided classes.
UNPLAY_COST = 3


# Bits a class takes in a filter of keys (KeyFilter), at least (the table is a power of
# two): 16 let at most about one key in 16 of those outside its set through (2 MiB on 5x5
# c4 torus: 24 bits a class). A ply is un-played through a filter of the open classes, and
# swept through one of those other than won, where at most half the classes are in it:
# with more, it would spare few look-ups. Through the filter un-playing a class costs about
# one expansion (5x5 c4 torus: the pass took 20.6 CPU s sweeping ply 1 only, 24.8 sweeping
# plies 1 and 3 as at a cost of 3).
FILTER_BITS = 16


FILTER_OPEN = 0.5


UNPLAY_COST_FILTERED = 1


# Classes only ever leave the open set, so a filter of the open classes made at an earlier
# ply still holds every one open now (those decided since just pass it too, and are then
# found decided): it is made again only when the open classes have fallen below this share
# of those it was made for. Making it reads every class's value and hashes the open ones:
# on 5x5 c4 torus 31 filters took 1.0 CPU s, most of the 30 tail plies' cost. At 0.9 it is
# made 8 times and 2.03 million proposals are played forward, as with a filter every ply
# (2.04); at 0.5, 3 times, but 2.30 million are played (the decided ones it lets through).
FILTER_KEEP = 0.9


# Classes given their result and orbit at once at the end: the orbit's 8 symmetric images
# of 2 boards take 128 bytes a class, a solve's peak on 5x5 c4 torus with chunks of 2**15.
COUNT_CHUNK = 1 << 13


CHECKPOINT_SECONDS = 600.0  # out of core, the retrograde pass is saved at a ply end this often


# The counter column starts a byte wide and is widened when a counter or a ply outgrows it
# (past BYTE_TOP while a byte; tests lower it to widen on small rulesets).
WIDER = {"uint8": "uint16", "uint16": "uint32"}


BYTE_TOP = 255


RETRO_COLUMNS = ("meta", "count", "values")  # what the retrograde pass rewrites


MARKERS = ("run.json", "enumerated.json", "retrograde.json", "complete.json")


class CompactError(ValueError):
    """A lean solve cannot run as asked (work folder unusable, ruleset out of its range)."""


# The most classes a solve numbers: the retrograde pass packs a class's row with a successor
# and a pass into one int64 code (row << 33), and un-playing holds rows as int32.
MAX_ROWS = 1 << 30
MAX_ROWS_WHY = "the compact solver packs class rows into 30 bits"
