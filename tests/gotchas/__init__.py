"""Each check's tests, one folder per check: tests/gotchas/gNN/ for gotchas/gNN_*.py.

Names say what is tested: ``test_rules.py`` each rule just below and just above its thresholds,
``test_judge.py`` the verdict a user reads (status, summary, every evidence row with its source),
``test_fix.py`` the fix blocks filled from the evidence, and the probe or scan a check has of its own
(``test_scan.py``, ``test_link.py``, ``test_kernel_log.py``, ...). What several files build (readings,
fake /sys trees, evidence read back) is in ``builders.py``, written once. Hostile input for any check
is in tests/hostile/; ``tools/mutation.py`` runs these folders against the judges' mutants.
"""
