"""Imported by the forkserver of ``ortpool validate``'s model processes (:mod:`.batch`), never
by anything else: the validator and onnxruntime imported once, so that every worker is forked
with them. Imports only: a validation run here (a warm-up) would cost the first model more than
it saves it (0.18 s more on the bundled models, measured), as the worker's first model pays the
same first-time costs."""

import contextlib
import gc

import ortpool.validate.validator  # noqa: F401
from ortpool.errors import OrtpoolError
from ortpool.ort import runtime

with contextlib.suppress(OrtpoolError):  # none installed: each model says so, not the server
    runtime.require()
# kept out of the collector's passes: a worker's would write to (copy) the server's heap
gc.freeze()
