"""A model's inputs for a run, resolved once the same way for ``validate``, ``fix`` and ``bench``:
:func:`resolve` turns what the user gives (:class:`InputSpec`: ``--shape``, ``--inputs``, a seed)
and the declared inputs into one array per input (:class:`ResolvedInputs`).

A static size is kept (``0`` too). An open dim (a symbol, ``-1``, no value) takes the size
``--shape`` gives, else the ``--inputs`` array's, else its symbol's on another input, else the
default (:data:`DEFAULT_BATCH` on axis 0, :data:`DEFAULT_SIZE` elsewhere), each listed with its
source; a symbol given different sizes on different axes keeps each (onnxruntime checks static
dims only). Inputs given no array are generated (seeded quarter steps, small integers), but for
one a pooling node reads as data (rois, MaxUnpool's indices and ``output_shape``, or an integer
input they are computed from): random values there prove nothing (:func:`data_inputs`).
"""

from __future__ import annotations

import collections
import dataclasses
import keyword
import math
import os
import re
import shlex
import tokenize
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import onnx

from ortpool import dtypes, values
from ortpool.errors import OrtpoolError, safe, shown
from ortpool.kernels import check_memory
from ortpool.model.inference import Dim, value_type
from ortpool.model.scopes import (
    all_nodes,
    inline_functions,
    is_pool,
    is_standard,
    subgraphs,
    text,
    walk,
)
from ortpool.modelfile import require_regular

#: size of an open dim on axis 0 (the batch, in every exporter's convention)
DEFAULT_BATCH = 1
#: size of an open dim on any other axis: a CNN's five stride-2 stages still reach 2x2 (at 1,
#: every pool would see a 1x1 plane, and a Resize or a Concat of two branches may not run)
DEFAULT_SIZE = 64

#: Bytes of generated values per model (a 1x3x8192x8192 float32 image is 805 MB; the RNG draws
#: float64 first): beyond it a --shape is most likely a typo; --inputs can give more.
MAX_GENERATED_BYTES = 1 << 30

#: (operator, input position) -> what the node reads there as data, not as samples
DATA_POSITIONS: dict[tuple[str, int], str] = {
    ("MaxRoiPool", 1): "rois (batch index and box corners)",
    ("MaxUnpool", 1): "I (indices into the unpooled output)",
    ("MaxUnpool", 2): "output_shape",
}

#: Operators whose outputs are their inputs' values moved, cast or combined elementwise: an input
#: reaching a data position through these alone reaches it with its own values. Through any
#: other operator (Conv, Shape) only integer inputs (counts, indices) still decide the data.
PASS_THROUGH = frozenset({
    "Abs", "Add", "Cast", "CastLike", "Ceil", "Clip", "Concat", "Div", "Expand", "Flatten",
    "Floor", "Gather", "GatherElements", "GatherND", "Identity", "Max", "Min", "Mul", "Neg", "Pad",
    "Reshape", "Round", "ScatterElements", "ScatterND", "Slice", "Split", "Squeeze", "Sub", "Tile",
    "Transpose", "Unsqueeze", "Where"
})  # fmt: skip

_SHAPE = re.compile(r"^(?P<name>.+):(?P<dims>[^:]*)$")
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
#: the most elements a shape may count (its sizes but 0): numpy refuses shapes whose bytes
#: overflow an int64, even an empty one
MAX_ELEMENTS = 2**59

#: Who reads the messages (:class:`InputSpec` carries it): a command line or a Python caller.
CLI, PYTHON = "cli", "python"
_OPTIONS = {CLI: {"shape": "--shape", "inputs": "--inputs"},
            PYTHON: {"shape": "shapes=", "inputs": "inputs="}}


def option(what: str, style: str = CLI) -> str:
    """How ``style``'s caller sets ``what`` ("shape", "inputs"): ``--shape`` or ``shapes=``."""
    if style not in _OPTIONS:
        raise ValueError(f"style={style!r} must be {CLI!r} or {PYTHON!r}")
    return _OPTIONS[style][what]


def _shape_setting(shapes: Mapping[str, Sequence[Any]], style: str) -> str:
    """The ``--shape`` options (``shapes=``) that give these sizes."""
    if style == PYTHON:
        return "shapes={" + ", ".join(f"{name!r}: ({', '.join(map(str, sizes))}"
                                      f"{',' if len(sizes) == 1 else ''})"
                                      for name, sizes in shapes.items()) + "}"
    return " ".join(f"--shape {shlex.quote(f'{safe(name)}:' + ','.join(map(str, sizes)))}"
                    for name, sizes in shapes.items())


