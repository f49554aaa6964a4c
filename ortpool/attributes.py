"""Pooling attributes: checked against a spec version, defaults filled, and the string encoding.

onnxruntime-extensions Python ops take only int, float and string attributes, so list attributes
travel as decimal strings joined by commas (``"3,3"``, the empty list ``""``), float attributes as
``repr`` strings (ruling 15); :func:`normalize` accepts either form.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import onnx

from ortpool.errors import OrtpoolError
from ortpool.versions import GLOBAL_OPERATORS, OpVersion

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
_INT_LIST = re.compile(r"^\s*-?\d+\s*(,\s*-?\d+\s*)*$")
#: A decimal number as ``repr(float)`` writes it, and the special values it writes (checked after).
_FLOAT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$|^\s*[-+]?(inf|nan)\s*$")


def encode_ints(values: Sequence[int]) -> str:
    return ",".join(str(int(v)) for v in values)


def decode_ints(text: str, name: str = "value") -> tuple[int, ...]:
    """``"3,3" -> (3, 3)``; ``"" -> ()``. Anything else is an OrtpoolError naming ``name``."""
    if text.strip() == "":
        return ()
    if not _INT_LIST.match(text):
        raise OrtpoolError(f"{name}={_shown(text)!r} is not a comma-separated list of integers")
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:  # more digits than Python converts (4300): far beyond int64 anyway
        raise OrtpoolError(f"{name}={_shown(text)!r} holds a value beyond int64") from None


def _shown(text: str) -> str:
    """``text`` for a message: whole up to 100 characters, else its start and its length."""
    return text if len(text) <= 100 else f"{text[:60]}... ({len(text)} characters)"


#: ONNX attributes are int64; the kernels compute coordinates in int64 (ortpool.geometry).
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def encode_float(value: float) -> str:
    """``0.1234567 -> "0.1234567"``: the shortest text that reads back as the same double."""
    return repr(float(value))


def decode_float(text: str, name: str = "value") -> float:
    """``"0.0625" -> 0.0625``; anything but a decimal number is an OrtpoolError naming ``name``."""
    if not _FLOAT.match(text):
        raise OrtpoolError(f"{name}={text!r} is not a decimal number")
    return float(text)


@dataclasses.dataclass(frozen=True)
class PoolAttrs:
    """Every attribute of a pooling node, resolved for ``rank`` spatial axes; ``pads`` in ONNX
    order as written (zeros for SAME/VALID: the effective pads are :mod:`ortpool.geometry`'s)."""

    kernel_shape: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[int, ...]
    dilations: tuple[int, ...]
    auto_pad: str = "NOTSET"
    ceil_mode: int = 0
    count_include_pad: int = 0
    storage_order: int = 0
    #: LpPool's exponent: a float at version 1, an int from version 2 (2 for the other ops).
    p: int | float = 2

    @property
    def rank(self) -> int:
        return len(self.kernel_shape)


@dataclasses.dataclass(frozen=True)
class GlobalAttrs:
    """The global pools: the window is the whole spatial extent; only GlobalLpPool has ``p``."""

    p: int | float = 2


@dataclasses.dataclass(frozen=True)
class RoiAttrs:
    """MaxRoiPool: the output bins per RoI (height, width), the RoI-to-input coordinate scale."""

    pooled_shape: tuple[int, int]
    spatial_scale: float = 1.0


#: What :func:`normalize` returns, by operator family.
NodeAttrs = PoolAttrs | GlobalAttrs | RoiAttrs


def _as_ints(name: str, value: Any) -> tuple[int, ...]:
    """An int-list attribute as a tuple, each value within int64 (what ONNX can carry)."""
    if isinstance(value, str | bytes):
        values = decode_ints(value.decode() if isinstance(value, bytes) else value, name)
    else:
        try:
            items = tuple(value)
        except TypeError:
            raise OrtpoolError(f"{name}={value!r} must be a list of integers") from None
        if any(isinstance(item, bool) or not isinstance(item, int | np.integer) for item in items):
            raise OrtpoolError(f"{name}={list(items)!r} must be a list of integers")
        values = tuple(int(item) for item in items)
    if any(not INT64_MIN <= v <= INT64_MAX for v in values):
        raise OrtpoolError(f"{name}={_shown(encode_ints(values))!r} holds a value beyond int64 "
                           f"(ONNX attributes are int64: {INT64_MIN} to {INT64_MAX})")
    return values


def _as_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, str) and re.fullmatch(r"-?\d{1,4000}", value.strip()):
            return int(value)
        raise OrtpoolError(f"{name}={value!r} must be an integer")
    return int(value)


