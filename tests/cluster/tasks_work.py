"""Small task functions for the task-loop tests, in a module of their own so that Dask
workers import them by name (a test module run by pytest is not importable that way)."""

from __future__ import annotations

import time


def square(n: int) -> int:
    return n * n


def slow(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def fails(n: int) -> int:
    raise ValueError(f"no answer for {n}")