def _arrays_setting(style: str, names: Sequence[str] = ()) -> str:
    if style == PYTHON:
        return "inputs={" + ", ".join(f"{n!r}: array" for n in names or ["NAME"]) + "}"
    return "--inputs FILE.npz"


def parse_shape(text: str, key: str = "--shape") -> tuple[str, tuple[int, ...]]:
    """``"x:1,3,32,32"`` -> ``("x", (1, 3, 32, 32))``; the last ``:`` splits (a name may hold
    one); ``x:[1,3,8,8]`` is read too; sizes are integers >= 0. ``key`` names the option."""
    given = f"{key}{'' if key.endswith('=') else ' '}{text!r}"
    match = _SHAPE.match(text.strip())
    dims = match.group("dims").strip() if match else ""
    if dims.startswith("[") and dims.endswith("]"):  # Polygraphy's spelling, x:[1,3,8,8]
        dims = dims[1:-1]
    pieces = dims.split(",") if match else []
    # ASCII digits only: str.isdigit and int() take '²' and '٣' as digits too
    if not match or not all(_DIGITS.fullmatch(p.strip()) for p in pieces):
        raise OrtpoolError(f"{given} must be NAME:D1,D2,... with integer sizes >= 0 "
                           "(digits 0-9), e.g. image:1,3,224,224")
    # int() reads at most 4300 digits; 19 already pass MAX_ELEMENTS
    if any(len(p.strip().lstrip("0")) > 19 for p in pieces):
        cut = text if len(text) <= 60 else text[:57] + "..."
        raise OrtpoolError(f"{key}{'' if key.endswith('=') else ' '}{cut!r}: a size of more than "
                           f"19 digits, more than any array can hold (2**59 elements)")
    return match.group("name").strip(), _checked_sizes(tuple(int(p) for p in pieces), given)


def _checked_sizes(sizes: tuple[int, ...], what: str) -> tuple[int, ...]:
    if math.prod(d for d in sizes if d) > MAX_ELEMENTS:  # numpy refuses the shape itself
        raise OrtpoolError(f"{what}: its sizes multiply to more than {MAX_ELEMENTS} elements "
                           "(2**59), more than any array can hold")
    return sizes


def parse_shapes(items: Iterable[str], key: str = "--shape") -> dict[str, tuple[int, ...]]:
    """Every ``--shape``; an input given two different shapes is refused."""
    shapes: dict[str, tuple[int, ...]] = {}
    for item in items:
        name, dims = parse_shape(item, key)
        if name in shapes and shapes[name] != dims:
            raise OrtpoolError(f"{key} gives input {name!r} two shapes: {_dims_text(shapes[name])} "
                               f"and {_dims_text(dims)}")
        shapes[name] = dims
    return shapes


def _shapes_given(shapes: Any, style: str) -> dict[str, tuple[int, ...]]:
    """``shapes``/``--shape`` checked: a name -> sizes mapping, or ``NAME:D1,D2`` strings."""
    flag = option("shape", style)
    key = flag.rstrip("=")
    if isinstance(shapes, Mapping):
        parsed = {}
        for name, dims in shapes.items():
            # a set or a mapping has no order of axes: refused, as a 0-d array (Iterable, it
            # will not iterate)
            ordered = isinstance(dims, Iterable) and not isinstance(
                dims, str | AbstractSet | Mapping)
            try:
                sizes = list(dims) if ordered else [-1]
            except TypeError:
                sizes = [-1]
            if not isinstance(name, str) or not all(
                isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
                for d in sizes
            ):
                raise OrtpoolError(f"{key}: the shape of {shown(name)} must be a sequence of "
                                   f"integers >= 0, not {shown(dims)}")
            parsed[name] = _checked_sizes(tuple(int(d) for d in sizes), f"{key}[{name!r}]")
        return parsed
    items = [] if shapes is None else [shapes] if isinstance(shapes, str) else shapes
    if isinstance(items, Iterable) and not isinstance(items, bytes):
        items = list(items)
        if all(isinstance(item, str) for item in items):
            return parse_shapes(items, flag)
    raise TypeError(f"{key}={shown(shapes)} must be a name -> sizes mapping (e.g. {{'image': "
                    f"(1, 3, 224, 224)}}) or 'NAME:D1,D2,...' strings, not {type(shapes).__name__}")