def _as_float(name: str, value: Any) -> float:
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str):
        return decode_float(value, name)
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise OrtpoolError(f"{name}={value!r} must be a number")
    return float(value)


def _p_value(opv: OpVersion, given: Mapping[str, Any]) -> int | float:
    """``p`` of LpPool/GlobalLpPool: of the version's kind, finite and > 0 (ruling 12)."""
    spec = opv.attrs["p"]
    value = given.get("p", opv.default("p"))
    if spec.kind == "float":
        p: int | float = _as_float("p", value)
        if not math.isfinite(p) or p <= 0:
            raise OrtpoolError(f"p={encode_float(p)} must be a finite number > 0 (the Lp norm "
                               "needs p > 0)")
        return p
    p = _as_int("p", value)
    if p <= 0:
        raise OrtpoolError(f"p={p} must be > 0 (the Lp norm needs p > 0)")
    return p


def normalize(opv: OpVersion, given: Mapping[str, Any], rank: int | None = None) -> NodeAttrs:
    """Check ``given`` against ``opv``'s schema and fill every default; ``rank``: the input's
    spatial axes when known. Errors name the op version, the attribute and its value."""
    try:
        unknown = sorted(set(given) - set(opv.attrs))
        if unknown:
            names = ", ".join(sorted(opv.attrs)) or "no attributes"
            raise OrtpoolError(f"attribute {unknown[0]!r} does not exist in this version (it has "
                               f"{names})")
        if opv.op in GLOBAL_OPERATORS:
            return GlobalAttrs(_p_value(opv, given)) if "p" in opv.attrs else GlobalAttrs()
        if opv.op == "MaxRoiPool":
            return _normalize_roi(opv, given, rank)
        return _normalize(opv, given, rank)
    except OrtpoolError as err:
        raise err.located(op=opv.op, version=opv.version) from None


def _normalize_roi(opv: OpVersion, given: Mapping[str, Any], rank: int | None) -> RoiAttrs:
    if "pooled_shape" not in given:
        raise OrtpoolError("attribute 'pooled_shape' is required")
    pooled = _as_ints("pooled_shape", given["pooled_shape"])
    if len(pooled) != 2:
        raise OrtpoolError(f"pooled_shape={encode_ints(pooled)!r} must have 2 values (height, "
                           "width)")
    _check_positive("pooled_shape", pooled)
    if rank is not None and rank != 2:
        raise OrtpoolError(f"the input has {rank} spatial axes; MaxRoiPool takes N x C x H x W")
    scale = _as_float("spatial_scale", given.get("spatial_scale", opv.default("spatial_scale")))
    if not math.isfinite(scale):
        raise OrtpoolError(f"spatial_scale={encode_float(scale)} must be finite")
    return RoiAttrs((pooled[0], pooled[1]), scale)


def _normalize(opv: OpVersion, given: Mapping[str, Any], rank: int | None) -> PoolAttrs:
    # Checked in this order, so that the first wrong attribute is the one named.
    kernel = _kernel_shape(opv, given, rank)
    rank = len(kernel)
    strides = _per_axis(opv, given, "strides", rank)
    _check_positive("strides", strides)
    dilations = _per_axis(opv, given, "dilations", rank)
    _check_positive("dilations", dilations)
    pads = _per_axis(opv, given, "pads", rank)
    if any(p < 0 for p in pads):
        raise OrtpoolError(f"pads={encode_ints(pads)!r} must all be >= 0")
    auto_pad = _auto_pad(opv, given, pads)
    flags = {}
    for name in ("ceil_mode", "count_include_pad", "storage_order"):
        value = _as_int(name, given.get(name, opv.default(name)))
        if value not in (0, 1):
            raise OrtpoolError(f"{name}={value} must be 0 or 1")
        flags[name] = value
    return PoolAttrs(kernel_shape=kernel, strides=strides, pads=pads, dilations=dilations,
                     auto_pad=auto_pad, p=_p_value(opv, given) if "p" in opv.attrs else 2, **flags)


def _kernel_shape(opv: OpVersion, given: Mapping[str, Any], rank: int | None) -> tuple[int, ...]:
    """kernel_shape, present, of the input's rank (when known) and positive."""
    if "kernel_shape" not in given:
        if not opv.attrs["kernel_shape"].required:
            # LpPool-1's schema: optional, with no default and no rule to derive one.
            raise OrtpoolError("attribute 'kernel_shape' is missing: this version's schema makes "
                               "it optional, but no output size can be computed without it")
        raise OrtpoolError("attribute 'kernel_shape' is required")
    kernel = _as_ints("kernel_shape", given["kernel_shape"])
    if not kernel:
        raise OrtpoolError("kernel_shape='' must name at least one spatial axis")
    if rank is not None and len(kernel) != rank:
        raise OrtpoolError(f"kernel_shape={encode_ints(kernel)!r} has {len(kernel)} axes but the "
                           f"input has {rank} spatial axes")
    _check_positive("kernel_shape", kernel)
    return kernel


