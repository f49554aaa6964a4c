"""The benchmark cases: pooling layers of real networks, plus one tiny call for the fixed cost."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Sequence
from typing import Any

import numpy as np

from ortpool import kernels

#: Opsets at which the built-in kernel is timed, per op. The ratio uses the fastest; onnxruntime's
#: AveragePool takes a much slower code path from opset 19 on, so that column is shown apart.
BUILTIN_OPSETS: dict[str, tuple[int, ...]] = {
    "MaxPool": (12, 22),
    "AveragePool": (11, 19, 22),
    "MaxUnpool": (11, 22),
}


@dataclasses.dataclass(frozen=True)
class Case:
    """One single-node pooling workload."""

    name: str
    title: str
    op: str
    shape: tuple[int, ...]
    attrs: tuple[tuple[str, Any], ...]
    #: MaxPool: also produce Indices. MaxUnpool: the pooling (k, s) that made its inputs.
    indices: bool = False
    #: The 1x1x4x4 call: measures the per-call cost, kept out of the geometric mean.
    fixed_cost: bool = False
    #: A long 1-D axis (audio): its plan time matters (a new length per call), kept out of the
    #: geometric mean of the CNN shapes.
    long_axis: bool = False

    @property
    def cnn(self) -> bool:
        """A CNN layer shape: in the geometric mean."""
        return not (self.fixed_cost or self.long_axis)

    @property
    def attributes(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.attrs}

    @property
    def opsets(self) -> tuple[int, ...]:
        return BUILTIN_OPSETS[self.op]

    @property
    def shape_text(self) -> str:
        return "x".join(str(d) for d in self.shape)

    def inputs(self, seed: int = 0) -> dict[str, np.ndarray]:
        """Inputs named as in :mod:`ortpool.bench.models`: X (and I for MaxUnpool).

        Values are random normals; MaxUnpool gets the values and indices of a MaxPool with the
        same kernel on the 2x larger input, as in SegNet's decoder.
        """
        rng = np.random.default_rng(seed)
        if self.op != "MaxUnpool":
            return {"X": rng.standard_normal(self.shape, dtype=np.float32)}
        attrs = self.attributes
        source_shape = (
            *self.shape[:2],
            *(
                (n - 1) * s + k
                for n, s, k in zip(
                    self.shape[2:], attrs["strides"], attrs["kernel_shape"], strict=True
                )
            ),
        )
        source = rng.standard_normal(source_shape, dtype=np.float32)
        values, indices = kernels.max_pool(source, version=12, return_indices=True, **attrs)
        return {"X": values, "I": indices}


def _case(
    name: str,
    title: str,
    op: str,
    shape: Sequence[int],
    k: int,
    s: int,
    p: int = 0,
    **flags: bool,
) -> Case:
    """A case with kernel ``k``, stride ``s`` and pads ``p`` on every spatial axis (no pads
    attribute when ``p`` is 0)."""
    rank = len(shape) - 2
    attrs: dict[str, Any] = {"kernel_shape": (k,) * rank, "strides": (s,) * rank}
    if p:
        attrs["pads"] = (p,) * (2 * rank)
    return Case(name, title, op, tuple(shape), tuple(sorted(attrs.items())), **flags)


CASES: tuple[Case, ...] = (
    _case("resnet-stem", "ResNet stem MaxPool k3 s2 p1", "MaxPool", (1, 64, 112, 112), 3, 2, 1),
    _case("vgg", "VGG MaxPool k2 s2", "MaxPool", (1, 64, 224, 224), 2, 2),
    _case(
        "segnet-indices",
        "SegNet MaxPool+Indices k2 s2",
        "MaxPool",
        (1, 64, 224, 224),
        2,
        2,
        indices=True,
    ),
    _case("segnet-unpool", "SegNet MaxUnpool k2 s2", "MaxUnpool", (1, 64, 112, 112), 2, 2),
    _case(
        "densenet-transition",
        "DenseNet transition AvgPool k2 s2",
        "AveragePool",
        (1, 128, 56, 56),
        2,
        2,
    ),
    _case("inception", "Inception AvgPool k3 s1 p1", "AveragePool", (1, 192, 28, 28), 3, 1, 1),
    _case("3d", "3-D MaxPool k3 s2 p1", "MaxPool", (1, 32, 16, 56, 56), 3, 2, 1),
    _case("1d", "1-D AvgPool k4 s4", "AveragePool", (1, 256, 4096), 4, 4),
    # 25 ms frames every 10 ms of 16 kHz audio, about a minute of it.
    _case(
        "audio-1d",
        "1-D audio AvgPool k400 s160 (long axis: plan time)",
        "AveragePool",
        (1, 1, 1_000_000),
        400,
        160,
        long_axis=True,
    ),
    _case(
        "fixed-cost",
        "tiny MaxPool k2 s2 (cost per call)",
        "MaxPool",
        (1, 1, 4, 4),
        2,
        2,
        fixed_cost=True,
    ),
)


def select(patterns: Sequence[str] | None) -> list[Case]:
    """The cases whose name matches any of ``patterns`` (shell globs or substrings), in order.

    An empty selection is an error naming the known cases.
    """
    if not patterns:
        return list(CASES)
    chosen = [
        c for c in CASES if any(fnmatch.fnmatchcase(c.name, p) or p in c.name for p in patterns)
    ]
    if not chosen:
        raise ValueError(
            f"no benchmark case matches {', '.join(patterns)}; the cases are "
            f"{', '.join(c.name for c in CASES)}"
        )
    return chosen
