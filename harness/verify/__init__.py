"""The verify stage: the whole pipeline for one ruleset (solve, certify, check, corpus, render,
Lean) run as commands (:mod:`~harness.verify.stages`), its manifest's sections
(:mod:`~harness.verify.sections`), and publishing a verified run
(:mod:`~harness.verify.publish`).
"""
