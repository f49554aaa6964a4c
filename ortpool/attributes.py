"""Pooling attributes: checked against a spec version, defaults filled, and the string encoding.

onnxruntime-extensions Python ops take only int, float and string attributes, so list attributes
travel as decimal strings joined by commas: ``(3, 3)`` is ``"3,3"`` and the empty list is ``""``.
:func:`normalize` accepts either form and returns one :class:`PoolAttrs` with every attribute of
the version resolved for a given kernel rank.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import onnx

from ortpool.errors import OrtpoolError
from ortpool.versions import OpVersion

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
_INT_LIST = re.compile(r"^\s*-?\d+\s*(,\s*-?\d+\s*)*$")


def encode_ints(values: Sequence[int]) -> str:
    """``(3, 3) -> "3,3"``; ``() -> ""``."""
    return ",".join(str(int(v)) for v in values)


def decode_ints(text: str, name: str = "value") -> tuple[int, ...]:
    """``"3,3" -> (3, 3)``; ``"" -> ()``. Anything else is a ValueError naming ``name``."""
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


def _check_int64(name: str, values: tuple[int, ...]) -> tuple[int, ...]:
    if any(not INT64_MIN <= v <= INT64_MAX for v in values):
        raise OrtpoolError(
            f"{name}={_shown(encode_ints(values))!r} holds a value beyond int64 (ONNX attributes "
            f"are int64: {INT64_MIN} to {INT64_MAX})"
        )
    return values


@dataclasses.dataclass(frozen=True)
class PoolAttrs:
    """Every attribute of a pooling node, resolved for ``rank`` spatial axes.

    ``pads`` is in ONNX order (all begins, then all ends) and holds what was written, which for
    SAME/VALID is all zeros: the effective pads come from :mod:`ortpool.geometry`.
    """

    kernel_shape: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[int, ...]
    dilations: tuple[int, ...]
    auto_pad: str = "NOTSET"
    ceil_mode: int = 0
    count_include_pad: int = 0
    storage_order: int = 0

    @property
    def rank(self) -> int:
        return len(self.kernel_shape)


def _as_ints(name: str, value: Any) -> tuple[int, ...]:
    if isinstance(value, str):
        return decode_ints(value, name)
    if isinstance(value, bytes):
        return decode_ints(value.decode(), name)
    try:
        items = tuple(value)
    except TypeError:
        raise OrtpoolError(f"{name}={value!r} must be a list of integers") from None
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | _np_integer()):
            raise OrtpoolError(f"{name}={list(items)!r} must be a list of integers")
        out.append(int(item))
    return tuple(out)


def _np_integer() -> type:
    import numpy as np

    return np.integer


def _as_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | _np_integer()):
        if isinstance(value, str) and re.fullmatch(r"-?\d{1,4000}", value.strip()):
            return int(value)
        raise OrtpoolError(f"{name}={value!r} must be an integer")
    return int(value)


def _as_str(name: str, value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode()
    if not isinstance(value, str):
        raise OrtpoolError(f"{name}={value!r} must be a string")
    return value


def normalize(opv: OpVersion, given: Mapping[str, Any], rank: int | None = None) -> PoolAttrs:
    """Check ``given`` against ``opv``'s schema and fill every default.

    ``rank`` is the number of spatial axes when the input is known; otherwise the kernel's length
    sets it. Errors are :class:`OrtpoolError` naming the op version, the attribute and its value;
    the caller adds the node name.
    """
    try:
        return _normalize(opv, given, rank)
    except OrtpoolError as err:
        raise err.located(op=opv.op, version=opv.version) from None


def _normalize(opv: OpVersion, given: Mapping[str, Any], rank: int | None) -> PoolAttrs:
    unknown = sorted(set(given) - set(opv.attrs))
    if unknown:
        raise OrtpoolError(
            f"attribute {unknown[0]!r} does not exist in this version "
            f"(it has {', '.join(sorted(opv.attrs))})"
        )
    if "kernel_shape" not in given:
        raise OrtpoolError("attribute 'kernel_shape' is required")
    kernel = _check_int64("kernel_shape", _as_ints("kernel_shape", given["kernel_shape"]))
    if not kernel:
        raise OrtpoolError("kernel_shape='' must name at least one spatial axis")
    if rank is None:
        rank = len(kernel)
    elif len(kernel) != rank:
        raise OrtpoolError(
            f"kernel_shape={encode_ints(kernel)!r} has {len(kernel)} axes but the input has "
            f"{rank} spatial axes"
        )
    _check_positive("kernel_shape", kernel)

    def ints(name: str, length: int, fill: int) -> tuple[int, ...]:
        if name not in given:
            return (fill,) * length
        values = _check_int64(name, _as_ints(name, given[name]))
        if not values:
            return (fill,) * length
        if len(values) != length:
            raise OrtpoolError(
                f"{name}={encode_ints(values)!r} has {len(values)} values; a kernel of rank "
                f"{rank} needs {length}"
            )
        return values

    strides = ints("strides", rank, 1)
    _check_positive("strides", strides)
    dilations = ints("dilations", rank, 1)
    _check_positive("dilations", dilations)
    pads = ints("pads", 2 * rank, 0)
    if any(p < 0 for p in pads):
        raise OrtpoolError(f"pads={encode_ints(pads)!r} must all be >= 0")

    auto_pad = _as_str("auto_pad", given.get("auto_pad", "NOTSET"))
    if auto_pad == "":
        # Older exporters write it, and onnxruntime reads it as NOTSET; so does ortpool (the
        # rewriter and the validator say so in their reports: see empty_auto_pad_note).
        auto_pad = "NOTSET"
    if auto_pad not in AUTO_PADS:
        raise OrtpoolError(f"auto_pad={auto_pad!r} must be one of {', '.join(AUTO_PADS)}")
    if auto_pad != "NOTSET" and any(pads):
        # RULINGS.md 4: the spec forbids both; all-zero pads are tolerated.
        raise OrtpoolError(f"pads={encode_ints(pads)!r} cannot be used with auto_pad={auto_pad!r}")

    flags = {}
    for name in ("ceil_mode", "count_include_pad", "storage_order"):
        value = _as_int(name, given.get(name, 0))
        if value not in (0, 1):
            raise OrtpoolError(f"{name}={value} must be 0 or 1")
        flags[name] = value
    return PoolAttrs(
        kernel_shape=kernel,
        strides=strides,
        pads=pads,
        dilations=dilations,
        auto_pad=auto_pad,
        **flags,
    )


def _check_positive(name: str, values: tuple[int, ...]) -> None:
    if any(v < 1 for v in values):
        raise OrtpoolError(f"{name}={encode_ints(values)!r} must all be >= 1")


def empty_auto_pad_note(node: onnx.NodeProto, name: str) -> str | None:
    """The report's note for a node whose ``auto_pad`` is the empty string (read as NOTSET)."""
    for attr in node.attribute:
        if attr.name == "auto_pad" and attr.type == onnx.AttributeProto.STRING and not attr.s:
            return (
                f"node {name!r}: auto_pad='' read as NOTSET, as onnxruntime reads it (older "
                "exporters write the empty string)"
            )
    return None


