"""Everything that touches onnxruntime: op registration, the result hook, the session wrapper, the
installed runtime and its description, sessions of a model on it, built-in runs with their
failures sorted into kinds. Importing ``register``, ``hook`` or ``session`` imports onnxruntime
and onnxruntime-extensions; the names below import them only when used (the registration is
``ortpool.register``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

# onnxruntime's telemetry (1.32's Linux wheels) writes a session id file (.ses) into TMPDIR and a
# device id under ~/.cache/Microsoft as it is imported: files no user of ortpool named. Read at
# its import, which only ortpool.ort's modules do: off unless the user set it.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from ortpool.lazy import lazy_names
from ortpool.ort.opening import open_session, optimized
from ortpool.ort.ortrun import (
    NO_KERNEL,
    REJECTED,
    RUN_FAILED,
    OrtFailure,
    builtin_session,
    run_builtin,
    run_placed,
    run_session,
)
from ortpool.ort.runtime import (
    INSTALL_HINT,
    build,
    create,
    max_ir_version,
    require,
    stamp,
    unreadable,
    versions,
)
from ortpool.ort.runtime_spec import (
    CPU,
    DEFAULT_LEVEL,
    ISOLATED_LEVEL,
    LEVELS,
    MODES,
    Provider,
    RuntimeSpec,
    fell_back,
    kernel_node,
    parse_providers,
    placement,
    profile_dir,
    provider_name,
    read_profile,
    share_thread_pool,
)

if TYPE_CHECKING:  # imported on first use: they import onnxruntime
    from ortpool.ort.session import InferenceSession, check_model, session_options

#: name -> the module that defines it, imported on first access (it imports onnxruntime)
_LAZY = {"InferenceSession": "ortpool.ort.session", "session_options": "ortpool.ort.session",
         "check_model": "ortpool.ort.session"}

__all__ = [
    "CPU", "DEFAULT_LEVEL", "INSTALL_HINT", "ISOLATED_LEVEL", "LEVELS", "MODES", "NO_KERNEL",
    "REJECTED", "RUN_FAILED", "InferenceSession", "OrtFailure", "Provider", "RuntimeSpec", "build",
    "builtin_session", "check_model", "create", "fell_back", "kernel_node", "max_ir_version",
    "open_session", "optimized", "parse_providers", "placement", "profile_dir", "provider_name",
    "read_profile", "require", "run_builtin", "run_placed", "run_session", "session_options",
    "share_thread_pool", "stamp", "unreadable", "versions",
]


__getattr__ = lazy_names(__name__, _LAZY)
