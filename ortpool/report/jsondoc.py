"""The JSON report: everything the terminal shows and more, for machines."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from typing import Any

from ortpool.report.record import ModelResult, bases, run_status
from ortpool.report.text import clean, dumps

__all__ = ["dumps", "environment", "validate_document"]


def environment() -> dict[str, str]:
    from ortpool.ort import runtime

    return {**runtime.versions(), "python": platform.python_version()}


def validate_document(models: Sequence[ModelResult], settings: dict[str, Any]) -> dict[str, Any]:
    return clean(
        {
            "tool": "ortpool validate",
            "environment": environment(),
            "settings": settings,
            "status": run_status(models),
            "differs": any(m.failing for m in models),
            # the differing nodes by what they break: the spec's text, or ruling N
            "bases": bases([n for m in models for n in m.nodes]),
            "models": [m.to_dict() for m in models],
        })
