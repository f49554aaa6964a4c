"""The stand-in work of tests/support/batch_stand_in.py behind an import that takes 2 s, as a
spawned worker's imports of the validator and onnxruntime do (where there is no forkserver, or
under a temporary folder too deep for its socket): imported by each worker child as it starts."""

from __future__ import annotations

import time

from tests.support import batch_stand_in

#: how long importing this module takes
IMPORT_SECONDS = 2.0

time.sleep(IMPORT_SECONDS)


def work(path: str, options, strict_shapes: bool, progress):
    """:func:`batch_stand_in.work` (defined here, so that a child unpickling it imports this
    module)."""
    return batch_stand_in.work(path, options, strict_shapes, progress)
