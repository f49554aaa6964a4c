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
    "LpPool": (11, 18, 22),
    "GlobalAveragePool": (21, 22),
    # onnxruntime 1.31 registers MaxRoiPool up to version 21 only (no MaxRoiPool-22 kernel).
    "MaxRoiPool": (21,),
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
    #: LpPool, the global pools, MaxRoiPool: summarised apart, so that the geometric mean of
    #: the first three operators stays comparable with earlier runs (docs/bench.md).
    family: bool = False
    #: MaxRoiPool: how many RoIs (proposals on the input image, ruling 14).
    rois: int = 0

    @property
    def cnn(self) -> bool:
        """A CNN layer shape of the first three operators: in the geometric mean."""
        return not (self.fixed_cost or self.long_axis or self.family)

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
        """Inputs named as in :mod:`ortpool.bench.models`: X, random normals (MaxUnpool: a
        MaxPool's values and indices, as in SegNet; MaxRoiPool: RPN-like proposals)."""
        rng = np.random.default_rng(seed)
        if self.op == "MaxRoiPool":
            x = rng.standard_normal(self.shape, dtype=np.float32)
            scale = dict(self.attrs)["spatial_scale"]
            height, width = (n / scale for n in self.shape[2:])
            x1 = rng.uniform(0, width - 16, self.rois)
            y1 = rng.uniform(0, height - 16, self.rois)
            x2 = np.minimum(x1 + rng.uniform(16, 400, self.rois), width - 1)
            y2 = np.minimum(y1 + rng.uniform(16, 400, self.rois), height - 1)
            rois = np.stack([np.zeros(self.rois), x1, y1, x2, y2], axis=1).astype(np.float32)
            return {"X": x, "rois": rois}
        if self.op != "MaxUnpool":
            return {"X": rng.standard_normal(self.shape, dtype=np.float32)}
        attrs = self.attributes
        source_shape = (*self.shape[:2], *((n - 1) * s + k for n, s, k in zip(
            self.shape[2:], attrs["strides"], attrs["kernel_shape"], strict=True)))
        source = rng.standard_normal(source_shape, dtype=np.float32)
        values, indices = kernels.max_pool(source, version=12, return_indices=True, **attrs)
        return {"X": values, "I": indices}


def _case(name: str, title: str, op: str, shape: Sequence[int], k: int, s: int, p: int = 0,
          **flags: bool) -> Case:
    """A case with kernel ``k``, stride ``s`` and pads ``p`` (if any) on every spatial axis."""
    rank = len(shape) - 2
    attrs: dict[str, Any] = {"kernel_shape": (k,) * rank, "strides": (s,) * rank}
    if p:
        attrs["pads"] = (p,) * (2 * rank)
    return Case(name, title, op, tuple(shape), tuple(sorted(attrs.items())), **flags)


CASES: tuple[Case, ...] = (
    _case("resnet-stem", "ResNet stem MaxPool k3 s2 p1", "MaxPool", (1, 64, 112, 112), 3, 2, 1),
    _case("vgg", "VGG MaxPool k2 s2", "MaxPool", (1, 64, 224, 224), 2, 2),
    _case("segnet-indices", "SegNet MaxPool+Indices k2 s2", "MaxPool", (1, 64, 224, 224), 2, 2,
          indices=True),
    _case("segnet-unpool", "SegNet MaxUnpool k2 s2", "MaxUnpool", (1, 64, 112, 112), 2, 2),
    _case("densenet-transition", "DenseNet transition AvgPool k2 s2", "AveragePool",
          (1, 128, 56, 56), 2, 2),
    _case("inception", "Inception AvgPool k3 s1 p1", "AveragePool", (1, 192, 28, 28), 3, 1, 1),
    _case("3d", "3-D MaxPool k3 s2 p1", "MaxPool", (1, 32, 16, 56, 56), 3, 2, 1),
    _case("1d", "1-D AvgPool k4 s4", "AveragePool", (1, 256, 4096), 4, 4),
    # 25 ms frames every 10 ms of 16 kHz audio, about a minute of it.
    _case("audio-1d", "1-D audio AvgPool k400 s160 (long axis: plan time)", "AveragePool",
          (1, 1, 1_000_000), 400, 160, long_axis=True),
    _case("fixed-cost", "tiny MaxPool k2 s2 (cost per call)", "MaxPool", (1, 1, 4, 4), 2, 2,
          fixed_cost=True),
    # The rest of the family.
    Case("gap-r50-head", "ResNet-50 head GlobalAveragePool", "GlobalAveragePool",
         (1, 2048, 7, 7), (), family=True),
    Case("gap-512", "GlobalAveragePool on a 512x512 map", "GlobalAveragePool",
         (1, 64, 512, 512), (), family=True),
    Case("lppool", "LpPool p=2 k3 s2 p1", "LpPool", (1, 64, 112, 112),
         (("kernel_shape", (3, 3)), ("p", 2), ("pads", (1, 1, 1, 1)), ("strides", (2, 2))),
         family=True),
    Case("faster-rcnn-roi", "Faster R-CNN MaxRoiPool 300 RoIs 7x7", "MaxRoiPool",
         (1, 512, 38, 50), (("pooled_shape", (7, 7)), ("spatial_scale", 0.0625)), family=True,
         rois=300),
)


def select(patterns: Sequence[str] | None) -> list[Case]:
    """The cases whose name matches any of ``patterns`` (shell globs or substrings), in order;
    an empty selection is an error naming the known cases."""
    if not patterns:
        return list(CASES)
    chosen = [c for c in CASES
              if any(fnmatch.fnmatchcase(c.name, p) or p in c.name for p in patterns)]
    if not chosen:
        raise ValueError(f"no benchmark case matches {', '.join(patterns)}; the cases are "
                         f"{', '.join(c.name for c in CASES)}")
    return chosen
