"""Reading a model file, refusing anything that is not an ONNX model: protobuf parses an empty
file, and many byte strings, as an empty ``ModelProto``, so a model must also have an IR version
and a graph with nodes or outputs. Every file read must be a regular file (:func:`require_regular`):
a FIFO blocks until a writer comes, a device never ends; every external data file one inside the
model's folder (:func:`source_file`), checked here for every command, weights loaded or not.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import onnx
from onnx import AttributeProto

from ortpool.errors import OrtpoolError

#: the largest message protobuf reads or writes (2 GiB - 1): no ONNX model file is larger
PROTO_LIMIT = 2**31 - 1


def kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words: "a FIFO (named pipe)", ..."""
    for test, words in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                        (stat.S_ISFIFO, "a FIFO (named pipe)"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a regular file"


def require_regular(path: str | os.PathLike, what: str) -> None:
    """Refuse ``path`` (naming ``what``) unless it is a regular file, links followed."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise OrtpoolError(f"{what} {os.fspath(path)}: no such file") from None
    except OSError as err:
        raise OrtpoolError(f"{what} {os.fspath(path)}: {err.strerror}") from None
    if not stat.S_ISREG(mode):
        raise OrtpoolError(f"{what} {os.fspath(path)} is {kind(mode)}, not a regular file; ortpool "
                           "reads only regular files")


def problem(model: onnx.ModelProto) -> str | None:
    """Why ``model`` is not an ONNX model, or None."""
    if not model.HasField("graph"):
        return "it has no graph"
    if model.ir_version <= 0:
        return f"its ir_version is {model.ir_version} (unset)"
    if not model.graph.node and not model.graph.output:
        return "its graph is empty (no nodes, no outputs)"
    return None


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
    return list(dict.fromkeys(entry.value for tensor in _tensors(model)
                              if tensor.data_location == onnx.TensorProto.EXTERNAL
                              for entry in tensor.external_data if entry.key == "location"))


def _check_location(location: str | bytes) -> None:
    if not isinstance(location, str):  # protobuf gives bytes for a string that is not UTF-8
        raise OrtpoolError(f"external data location {location!r} is not UTF-8 text, which onnx "
                           "and onnxruntime require of a location")
    if "\0" in location:  # the system's calls end a name there (Python raises ValueError)
        raise OrtpoolError(f"external data location {location!r} holds a NUL character, which "
                           "no file name can hold")
    pure = Path(location)
    if pure.is_absolute() or ".." in pure.parts or not location:
        raise OrtpoolError(f"external data location {location!r} is absolute or leaves the model's "
                           "directory; onnx and onnxruntime read external data only from inside "
                           "the model's folder")


def source_file(source_dir: str | os.PathLike, location: str) -> Path:
    """The file external data ``location`` of a model in ``source_dir`` names, every link
    resolved: a regular file inside the (resolved) model's folder, else an :class:`OrtpoolError`
    naming the location and the rule."""
    _check_location(location)
    root = os.path.realpath(source_dir)
    real = os.path.realpath(Path(source_dir) / location)
    if not Path(real).is_relative_to(root):
        raise OrtpoolError(f"external data {location!r} resolves through a symbolic link to "
                           f"{real}, outside the model's folder {root}; external data is read only "
                           "from inside the model's folder (as onnx and onnxruntime require)")
    if not os.path.lexists(real):
        raise OrtpoolError(f"external data file {location!r} is missing from {source_dir}")
    require_regular(real, f"external data {location!r}:")
    return Path(real)


def read(path: str | os.PathLike, *, load_external_data: bool,
         data_checked: bool = True) -> onnx.ModelProto:
    """The model at ``path``, checked, its external data files too (:func:`source_file`) unless
    not ``data_checked``; with its external data only if asked."""
    path = Path(path)
    try:
        if path.is_dir():
            raise OrtpoolError(f"{path} is a directory, not a model file")
        if not path.exists():
            raise OrtpoolError(f"{path}: no such model file")
    except OSError as err:  # a name the system refuses (too long, in a folder not searchable)
        raise OrtpoolError(f"the model {path}: {err.strerror}") from None
    require_regular(path, "the model")
    size = path.stat().st_size
    if size == 0:
        raise OrtpoolError(f"{path} is not an ONNX model: the file is empty (0 bytes)")
    if size > PROTO_LIMIT:  # never read into memory: protobuf would refuse it after that
        raise OrtpoolError(f"{path} is not an ONNX model: it holds {size} bytes, over protobuf's "
                           f"limit of {PROTO_LIMIT} for one message (a larger model keeps its "
                           "weights in external data files)")
    try:
        model = onnx.load(os.fspath(path), load_external_data=False)
        reason = problem(model)
        if reason is None:
            # every command's one check of the data files, before onnx or onnxruntime opens one
            for location in external_locations(model) if data_checked else ():
                source_file(path.parent, location)
            if load_external_data:
                onnx.load_external_data_for_model(model, os.fspath(path.parent))
    except OrtpoolError as err:
        raise OrtpoolError(f"{path}: {err}") from None
    except Exception as err:  # protobuf's DecodeError, onnx's checks of external data, OSError
        raise OrtpoolError(f"{path} is not a readable ONNX model ({type(err).__name__}: "
                           f"{err})") from None
    if reason is not None:
        raise OrtpoolError(f"{path} is not an ONNX model: {reason}")
    return model
