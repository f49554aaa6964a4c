"""Loading and saving models whose weights live in external data files, without reading them.

A model is loaded with ``load_external_data=False``: only the proto (graph, attributes, the
*references* to weights) enters memory, so a model of any size, over 2 GB included, costs what its
structure costs. On saving, every referenced data file must be reachable from the output's
directory under the same relative location, because onnxruntime (1.24 to 1.32 measured; 1.21
still loads them) refuses external data paths that are absolute, contain ``..`` or resolve
(through a symlink) outside the model's directory.
So each data file is hard-linked next to the output (no bytes copied, the source untouched) or,
where a hard link is impossible (another filesystem) or ``copy_data`` is asked, copied in chunks.
A source file is never written to, and an existing file at the target is never overwritten.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError
from onnx import AttributeProto

from ortpool.errors import OrtpoolError

_PROTO_LIMIT = 2**31 - 1
_CHUNK = 1 << 24


def load(path: str | os.PathLike) -> onnx.ModelProto:
    """The model at ``path`` without its external data (weights stay on disk)."""
    path = Path(path)
    if not path.is_file():
        raise OrtpoolError(f"{path}: no such model file")
    try:
        return onnx.load(os.fspath(path), load_external_data=False)
    except (DecodeError, RuntimeError, ValueError) as err:
        raise OrtpoolError(f"{path} is not a readable ONNX model ({err})") from None


def _tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    def graph(g: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
        yield from g.initializer
        for sparse in g.sparse_initializer:
            yield sparse.values
            yield sparse.indices
        yield from nodes(g.node)

    def nodes(ns) -> Iterator[onnx.TensorProto]:
        for node in ns:
            for attr in node.attribute:
                if attr.type == AttributeProto.TENSOR:
                    yield attr.t
                elif attr.type == AttributeProto.TENSORS:
                    yield from attr.tensors
                elif attr.type == AttributeProto.SPARSE_TENSOR:
                    yield attr.sparse_tensor.values
                    yield attr.sparse_tensor.indices
                elif attr.type == AttributeProto.GRAPH:
                    yield from graph(attr.g)
                elif attr.type == AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        yield from graph(g)

    yield from graph(model.graph)
    for function in model.functions:
        yield from nodes(function.node)


def external_locations(model: onnx.ModelProto) -> list[str]:
    """The distinct external data locations ``model`` references, in first-use order."""
    found: dict[str, None] = {}
    for tensor in _tensors(model):
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            for entry in tensor.external_data:
                if entry.key == "location":
                    found.setdefault(entry.value, None)
    return list(found)


def _check_location(location: str) -> None:
    pure = Path(location)
    if pure.is_absolute() or ".." in pure.parts or not location:
        raise OrtpoolError(
            f"external data location {location!r} is absolute or leaves the model's directory; "
            "onnxruntime refuses such locations, so the model cannot be rewritten as it is"
        )


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


def place_data(
    model: onnx.ModelProto,
    source_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    copy_data: bool = False,
) -> list[str]:
    """Make every external data file of ``model`` (relative to ``source_dir``) available at the
    same location relative to ``out_dir``; returns one note per file placed."""
    source_dir, out_dir = Path(source_dir), Path(out_dir)
    notes: list[str] = []
    locations = external_locations(model)
    for location in locations:
        _check_location(location)
    if not locations or (out_dir.exists() and os.path.samefile(source_dir, out_dir)):
        return notes
    for location in locations:
        source, target = source_dir / location, out_dir / location
        if not source.is_file():
            raise OrtpoolError(f"external data file {location!r} is missing from {source_dir}")
        if target.exists():
            if os.path.samefile(source, target) or _same_content(source, target):
                notes.append(f"external data {location}: already present next to the output")
                continue
            raise OrtpoolError(
                f"{target} exists and differs from the model's external data {source}; "
                "refusing to overwrite it (choose another output directory)"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        if not copy_data:
            try:
                os.link(source, target)
                notes.append(f"external data {location}: hard-linked next to the output")
                continue
            except OSError:
                pass  # another filesystem, or links not supported: copy instead
        partial = target.with_name(target.name + ".ortpool-partial")
        shutil.copyfile(source, partial)  # streams in chunks (sendfile), never the whole file
        os.replace(partial, target)
        notes.append(f"external data {location}: copied next to the output")
    return notes


def save(model: onnx.ModelProto, path: str | os.PathLike) -> None:
    """Write the proto (external data references as they are) atomically to ``path``."""
    path = Path(path)
    size = model.ByteSize()
    if size > _PROTO_LIMIT:
        raise OrtpoolError(
            f"the model holds {size} bytes inline, over protobuf's 2 GB limit; store its weights "
            "as external data (onnx.save(..., save_as_external_data=True)) first"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=path.name + ".", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(model.SerializeToString())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # mkstemp makes it private; give it a normal file's mode
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def check_paths(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """The output must not be the input file (the source is never modified)."""
    if Path(target).exists() and os.path.samefile(source, target):
        raise OrtpoolError(f"the output {target} is the input model; write to another path")