def _arrays_given(inputs: Mapping[Any, Any], key: str) -> dict[str, np.ndarray]:
    """``inputs`` as arrays of numbers, of no more bytes than the process can still allocate (a
    broadcast view of 4 TiB holds a few bytes until a run or a child copies it)."""
    arrays = {}
    for name, value in inputs.items():
        if not isinstance(name, str):
            raise TypeError(f"{key}: input names must be str, not {type(name).__name__}")
        masked = np.ma.count_masked(value) if isinstance(value, np.ma.MaskedArray) else 0
        if masked:  # np.asarray would feed what lies under the mask
            raise TypeError(f"{key}[{name!r}] is a masked array with {masked} masked cells, "
                            "whose values are no data; give array.filled(value)")
        try:
            array = np.asarray(value)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{key}[{name!r}]: not an array ({err})") from None
        except Exception as err:  # the caller's own __array__ (a tensor on a device) failed
            raise TypeError(f"{key}[{name!r}]: {type(value).__name__} did not convert to a "
                            f"numpy array: {type(err).__name__}: {err}") from None
        if array.dtype.kind not in "biufc" and array.dtype != dtypes.NUMPY["bfloat16"]:
            raise TypeError(f"{key}[{name!r}] must be an array of numbers, not of {array.dtype} "
                            f"({shown(value)})")
        what = f"{key}[{name!r}], an array of shape {list(array.shape)} ({array.dtype})"
        check_memory(what, array.size * array.itemsize)
        arrays[name] = _native(array)
    return arrays


def _native(array: np.ndarray) -> np.ndarray:
    """``array`` in this machine's byte order: onnxruntime reads a big-endian array's bytes as
    its own order (0.5 as 2.9e-39), and the element type check takes ``>f4`` for no float32."""
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


def load_arrays(path: str | os.PathLike, key: str = "--inputs") -> dict[str, np.ndarray]:
    """The arrays of an .npz file (``numpy.savez``) by input name, nothing unpickled. Someone
    else's archive: a regular file, stored or deflated ``.npy`` members, the sizes its directory
    and headers declare checked against each other and the memory before any array is read (a
    3 MB archive can declare 3 GiB). Anything wrong is one :class:`OrtpoolError` naming it."""
    label = f"{key} {os.fspath(path)}"
    require_regular(path, key)
    try:
        return _read_npz(path, label)
    except OrtpoolError:
        raise
    # a damaged archive (zipfile's BadZipFile, zlib.error), a damaged header (numpy's
    # ValueError; tokenize's TokenError for one cut short), a compression method zipfile cannot
    # read (NotImplementedError)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError,
            RuntimeError, MemoryError, tokenize.TokenError) as err:
        raise OrtpoolError(
            f"{label}: cannot read as .npz (numpy.savez): {type(err).__name__}: {err}"
        ) from None


_NPY_MAGIC = b"\x93NUMPY"


