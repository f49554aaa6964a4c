"""Inputs for a run: generated from the model's input types and shapes, or loaded from a file.

Generated values are seeded and quantised to quarter steps: small exact binary fractions, so ties
occur (they exercise the first-maximum rule and the tie report) and sums stay exact long enough
that AveragePool differences mean something.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import onnx

from ortpool.errors import OrtpoolError
from ortpool.validate import dtypes

_SHAPE = re.compile(r"^([^:]+):(\d+(?:,\d+)*)$")
#: size given to a symbolic dimension nobody named
DEFAULT_DIM = 1


def parse_shapes(items: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """``["x:1,3,32,32"]`` -> ``{"x": (1, 3, 32, 32)}``; a clear error for anything else."""
    shapes: dict[str, tuple[int, ...]] = {}
    for item in items:
        match = _SHAPE.match(item.strip())
        if not match:
            raise OrtpoolError(
                f"--shape {item!r} must be NAME:D1,D2,... with positive integers, e.g. x:1,3,32,32"
            )
        dims = tuple(int(d) for d in match.group(2).split(","))
        shapes[match.group(1)] = dims
    return shapes


def random_tensor(rng: np.random.Generator, shape: Sequence[int], dtype: str) -> np.ndarray:
    """Seeded values of ``dtype``: quarter steps in about [-4, 4] for floats, small ints else."""
    np_dtype = dtypes.NUMPY[dtype]
    if dtype in dtypes.FLOATS:
        values = np.round(rng.normal(0.0, 1.5, size=tuple(shape)) * 4) / 4
        return values.astype(np_dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=tuple(shape)).astype(np.bool_)
    info = np.iinfo(np_dtype)
    low, high = max(info.min, -20), min(info.max, 20)
    return rng.integers(low, high + 1, size=tuple(shape)).astype(np_dtype)


def _dims(value: onnx.ValueInfoProto) -> list[int | str | None]:
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return []
    out: list[int | str | None] = []
    for dim in tensor.shape.dim:
        if dim.HasField("dim_value"):
            out.append(dim.dim_value)
        elif dim.HasField("dim_param"):
            out.append(dim.dim_param)
        else:
            out.append(None)
    return out


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Inputs a caller must feed: graph inputs that are not initializers (old IR lists both)."""
    initialized = {init.name for init in model.graph.initializer}
    return [value for value in model.graph.input if value.name not in initialized]


def generate_inputs(
    model: onnx.ModelProto,
    seed: int = 0,
    shapes: Mapping[str, Sequence[int]] | None = None,
) -> dict[str, np.ndarray]:
    """One array per model input, from its declared type and shape.

    Symbolic dimensions take the size ``--shape`` gives the input, or the size already given to
    the same symbol elsewhere, or 1; the report says which sizes were chosen.
    """
    shapes = dict(shapes or {})
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    symbols: dict[str, int] = {}
    names = {v.name for v in graph_inputs(model)}
    unknown = sorted(set(shapes) - names)
    if unknown:
        raise OrtpoolError(
            f"--shape names input {unknown[0]!r}, but the model's inputs are "
            f"{', '.join(sorted(names)) or '(none)'}"
        )
    for value in graph_inputs(model):
        if not value.type.HasField("tensor_type"):
            raise OrtpoolError(f"input {value.name!r} is not a tensor; pass it with --inputs")
        dtype = dtypes.name_of_code(value.type.tensor_type.elem_type)
        dims = _dims(value)
        if value.name in shapes:
            given = tuple(shapes[value.name])
            if dims and len(given) != len(dims):
                raise OrtpoolError(
                    f"--shape {value.name}:{','.join(map(str, given))} has {len(given)} dims; "
                    f"the input has rank {len(dims)}"
                )
            for dim, size in zip(dims, given, strict=False):
                if isinstance(dim, int) and dim != size:
                    raise OrtpoolError(
                        f"--shape {value.name}:{','.join(map(str, given))} conflicts with the "
                        f"model's fixed shape {dims}"
                    )
                if isinstance(dim, str):
                    symbols.setdefault(dim, size)
            shape = given
        else:
            shape = tuple(
                d
                if isinstance(d, int)
                else symbols.get(d, DEFAULT_DIM)
                if isinstance(d, str)
                else DEFAULT_DIM
                for d in dims
            )
            for d, size in zip(dims, shape, strict=True):
                if isinstance(d, str):
                    symbols.setdefault(d, size)
        feeds[value.name] = random_tensor(rng, shape, dtype)
    return feeds


def load_inputs(path: str, model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Arrays from an .npz file, keyed by input name; every model input must be there."""
    try:
        with np.load(path, allow_pickle=False) as data:
            feeds = {name: np.asarray(data[name]) for name in data.files}
    except (OSError, ValueError) as err:
        raise OrtpoolError(f"--inputs {path}: cannot read as .npz: {err}") from None
    wanted = [v.name for v in graph_inputs(model)]
    missing = [name for name in wanted if name not in feeds]
    if missing:
        raise OrtpoolError(
            f"--inputs {path} has no array for input {missing[0]!r} (it has "
            f"{', '.join(sorted(feeds)) or 'none'})"
        )
    return {name: feeds[name] for name in wanted}
