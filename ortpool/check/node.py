"""One pooling node as the engine judges it: :class:`NodeFacts`.

The one description of a pooling node below the commands: ``fix`` builds it from the model's
type inference (:mod:`ortpool.fix.sites`), ``validate`` from the node and the inputs captured for
it (:func:`from_spec`); the proof inputs (:mod:`ortpool.check.cases`), the forms
(:mod:`ortpool.fix.forms`) and the judgement (:mod:`ortpool.check.judge`) read it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ortpool import dtypes, versions
from ortpool.attributes import NodeAttrs, PoolAttrs
from ortpool.dtypes import FLOATS
from ortpool.geometry import PoolGeometry, pool_geometry
from ortpool.model.singlenode import NodeSpec
from ortpool.versions import WINDOW_OPERATORS, OpVersion

#: Ops whose value is a max of input elements: NaN and -inf are where onnxruntime's max differs
#: (ruling 6), and a fix guards them only in the non-finite domain (:mod:`ortpool.check.domain`).
MAX_LIKE = ("MaxPool", "GlobalMaxPool", "MaxRoiPool")



@dataclasses.dataclass(frozen=True)
class NodeFacts:
    """What a form may depend on: one node's spec, attributes, element type and sizes."""

    op: str
    version: int
    opset: int  # the ai.onnx opset governing the node (decides which ops can be inserted)
    attrs: NodeAttrs
    elem: str  # element type of X, as the schemas name it ("float", "uint8", ...)
    spatial: tuple[int, ...] | None  # static spatial sizes of X; None when any is symbolic
    n_inputs: int = 1
    n_outputs: int = 1
    indices_used: bool = False  # MaxPool's Indices output is read by a node or a graph output
    rank: int | None = None  # spatial axes of X (None: unknown); the kernel's length if any
    #: the node's attributes as written (name -> Python value), for the kernels and tolerances
    attributes: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False)
    #: the node keeps ``version`` though ``opset`` makes its op another version (a lifted model:
    #: :mod:`ortpool.fix.lift`); only a form that replaces the node can realize it
    pinned: bool = False

    @property
    def spec(self) -> OpVersion:
        return versions.get(self.op, self.version)

    @property
    def windowed(self) -> bool:
        """MaxPool, AveragePool, LpPool: a window given by kernel, strides, pads."""
        return self.op in WINDOW_OPERATORS and isinstance(self.attrs, PoolAttrs)

    @property
    def spatial_rank(self) -> int | None:
        if isinstance(self.attrs, PoolAttrs):
            return self.attrs.rank
        return self.rank

    def geometry(self) -> PoolGeometry | None:
        """The spec's geometry on the static sizes (None when they are symbolic)."""
        if self.spatial is None or not isinstance(self.attrs, PoolAttrs) or not self.windowed:
            return None
        return pool_geometry(self.spatial, self.attrs)



def lowest(elem: str) -> float | int:
    """The value that never wins a max and is the empty window's result (rulings 5, 6)."""
    if elem in FLOATS:
        return -math.inf
    info = np.iinfo(np.dtype(elem))
    return int(info.min)


def from_dims(
    spec: NodeSpec,
    elem: str,
    dims: Sequence[int | None] | None,
    indices_used: bool | None = None,
) -> NodeFacts:
    """The facts of a node of ``spec`` whose X is of element type ``elem`` and has ``dims``
    (None for a size that is not static; ``dims`` None: the rank is unknown too, and the
    kernel's length sets it): its spatial sizes are static where every one of them is, its
    Indices compared wherever it has them (``indices_used`` None: when the node has two
    outputs).

    Example: ``from_dims(NodeSpec("MaxPool", 12, {"kernel_shape": [2, 2]}, 1, 1), "float",
    (1, 3, 8, None))`` gives op MaxPool, version 12, rank 2, spatial None (a size is symbolic).
    """
    opv = spec.spec
    rank = len(dims) - 2 if dims is not None else None
    spatial = None
    if dims is not None and all(isinstance(d, int) for d in dims[2:]):
        spatial = tuple(int(d) for d in dims[2:])
    return NodeFacts(
        op=opv.op,
        version=opv.version,
        opset=spec.opset,
        attrs=spec.pool_attrs(rank),
        elem=elem,
        spatial=spatial,
        n_inputs=spec.n_inputs,
        n_outputs=spec.n_outputs,
        indices_used=spec.n_outputs > 1 if indices_used is None else indices_used,
        rank=rank,
        attributes=dict(spec.attributes),
    )


def from_spec(
    spec: NodeSpec, feeds: Sequence[np.ndarray], indices_used: bool | None = None
) -> NodeFacts:
    """The facts of an isolated node fed ``feeds``: :func:`from_dims` at the arrays' (static)
    sizes and element type.

    Example: ``from_spec(NodeSpec("MaxPool", 12, {"kernel_shape": [2, 2]}, 1, 1), [x])`` with x
    of shape (1, 3, 8, 8) float32 gives op MaxPool, version 12, elem "float", spatial (8, 8).
    """
    x = feeds[0]
    return from_dims(spec, dtypes.name_of(x.dtype), tuple(int(d) for d in x.shape), indices_used)


def node_spec(facts: NodeFacts) -> NodeSpec:
    """The node as an isolated single-node model describes it: its attributes, at the opset that
    introduced its spec version (which resolves to that version, pinned or not)."""
    return NodeSpec(facts.op, facts.version, dict(facts.attributes), facts.n_inputs,
                    facts.n_outputs)