def _read_npz(path: str | os.PathLike, label: str) -> dict[str, np.ndarray]:
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as file:
            npy = file.read(len(_NPY_MAGIC)) == _NPY_MAGIC
        what = "it holds one array (.npy), not arrays named after the inputs" if npy else (
            "it is not a zip archive")
        raise OrtpoolError(f"{label}: cannot read as .npz (numpy.savez): {what}")
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        for info in members:
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise OrtpoolError(f"{label}: member {info.filename!r} uses compression method "
                                   f"{info.compress_type}; numpy.savez writes stored or deflated "
                                   "members only")
            if not info.filename.endswith(".npy"):
                raise OrtpoolError(f"{label}: member {info.filename!r} is not an .npy array")
        counts = collections.Counter(info.filename for info in members)
        twice = next((name for name, n in counts.items() if n > 1), None)
        if twice is not None:  # zipfile reads the last, another reader the first
            raise OrtpoolError(f"{label}: member {twice!r} is in the archive {counts[twice]} "
                               "times; which array is meant is not known")
        total = sum(info.file_size for info in members)
        check_memory(f"{label}: its arrays, {total} bytes uncompressed as it declares", total)
        for info in members:
            with archive.open(info) as stream:
                version = np.lib.format.read_magic(stream)
                read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                        else np.lib.format.read_array_header_2_0)
                shape, _, dtype = read(stream)
            if not all(type(d) is int for d in shape):  # numpy's check lets True through
                raise OrtpoolError(f"{label}: member {info.filename!r} declares the shape "
                                   f"{shown(shape)}: its sizes must be integers")
            if dtype.hasobject:
                raise OrtpoolError(f"{label}: member {info.filename!r} holds Python objects "
                                   "(pickled); ortpool reads arrays of numbers only "
                                   "(allow_pickle=False)")
            nbytes = math.prod(shape) * dtype.itemsize
            if nbytes > info.file_size:
                raise OrtpoolError(f"{label}: member {info.filename!r} declares an array of shape "
                                   f"{list(shape)} ({dtype}, {nbytes} bytes) but holds "
                                   f"{info.file_size} bytes")
        arrays = {}
        for info in members:
            with archive.open(info) as stream:
                array = np.lib.format.read_array(stream, allow_pickle=False)
            arrays[info.filename.removesuffix(".npy")] = _native(np.asarray(array))
        return arrays


@dataclasses.dataclass(frozen=True)
class InputSpec:
    """Sizes (``--shape``) and arrays (``--inputs``; ``origin`` names their file)."""

    shapes: Mapping[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)
    arrays: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    origin: str = ""
    style: str = CLI  # whom the messages speak to

    @classmethod
    def make(cls, shapes: Mapping[str, Sequence[int]] | Iterable[str] | None = None,
             inputs: Mapping[str, Any] | str | os.PathLike | None = None,
             style: str = CLI) -> InputSpec:
        """From the API's or the command line's values, checked (an :class:`OrtpoolError`, or a
        TypeError for a value of the wrong kind): ``shapes`` as ``{"x": (1, 3, 8, 8)}`` or
        ``["x:1,3,8,8"]``; ``inputs`` an .npz path or a name -> array mapping."""
        parsed = _shapes_given(shapes, style)  # a style that names nothing is refused first
        key = option("inputs", style).rstrip("=")
        if inputs is None:
            return cls(parsed, style=style)
        if isinstance(inputs, Mapping):
            return cls(parsed, _arrays_given(inputs, key), "the arrays given", style)
        if not isinstance(inputs, (str, os.PathLike)):
            raise TypeError(f"{key}={shown(inputs)} must be a name -> array mapping or an .npz "
                            f"path, not {type(inputs).__name__}")
        path = values.path(key, inputs)  # '' (the shell's empty --inputs) names no file
        return cls(parsed, load_arrays(path, key), path, style)

    @property
    def empty(self) -> bool:
        return not self.shapes and not self.arrays

    def only(self, names: Iterable[str]) -> InputSpec:
        """The part that names these inputs (each model of a batch takes its own)."""
        keep = set(names)
        return dataclasses.replace(self, shapes={k: v for k, v in self.shapes.items() if k in keep},
                                   arrays={k: v for k, v in self.arrays.items() if k in keep})


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Graph inputs that are not initializers (old IR lists both): those a caller feeds."""
    initialized = {init.name for init in model.graph.initializer}
    return [value for value in model.graph.input if value.name not in initialized]


def _dims_text(dims: Sequence[Dim] | None) -> str:
    if dims is None:
        return "unknown rank"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _reads(node: onnx.NodeProto) -> list[str]:
    """A node's inputs, and every value its subgraphs read (outer values among them)."""
    names = [n for n in node.input if n]
    for _, _, sub in subgraphs(node):
        names += [n for inner in walk(sub.node) for n in inner.input if n]
        names += [o.name for o in sub.output]
    return names


