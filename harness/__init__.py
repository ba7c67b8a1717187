"""pop-harness: solve the board game Pop, certify the result, and check it with Lean.

The package is laid out by stage of the data flow (see ``docs/architecture.md``)::

    rules/     ruleset ids, edge geometry, symmetries, the reference engine, notation
    solver/    numpy batch engine, the retrograde and compact strong solvers, proof searches
    cert/      certificate format, builder, independent checker
    lean/      rendering Lean modules, running lake per shard, parsing its output
    manifest/  signed manifests, keys, sealed archives, audits
    verify/    the verify pipeline over every stage, and publishing a verified run
    site/      the static web site
    results/   a matrix of rulesets verified cell by cell
    cluster/   the Dask options, session and shared folder every stage uses
"""

__version__ = "0.1.0"

# The Python API (harness.api), imported on first use so that ``import harness`` stays light.
API = ("solve", "certify", "check", "verify_ruleset")


def __getattr__(name: str):
    if name in API:
        from harness import api

        return getattr(api, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


__all__ = ["__version__", *API]
