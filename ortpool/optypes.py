"""The ortpool custom-op vocabulary: one op type per (operator, spec version, arity variant).

onnxruntime-extensions ops carry no opset version and every declared input and output is
required, so the version and the arity live in the name (``MaxPool_12_Indices``: X -> Y,
Indices); the whole table is docs/optypes.md.
"""

from __future__ import annotations

import dataclasses
import functools

from ortpool import versions
from ortpool.versions import OpVersion

DOMAIN = "ortpool"
#: Opset version written for the ortpool domain; ops are versioned by name, not by this.
DOMAIN_VERSION = 1

INDICES = "Indices"
OUTPUT_SHAPE = "OutputShape"


@dataclasses.dataclass(frozen=True)
class OpType:
    """One op type of the ortpool domain."""

    name: str
    spec: OpVersion
    variant: str | None  # None, INDICES or OUTPUT_SHAPE

    @property
    def n_inputs(self) -> int:
        """The schema's required inputs, plus MaxUnpool's output_shape in that variant."""
        return self.spec.min_inputs + (1 if self.variant == OUTPUT_SHAPE else 0)

    @property
    def input_names(self) -> tuple[str, ...]:
        return self.spec.input_names[: self.n_inputs]

    @property
    def n_outputs(self) -> int:
        return 2 if self.variant == INDICES else 1

    @property
    def dtypes(self) -> tuple[str, ...]:
        """Element types of X (and Y) a kernel is registered for."""
        return self.spec.carried_types


def op_type_name(op: str, version: int, variant: str | None = None) -> str:
    return f"{op}_{version}" + (f"_{variant}" if variant else "")


@functools.cache
def all_op_types() -> tuple[OpType, ...]:
    """Every ortpool op type, derived from the schema table."""
    found = []
    for spec in versions.all_versions():
        variants: list[str | None] = [None]
        if spec.op == "MaxPool" and spec.max_outputs > 1:
            variants.append(INDICES)
        if spec.op == "MaxUnpool":
            variants.append(OUTPUT_SHAPE)
        for variant in variants:
            found.append(OpType(op_type_name(spec.op, spec.version, variant), spec, variant))
    return tuple(found)


def parse(name: str) -> OpType:
    """The :class:`OpType` called ``name``; a ValueError for anything else."""
    found = next((t for t in all_op_types() if t.name == name), None)
    if found is not None:
        return found
    raise ValueError(f"{name!r} is not an ortpool op type; expected "
                     "<Op>_<version>[_Indices|_OutputShape] with a spec version of "
                     f"{', '.join(versions.OPERATORS)} (e.g. MaxPool_12)")


def for_node(op: str, version: int, n_inputs: int, n_outputs: int) -> OpType:
    """The op type that runs a standard node with the given (non-empty) input/output counts."""
    variant = None
    if op == "MaxPool" and n_outputs > 1:
        variant = INDICES
    elif op == "MaxUnpool" and n_inputs > 2:
        variant = OUTPUT_SHAPE
    return parse(op_type_name(op, version, variant))