def data_inputs(model: onnx.ModelProto) -> dict[str, str]:
    """Graph inputs whose values pooling nodes read as data -> why: those reaching a data
    position (:data:`DATA_POSITIONS`) through :data:`PASS_THROUGH` operators, and integer inputs
    anywhere upstream of one (``rois`` -> Cast -> MaxRoiPool counts; image -> Conv -> proposals
    -> MaxRoiPool does not)."""
    model = inline_functions(model)
    producer: dict[str, onnx.NodeProto] = {}
    positions: list[tuple[str, str]] = []
    for node in walk(model.graph.node):
        producer.update((out, node) for out in node.output if out)
        if is_pool(node):
            for index, name in enumerate(node.input):
                what = DATA_POSITIONS.get((node.op_type, index))
                if name and what:
                    label = node.name or node.op_type
                    positions.append((name, f"{node.op_type} {label!r} input {what}"))
    inputs = {v.name: v for v in graph_inputs(model)}
    found: dict[str, str] = {}
    for start, why in positions:
        # (value, passed through only) pairs; a value computed anew passes on integers only
        todo, seen = [(start, True)], set()
        while todo:
            name, direct = todo.pop()
            if (name, direct) in seen:
                continue
            seen.add((name, direct))
            if name in inputs:
                code = inputs[name].type.tensor_type.elem_type
                integral = dtypes.NAME_OF_CODE.get(code, "float") not in dtypes.FLOATS
                if direct or integral:
                    found.setdefault(name, why)
                continue
            node = producer.get(name)
            if node is None:
                continue
            passes = direct and is_standard(node) and node.op_type in PASS_THROUGH
            todo += [(read, passes) for read in _reads(node)]
    return found


@dataclasses.dataclass(frozen=True)
class OpenDim:
    """One dim the model leaves open, with the size chosen for it and where that came from."""

    input: str
    axis: int
    declared: str  # the symbol, or "-1"/"?" as the model writes it
    size: int
    source: str  # "--shape", "--inputs", "default", or "--shape on x" (its symbol sized on x)
    #: ``declared`` is a dim_param (one name for several axes), not an unnamed open dim
    symbol: bool = False
    #: sized by a given array (``--inputs``): this input's, or another's of the same symbol
    arrays: bool = False

    def text(self) -> str:
        """``image[0] batch=1 (default)``, or ``x[0]=1 (declared -1; default)`` unnamed; the
        model's names in it made safe (:func:`~ortpool.errors.safe`)."""
        if self.declared == "?" or self.declared.lstrip("-").isdigit():
            return safe(f"{self.input}[{self.axis}]={self.size} "
                        f"(declared {self.declared}; {self.source})")
        return safe(f"{self.input}[{self.axis}] {self.declared}={self.size} ({self.source})")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class ResolvedInputs:
    """One array per model input, the open dims with their sizes, and each input's source."""

    feeds: dict[str, np.ndarray]
    dims: list[OpenDim]
    sources: dict[str, str]  # input -> "generated, seed 0" or "from FILE"
    style: str = CLI  # the InputSpec's: how the messages name what to set

    @property
    def shapes(self) -> dict[str, list[int]]:
        return {name: list(a.shape) for name, a in self.feeds.items()}

    @property
    def source(self) -> str:
        """The inputs' sources in one phrase: ``generated, seed 0`` or ``loaded from in.npz``,
        or per input when they differ."""
        kinds = sorted(set(self.sources.values()))
        if len(kinds) == 1:
            return kinds[0]
        return "; ".join(f"{name} {how}" for name, how in self.sources.items())

    def dims_text(self) -> str:
        """``image[0] batch=1 (default), image[2] h=64 (--shape)``; empty when nothing is open."""
        return ", ".join(d.text() for d in self.dims)

    def shape_hint(self) -> str:
        """The ``--shape`` options (``shapes=``) that set every open dim to its size, quoted for
        a shell where a name needs it: pasted back, they read as printed."""
        shapes = {name: array.shape for name, array in self.feeds.items()
                  if any(d.input == name for d in self.dims)}
        return _shape_setting(shapes, self.style) if shapes else ""

    def cannot_run(self, label: str, detail: str) -> OrtpoolError:
        """The error for a model onnxruntime cannot run on these inputs: the sizes chosen, how to
        set them, onnxruntime's reason."""
        reason = " ".join(detail.split())[:300]
        shapes = ", ".join(f"{safe(k)} {_dims_text(v)}" for k, v in self.shapes.items())
        where = f"{label}: " if label else ""
        # every open dim sized by the arrays given: a --shape must agree with them, so there is
        # nothing to set (the reason is in their values: an index out of range, a batch id)
        if all(d.arrays for d in self.dims):
            return OrtpoolError(f"{where}the model cannot run on {shapes}: {reason}")
        return OrtpoolError(f"{where}the model cannot run at the sizes chosen for its open dims "
                            f"({self.dims_text()}): {reason}. Set them with {self.shape_hint()} "
                            f"(or give arrays with {_arrays_setting(self.style)})")


