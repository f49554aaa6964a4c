"""Writing a model file with its external data and a report, all of it or nothing: the file
side of ``ortpool rewrite``, ``restore`` and ``fix``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

import onnx

from ortpool import modelfile
from ortpool.model import external
from ortpool.staging import Destination, StagedFiles

__all__ = ["FileReport", "save", "write_file"]


def save(model: onnx.ModelProto, path: str | os.PathLike,
         source_dir: str | os.PathLike | None = None, *, link_data: bool = False) -> list[str]:
    """Write ``model`` to ``path``, its external data (relative to ``source_dir``) next to it,
    every file or none; notes on each data file."""
    source_dir = Path(source_dir) if source_dir is not None else None
    sources = external.data_sources(model, source_dir) if source_dir is not None else []
    with StagedFiles(sources) as files:
        notes = _stage(files, files.add(path, "the output"), model, source_dir, link_data)
        files.commit()
    return notes


def _stage(files: StagedFiles, output: Destination, model: onnx.ModelProto, source_dir: Path | None,
           link_data: bool) -> list[str]:
    """Stage the model and its data files (each checked first); notes on the data files."""
    if source_dir is None:
        output.write(external.serialize(model))
        if external.external_locations(model):
            return ["external data references written as they are (no source_dir given)"]
        return []
    plan = external.plan_data(model, source_dir, output.path.parent, files)
    output.write(external.serialize(model))
    return external.stage_data(plan, link_data)


class FileReport(Protocol):
    """What :func:`write_file` needs of a command's report."""

    notes: list[str]

    def to_json(self) -> str: ...


Report = TypeVar("Report", bound=FileReport)


def write_file(source: str | os.PathLike, target: str | os.PathLike,
               produce: Callable[[onnx.ModelProto, Path], tuple[onnx.ModelProto | None, Report]], *,
               link_data: bool = False, json_report: str | os.PathLike | None = None) -> Report:
    """Read ``source`` (weights never loaded), make the result with ``produce(model,
    source_dir)``, write it to ``target`` with its external data and the report to
    ``json_report``: all of it or nothing, every destination checked and its folder proven
    writable before ``produce`` runs. With no model produced, the report is still written."""
    source = Path(source)
    model = modelfile.read(source, load_external_data=False)
    sources = [(source, "the input model"), *external.data_sources(model, source.parent)]
    with StagedFiles(sources) as files:
        output = files.add(target, "the output")
        report_file = files.add(json_report, "the JSON report") if json_report else None
        files.reserve()
        result, report = produce(model, source.parent)
        if result is None:
            files.drop(output)
        else:
            report.notes.extend(_stage(files, output, result, source.parent, link_data))
        if report_file is not None:
            report_file.write(report.to_json().encode())
        files.commit()
    return report
