"""The manifest tests use the verify tests' fixtures: throw-away keys and stand-in runs."""

from tests.verify.conftest import key, no_user_keys, other_key, verified, verified_lean

__all__ = ["key", "no_user_keys", "other_key", "verified", "verified_lean"]