def describe_dims(dims: Sequence[OpenDim], hint: str) -> list[str]:
    """The report's lines on the open dims (size and source; ``hint`` when a size is a
    default), and one per symbol given different sizes on different axes."""
    if not dims:
        return []
    lines = ["open dims: " + ", ".join(d.text() for d in dims)]
    if any(d.source in ("default", GROWN) for d in dims):
        lines.append(f"  sizes by default: set them with {hint}")
    sizes: dict[str, list[OpenDim]] = {}
    for dim in dims:
        if dim.symbol:
            sizes.setdefault(dim.declared, []).append(dim)
    for symbol, found in sizes.items():
        if len({d.size for d in found}) > 1:
            where = " and ".join(f"{d.size} on {d.input}[{d.axis}]" for d in found)
            how = ", ".join(dict.fromkeys(d.source for d in found))
            lines.append(f"dim {symbol!r} is {where} ({how}): onnxruntime sizes each axis on "
                         "its own, so each keeps its size")
    return lines


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


def _check_given(name: str, given: Sequence[int], declared: Sequence[Dim] | None,
                 how: str) -> None:
    """A shape from ``--shape`` or an array against the declared dims: rank and static sizes."""
    if declared is None:
        return
    if len(given) != len(declared):
        raise OrtpoolError(f"{how} gives input {name!r} {len(given)} dims {_dims_text(given)}; the "
                           f"model declares rank {len(declared)} {_dims_text(declared)}")
    for axis, (dim, size) in enumerate(zip(declared, given, strict=True)):
        if isinstance(dim, int) and dim != size:
            raise OrtpoolError(f"{how} gives input {name!r} size {size} on axis {axis}; the model "
                               f"fixes it at {dim} {_dims_text(declared)}")


def resolve(model: onnx.ModelProto, spec: InputSpec | None = None, seed: int = 0) -> ResolvedInputs:
    """Every model input as an array (the module docstring); an :class:`OrtpoolError` names the
    input, the figures and the option to change."""
    spec = spec or InputSpec()
    values = graph_inputs(model)
    for value in values:  # protobuf hands a name that is not UTF-8 over as bytes
        if isinstance(value.name, bytes):
            raise OrtpoolError(f"input {text(value.name)!r}: its name is not valid UTF-8; "
                               "onnxruntime's Python API cannot feed it (rename the input)")
    types = {v.name: value_type(v) for v in values}
    declared = {name: t.dims for name, t in types.items()}  # a negative size is open
    elems = {name: dtypes.NAME_OF_CODE.get(t.elem_type) for name, t in types.items()}
    given = _given(spec, [v.name for v in values], declared, elems)
    symbols = _symbols(given, declared)
    _require_data_inputs(model, spec)
    # 4. Every input: its shape, open dims named (grown where a pool would see no window);
    # the arrays given, or generated in input order.
    found = ResolvedInputs({}, [], {}, spec.style)
    sizes = {v.name: _sizes(v, declared[v.name], given, symbols, found.dims, spec.style)
             for v in values}
    found.dims = _grown(model, sizes, found.dims)
    rng = np.random.default_rng(seed)
    budget = MAX_GENERATED_BYTES
    for value in values:
        name = value.name
        if name in spec.arrays:
            found.feeds[name] = _typed(spec.arrays[name], elems[name])
            found.sources[name] = f"loaded from {spec.origin}"
            continue
        found.feeds[name] = _generated(rng, value, elems[name], sizes[name], budget, spec.style)
        found.sources[name] = f"generated, seed {seed}"
        budget -= found.feeds[name].nbytes
    return found


#: how often default sizes are doubled at most for a pool to see a whole window (64 -> 4096)
MAX_DOUBLINGS = 6
#: the source of a default size doubled so that every pool sees a whole window
GROWN = "default, doubled: a pool saw no whole window at the default"


