"""The JSON report: everything the terminal shows and more, for machines."""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Sequence
from typing import Any

from ortpool.report.record import ModelResult, run_status


def environment() -> dict[str, str]:
    from ortpool.ort import runtime

    return {**runtime.versions(), "python": platform.python_version()}


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf: write them as strings so the file stays standard JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def validate_document(models: Sequence[ModelResult], settings: dict[str, Any]) -> dict[str, Any]:
    return _clean(
        {
            "tool": "ortpool validate",
            "environment": environment(),
            "settings": settings,
            "status": run_status(models),
            "differs": any(m.failing for m in models),
            "models": [m.to_dict() for m in models],
        }
    )


def dumps(document: dict[str, Any]) -> str:
    """The report's text: standard JSON (NaN and inf as strings), indented."""
    return json.dumps(_clean(document), indent=2) + "\n"
