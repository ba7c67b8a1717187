"""The results table: ``verify`` over a named matrix of rulesets (:mod:`harness.results.cell`,
:mod:`harness.results.matrix`, ``python -m harness results``)."""