def _grown(model: onnx.ModelProto, sizes: dict[str, list[int]], dims: list[OpenDim]
           ) -> list[OpenDim]:
    """The default sizes (off axis 0, else on it) doubled in place while a pooling node would see
    no whole window at them (a keras audio model strides its time axis below a pool's kernel):
    run where it can run, not judged where the spec's output is empty (ruling 19)."""
    chosen = [d for d in dims if d.source == "default" and d.axis != 0] or [
        d for d in dims if d.source == "default"]
    if not chosen or not any(is_pool(n) for n in all_nodes(model)):
        return dims
    doublings = 0
    # never past the generated bytes' budget (4 bytes an element, float's): a pool that still
    # sees no window is then judged as it is, and the report names the sizes
    while (doublings < MAX_DOUBLINGS and 8 * sum(map(math.prod, sizes.values()))
           <= MAX_GENERATED_BYTES and _windowless(model, sizes)):
        doublings += 1
        for dim in chosen:
            sizes[dim.input][dim.axis] *= 2
    if not doublings:
        return dims
    return [dataclasses.replace(d, size=sizes[d.input][d.axis], source=GROWN) if d in chosen
            else d for d in dims]


def _windowless(model: onnx.ModelProto, sizes: Mapping[str, Sequence[int]]) -> bool:
    """Whether a pooling node of ``model`` at input ``sizes`` has an axis without a whole window
    (False when inference cannot tell)."""
    from ortpool.model.site import find_sites  # the sites read the inputs' shapes, not this

    static = onnx.ModelProto()
    static.CopyFrom(model)
    for value in static.graph.input:
        if value.name in sizes and value.type.HasField("tensor_type"):
            shape = value.type.tensor_type.shape
            for dim, size in zip(shape.dim, sizes[value.name], strict=False):
                dim.Clear()
                dim.dim_value = size
    try:
        sites, _ = find_sites(static, skip_invalid=True)
        return any(min(geometry.output_spatial, default=1) <= 0
                   for geometry in (site.geometry() for site in sites if site.selected)
                   if geometry is not None)
    except Exception:  # inference of a model it cannot read: the defaults stay
        return False


def _given(spec: InputSpec, names: list[str], declared: dict[str, Sequence[Dim] | None],
           elems: dict[str, str | None]) -> dict[str, tuple[tuple[int, ...], str]]:
    """1. Shapes given by --shape and the arrays, checked: input -> (shape, option)."""
    shape, arrays = option("shape", spec.style), option("inputs", spec.style)
    for what, named in ((shape, spec.shapes), (arrays, spec.arrays)):
        unknown = [n for n in named if n not in names]
        if unknown:
            raise OrtpoolError(f"{what} names input {unknown[0]!r}, but the model's inputs are "
                               f"{', '.join(map(safe, names)) or '(none)'}")
    given: dict[str, tuple[tuple[int, ...], str]] = {}
    for name, array in spec.arrays.items():
        elem = elems[name]
        if elem is not None and _typed(array, elem).dtype != dtypes.NUMPY[elem]:
            raise OrtpoolError(f"{arrays} array {name!r} is {array.dtype}; the model's input "
                               f"{name!r} is {elem} ({dtypes.NUMPY[elem]})")
        _check_given(name, array.shape, declared[name], arrays)
        given[name] = (tuple(array.shape), arrays)
    for name, dims in spec.shapes.items():
        _check_given(name, dims, declared[name], shape)
        if name in given and given[name][0] != dims:
            setting = _shape_setting({name: dims}, spec.style)
            raise OrtpoolError(f"{setting} and the {arrays} array of shape "
                               f"{_dims_text(given[name][0])} disagree")
        given.setdefault(name, (dims, shape))
    return given


def _typed(array: np.ndarray, elem: str | None) -> np.ndarray:
    """A given array as the input's type ``elem`` where only numpy lost it: numpy.savez writes
    an ml_dtypes bfloat16 array as raw 2-byte records (``|V2``), which are its bits."""
    if elem == "bfloat16" and array.dtype == np.dtype("V2"):
        return array.view(dtypes.NUMPY[elem])
    return array


def _symbols(given: dict[str, tuple[tuple[int, ...], str]],
             declared: dict[str, Sequence[Dim] | None]) -> dict[str, tuple[int, str, str]]:
    """2. Each symbol's first size given: symbol -> (size, input, source)."""
    symbols: dict[str, tuple[int, str, str]] = {}
    for name, (dims, how) in given.items():
        for dim, size in zip(declared[name] or [], dims, strict=False):
            if isinstance(dim, str):
                symbols.setdefault(dim, (size, name, how))
    return symbols