def full_attributes(opv: OpVersion, attrs: PoolAttrs) -> dict[str, int | str]:
    """Every attribute of ``opv`` in the ortpool node encoding (lists as strings), defaults filled.

    SAME/VALID nodes keep ``pads=""`` so the node stays legal under RULINGS.md 4.
    """
    values: dict[str, Any] = dataclasses.asdict(attrs)
    out: dict[str, int | str] = {}
    for name, spec in opv.attrs.items():
        value = values[name]
        if spec.kind == "ints":
            if name == "pads" and attrs.auto_pad != "NOTSET":
                value = ()
            out[name] = encode_ints(value)
        else:
            out[name] = value
    return out


def attribute_values(attributes: Iterable[onnx.AttributeProto]) -> dict[str, Any]:
    """Attribute protos (``node.attribute``) as plain Python values, strings decoded: what
    :func:`normalize` takes. The rewriter, the session checks and the validator all read nodes
    through it."""
    values: dict[str, Any] = {}
    for attr in attributes:
        value = onnx.helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            try:
                value = value.decode()
            except UnicodeDecodeError:
                # onnxruntime-extensions decodes string attributes before every call of a
                # Python op; invalid UTF-8 there ends the process, so it is refused here first.
                raise OrtpoolError(
                    f"attribute {attr.name!r} is not UTF-8 text: {value!r}"
                ) from None
        values[attr.name] = value
    return values
