"""Writing a model file with its external data and a report, all of it or nothing: the file
side of ``ortpool rewrite``, ``restore`` and ``fix``, without reading the weights.

Each data file goes next to the output at the same relative location (onnxruntime refuses any
other: docs/rewrite.md), all or none (:class:`ortpool.staging.StagedFiles`), never overwriting. A
data file is read only when, links resolved, it is a regular file inside the model's folder (a
model must not make ortpool copy ``~/.ssh/id_ed25519``: :func:`ortpool.modelfile.source_file`),
and written only inside the output's, never through a link.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol, TypeVar

import onnx

from ortpool import modelfile, values
from ortpool.errors import OrtpoolError
from ortpool.modelfile import external_locations, source_file
from ortpool.staging import Destination, StagedFiles, inside, same_file, through_link

__all__ = ["FileReport", "save", "write_file"]

_PROTO_LIMIT = modelfile.PROTO_LIMIT
_CHUNK = 1 << 24


def data_sources(model: onnx.ModelProto, source_dir: Path) -> list[tuple[Path, str]]:
    """The external data files ``model`` reads, checked before any work (:func:`source_file`),
    described for :class:`StagedFiles` (no output may be one of them)."""
    return [(source_file(source_dir, where), f"the input model's external data file {where!r}")
            for where in external_locations(model)]


def data_files_in_reach(models: Iterable[str | os.PathLike],
                        destinations: Iterable[str | os.PathLike | None]) -> list[tuple[Path, str]]:
    """The external data files of ``models`` that one of ``destinations`` (a report's path) may
    be, described for :class:`StagedFiles` as :func:`data_sources` describes them. Only a model
    in whose folder an existing destination lies is read (weights never loaded), and one that
    cannot be read, or whose data is refused, is left to the run that reports it."""
    reached = [os.path.realpath(d) for d in destinations if d is not None and os.path.exists(d)]
    found: list[tuple[Path, str]] = []
    for model in models if reached else ():
        folder = os.path.realpath(Path(model).parent)
        if not any(inside(d, folder) for d in reached):
            continue
        try:
            locations = external_locations(modelfile.read(model, load_external_data=False,
                                                          data_checked=False))
        except OrtpoolError:
            continue
        for location in locations:
            with contextlib.suppress(OrtpoolError):
                found.append((source_file(Path(model).parent, location),
                              f"the external data file {location!r} of the model {model}"))
    return found


def _same_content(a: Path, b: Path) -> bool:
    if a.stat().st_size != b.stat().st_size:
        return False
    with a.open("rb") as fa, b.open("rb") as fb:
        while True:
            ca, cb = fa.read(_CHUNK), fb.read(_CHUNK)
            if ca != cb:
                return False
            if not ca:
                return True


#: (location, source file, destination: None when already next to the output)
DataPlan = list[tuple[str, Path, Destination | None]]


def plan_data(model: onnx.ModelProto, source_dir: str | os.PathLike, out_dir: str | os.PathLike,
              files: StagedFiles) -> DataPlan:
    """Check that every external data file of ``model`` can be made available at the same
    location relative to ``out_dir``, adding those to write to ``files``; a file already there is
    reused when it has the same bytes, else refused (never overwritten)."""
    source_dir, out_dir = Path(source_dir), Path(out_dir)
    locations = external_locations(model)
    sources = {location: source_file(source_dir, location) for location in locations}
    if not locations or same_file(source_dir, out_dir):
        return []
    planned: DataPlan = []
    for location in locations:
        source, target = sources[location], out_dir / location
        link = through_link(target, out_dir)
        if link is not None:
            raise OrtpoolError(f"external data {location!r}: {link} is a symbolic link; external "
                               f"data is written only inside the output's folder {out_dir}, never "
                               "through a link")
        if os.path.lexists(target):
            if target.is_file() and (same_file(source, target) or _same_content(source, target)):
                planned.append((location, source, None))
                continue
            raise OrtpoolError(f"{target} exists and differs from the model's external data "
                               f"{source_dir / location}; "
                               "refusing to overwrite it (choose another output directory)")
        destination = files.add_below(target, out_dir, f"external data file {location!r}")
        planned.append((location, source, destination))
    return planned


def stage_data(plan: DataPlan, link_data: bool) -> list[str]:
    """Stage the link or copy of each data file planned; one note per file."""
    return [f"external data {location}: "
            f"{'already present' if to is None else to.place(source, link_data)} next to the output"
            for location, source, to in plan]


def serialize(model: onnx.ModelProto) -> bytes:
    """The proto's bytes (external data references as they are)."""
    size = model.ByteSize()
    if size > _PROTO_LIMIT:
        raise OrtpoolError(f"the model holds {size} bytes inline, over protobuf's 2 GB limit; "
                           "store its weights as external data (onnx.save(..., "
                           "save_as_external_data=True)) first")
    return model.SerializeToString()


def save(model: onnx.ModelProto, path: str | os.PathLike,
         source_dir: str | os.PathLike | None = None, *, link_data: bool = False) -> list[str]:
    """Write ``model`` to ``path``, its external data (relative to ``source_dir``) next to it,
    every file or none; notes on each data file."""
    if not isinstance(model, onnx.ModelProto):
        raise values.wrong("model", model, "an onnx.ModelProto")
    values.path("path", path)
    if source_dir is not None:
        source_dir = Path(values.path("source_dir", source_dir))
    values.flag("link_data", link_data)
    sources = data_sources(model, source_dir) if source_dir is not None else []
    with StagedFiles(sources) as files:
        notes = _stage(files, files.add(path, "the output"), model, source_dir, link_data)
        files.commit()
    return notes


def _stage(files: StagedFiles, output: Destination, model: onnx.ModelProto, source_dir: Path | None,
           link_data: bool) -> list[str]:
    """Stage the model and its data files (each checked first); notes on the data files."""
    if source_dir is None:
        output.write(serialize(model))
        if external_locations(model):
            return ["external data references written as they are (no source_dir given)"]
        return []
    if output.in_place:  # /dev/null, /dev/stdout: no folder of its own to put data files in
        output.write(serialize(model))
        return [f"external data {location}: not written (the output {output.path} is not a "
                "file)" for location in external_locations(model)]
    plan = plan_data(model, source_dir, output.path.parent, files)
    output.write(serialize(model))
    return stage_data(plan, link_data)


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
    sources = [(source, "the input model"), *data_sources(model, source.parent)]
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
