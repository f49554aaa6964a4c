"""Reading a model file, refusing anything that is not an ONNX model: protobuf parses an empty
file, and many byte strings, as an empty ``ModelProto``, so a model must also have an IR version
and a graph with nodes or outputs. Every file read must be a regular file (:func:`require_regular`):
a FIFO blocks until a writer comes, a device never ends.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import onnx

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


def read(path: str | os.PathLike, *, load_external_data: bool) -> onnx.ModelProto:
    """The model at ``path``, checked; with its external data only if asked."""
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
        model = onnx.load(os.fspath(path), load_external_data=load_external_data)
    except Exception as err:  # protobuf's DecodeError, onnx's checks of external data, OSError
        raise OrtpoolError(f"{path} is not a readable ONNX model ({type(err).__name__}: "
                           f"{err})") from None
    reason = problem(model)
    if reason is not None:
        raise OrtpoolError(f"{path} is not an ONNX model: {reason}")
    return model
