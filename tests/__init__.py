"""ortpool's tests, one folder per package layer (docs/testing.md maps each module to its tests).

A package, so test modules import their helpers as ``tests.support`` and basenames may repeat
across folders (``tests/fix/test_models.py``, ``tests/rewrite/test_models.py``).
"""