def _per_axis(opv: OpVersion, given: Mapping[str, Any], name: str, rank: int) -> tuple[int, ...]:
    """strides, dilations or pads as given (an empty list as absent), else the per-axis fill."""
    fill = cast(tuple[int, ...], opv.default(name, rank))
    if name not in given:
        return fill
    values = _as_ints(name, given[name])
    if not values:
        return fill
    if len(values) != len(fill):
        raise OrtpoolError(f"{name}={encode_ints(values)!r} has {len(values)} values; a kernel of "
                           f"rank {rank} needs {len(fill)}")
    return values


def _auto_pad(opv: OpVersion, given: Mapping[str, Any], pads: tuple[int, ...]) -> str:
    auto_pad = given.get("auto_pad", opv.default("auto_pad"))
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if not isinstance(auto_pad, str):
        raise OrtpoolError(f"auto_pad={auto_pad!r} must be a string")
    # Older exporters write "", which onnxruntime reads as NOTSET; so does ortpool (the reports
    # say so: empty_auto_pad_note).
    auto_pad = auto_pad or "NOTSET"
    if auto_pad not in AUTO_PADS:
        raise OrtpoolError(f"auto_pad={auto_pad!r} must be one of {', '.join(AUTO_PADS)}")
    if auto_pad != "NOTSET" and any(pads):
        # ruling 4: the spec forbids both; all-zero pads are tolerated.
        raise OrtpoolError(f"pads={encode_ints(pads)!r} cannot be used with auto_pad={auto_pad!r}")
    return auto_pad


def _check_positive(name: str, values: tuple[int, ...]) -> None:
    if any(v < 1 for v in values):
        raise OrtpoolError(f"{name}={encode_ints(values)!r} must all be >= 1")


def empty_auto_pad_note(node: onnx.NodeProto, name: str) -> str | None:
    """The report's note for a node whose ``auto_pad`` is the empty string (read as NOTSET)."""
    for attr in node.attribute:
        if attr.name == "auto_pad" and attr.type == onnx.AttributeProto.STRING and not attr.s:
            return (f"node {name!r}: auto_pad='' read as NOTSET, as onnxruntime reads it (older "
                    "exporters write the empty string)")
    return None


def full_attributes(opv: OpVersion, attrs: Any) -> dict[str, int | str]:
    """Every attribute of ``opv`` in the ortpool node encoding, defaults filled, from what
    :func:`normalize` returned; SAME/VALID nodes keep ``pads=""`` (ruling 4)."""
    values: dict[str, Any] = dataclasses.asdict(attrs)
    out: dict[str, int | str] = {}
    for name, spec in opv.attrs.items():
        value = values[name]
        if spec.kind == "ints":
            if name == "pads" and attrs.auto_pad != "NOTSET":
                value = ()
            out[name] = encode_ints(value)
        elif spec.kind == "float":
            out[name] = encode_float(value)
        else:
            out[name] = value
    return out


def standard_attributes(opv: OpVersion, attrs: NodeAttrs) -> dict[str, Any]:
    """``attrs`` as a standard node of ``opv`` writes them (lists as lists), leaving out every
    value the version's default gives, and ``pads`` under SAME/VALID (ruling 4)."""
    rank = attrs.rank if isinstance(attrs, PoolAttrs) else None
    auto_pad = getattr(attrs, "auto_pad", "NOTSET")
    out: dict[str, Any] = {}
    for name, spec in opv.attrs.items():
        value = getattr(attrs, name)
        if (name == "pads" and auto_pad != "NOTSET") or value == opv.default(name, rank):
            continue
        out[name] = list(value) if spec.kind == "ints" else value
    return out


def attribute_values(attributes: Iterable[onnx.AttributeProto]) -> dict[str, Any]:
    """Attribute protos as plain Python values, strings decoded: what :func:`normalize` takes."""
    values: dict[str, Any] = {}
    for attr in attributes:
        value = onnx.helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            try:
                value = value.decode()
            except UnicodeDecodeError:
                # onnxruntime-extensions decodes string attributes before every call of a
                # Python op; invalid UTF-8 there ends the process, so it is refused here first.
                raise OrtpoolError(f"attribute {attr.name!r} is not UTF-8 text: "
                                   f"{value!r}") from None
        values[attr.name] = value
    return values