def _require_data_inputs(model: onnx.ModelProto, spec: InputSpec) -> None:
    """3. Values a node reads as data must be the user's."""
    needed = {k: v for k, v in data_inputs(model).items() if k not in spec.arrays}
    if needed:
        listed = ", ".join(f"{name!r} (reaches {why})" for name, why in needed.items())
        if spec.style == PYTHON:
            how = f"pass them as {_arrays_setting(spec.style, list(needed))}"
        else:
            keywords = ", ".join(f"{safe(name)}=..." for name in needed)
            if not all(name.isidentifier() and not keyword.iskeyword(name) for name in needed):
                keywords = "**{" + ", ".join(f"{safe(name)!r}: ..." for name in needed) + "}"
            how = f"save the arrays with numpy.savez('in.npz', {keywords}) and pass --inputs in.npz"
        raise OrtpoolError(f"{'input' if len(needed) == 1 else 'inputs'} {listed} "
                           f"{'needs' if len(needed) == 1 else 'need'} "
                           f"{option('inputs', spec.style)}: generated values there (a batch index "
                           f"of -0.5, an index outside the output) prove nothing; {how}")


def _sizes(value: onnx.ValueInfoProto, dims: Sequence[Dim] | None,
           given: dict[str, tuple[tuple[int, ...], str]], symbols: dict[str, tuple[int, str, str]],
           opened: list[OpenDim], style: str = CLI) -> list[int]:
    """The input's shape: given, else its declared dims, each open one sized (by its symbol, else
    the default, which then sizes the symbol) and added to ``opened``."""
    name = value.name
    if dims is None and name not in given:
        raise OrtpoolError(f"input {name!r} has no declared shape: give it with "
                           f"{_shape_setting({name: ['D1', 'D2', '...']}, style)} or "
                           f"{_arrays_setting(style, [name])}")
    shape, how = given.get(name, ((), ""))
    sizes: list[int] = []
    for axis, dim in enumerate(dims or []):
        if isinstance(dim, int):
            sizes.append(dim)
            continue
        label = dim if isinstance(dim, str) else _open_label(value, axis)
        first = name  # whose size a symbol carries
        if name in given:
            size, by = shape[axis], how
        elif isinstance(dim, str) and dim in symbols:
            size, first, by = symbols[dim]
        else:
            size, by = (DEFAULT_BATCH if axis == 0 else DEFAULT_SIZE), "default"
            if isinstance(dim, str):
                symbols[dim] = (size, name, by)
        source = f"{by} on {first}" if first != name else by
        sizes.append(size)
        opened.append(OpenDim(name, axis, label, size, source, isinstance(dim, str),
                              by == option("inputs", style)))
    return list(shape) if name in given else sizes


def _generated(rng: np.random.Generator, value: onnx.ValueInfoProto, elem: str | None,
               sizes: list[int], budget: int, style: str) -> np.ndarray:
    """Seeded values for an input not given, within what is left of the model's byte budget."""
    name = value.name
    if elem is None:
        # no advice to give it as an array: ortpool feeds no other type either
        raise OrtpoolError(f"input {name!r} is not a tensor of a type ortpool generates or feeds "
                           f"({_type_text(value)}; it takes {', '.join(dtypes.NUMPY)})")
    nbytes = math.prod(sizes) * dtypes.NUMPY[elem].itemsize
    if nbytes > budget:
        raise OrtpoolError(f"input {name!r} of shape {_dims_text(sizes)} ({elem}) would be "
                           f"{nbytes} bytes of generated values; ortpool generates at most "
                           f"{MAX_GENERATED_BYTES} bytes per model: check "
                           f"{option('shape', style)}, or give the arrays with "
                           f"{_arrays_setting(style)}")
    return random_tensor(rng, sizes, elem)


def _open_label(value: onnx.ValueInfoProto, axis: int) -> str:
    dim = value.type.tensor_type.shape.dim[axis]
    return str(dim.dim_value) if dim.HasField("dim_value") else "?"


def _type_text(value: onnx.ValueInfoProto) -> str:
    if value.type.HasField("tensor_type"):
        code = value.type.tensor_type.elem_type
        known = dict((v, k) for k, v in onnx.TensorProto.DataType.items())
        return known.get(code, f"element type {code}, which onnx does not define") if code \
            else "no element type"
    return value.type.WhichOneof("value") or "no type"
