"""Helpers shared by the rewrite tests: small models, feeds, and comparing models up to defaults."""

from __future__ import annotations

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

from ortpool import versions
from ortpool.attributes import normalize


def vi(name: str, elem: int = T.FLOAT, shape=None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def one_node_model(node, opset: int = 12, elem: int = T.FLOAT, shape=(1, 3, 8, 8)):
    graph = h.make_graph(
        [node], "g", [vi("x", elem, list(shape))], [vi(o, elem, None) for o in node.output if o]
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def feeds(model: onnx.ModelProto, seed: int = 0, **fixed) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for info in model.graph.input:
        if info.name in fixed:
            out[info.name] = fixed[info.name]
            continue
        tensor = info.type.tensor_type
        shape = [d.dim_value for d in tensor.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if dtype == np.bool_:
            out[info.name] = np.array(True)
        elif np.issubdtype(dtype, np.integer):
            out[info.name] = rng.integers(0, 256, shape).astype(dtype)
        else:
            out[info.name] = rng.standard_normal(shape).astype(dtype)
    return out


def _pool_attrs(node: onnx.NodeProto, opset: int):
    spec = versions.resolve(node.op_type, opset)
    values = {}
    for attr in node.attribute:
        value = onnx.helper.get_attribute_value(attr)
        values[attr.name] = value.decode() if isinstance(value, bytes) else value
    return normalize(spec, values)


def _opset(imports) -> int:
    return next(e.version for e in imports if e.domain in ("", "ai.onnx"))


def _same_nodes(a, b, opset: int) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if x.op_type in versions.OPERATORS and x.domain in ("", "ai.onnx"):
            assert (y.op_type, y.name, list(y.input), list(y.output), y.doc_string) == (
                x.op_type,
                x.name,
                list(x.input),
                list(x.output),
                x.doc_string,
            )
            assert _pool_attrs(x, opset) == _pool_attrs(y, opset)
            continue
        assert [a.name for a in x.attribute] == [a.name for a in y.attribute]
        for ax, ay in zip(x.attribute, y.attribute, strict=True):
            if ax.type == onnx.AttributeProto.GRAPH:
                _same_graph(ax.g, ay.g, opset)
            elif ax.type == onnx.AttributeProto.GRAPHS:
                for gx, gy in zip(ax.graphs, ay.graphs, strict=True):
                    _same_graph(gx, gy, opset)
            else:
                assert ax == ay
        x2, y2 = onnx.NodeProto(), onnx.NodeProto()
        x2.CopyFrom(x)
        y2.CopyFrom(y)
        del x2.attribute[:], y2.attribute[:]
        assert x2 == y2


def _same_graph(a: onnx.GraphProto, b: onnx.GraphProto, opset: int) -> None:
    _same_nodes(a.node, b.node, opset)
    a2, b2 = onnx.GraphProto(), onnx.GraphProto()
    a2.CopyFrom(a)
    b2.CopyFrom(b)
    del a2.node[:], b2.node[:]
    assert a2 == b2


def assert_same_up_to_defaults(original: onnx.ModelProto, other: onnx.ModelProto) -> None:
    """Everything equal except pooling nodes, which must be equal after filling defaults."""
    _same_graph(original.graph, other.graph, _opset(original.opset_import))
    assert len(original.functions) == len(other.functions)
    for fa, fb in zip(original.functions, other.functions, strict=True):
        _same_nodes(fa.node, fb.node, _opset(fa.opset_import))
        fa2, fb2 = onnx.FunctionProto(), onnx.FunctionProto()
        fa2.CopyFrom(fa)
        fb2.CopyFrom(fb)
        del fa2.node[:], fb2.node[:]
        assert fa2 == fb2
    a, b = onnx.ModelProto(), onnx.ModelProto()
    a.CopyFrom(original)
    b.CopyFrom(other)
    for m in (a, b):
        m.ClearField("graph")
        m.ClearField("functions")
    assert a == b


def cli_child(cwd: str, *args: str) -> None:
    """In a child process (``support.run_child``): ``ortpool ARGS`` in ``cwd``, then whether it
    imported onnxruntime (this module imports none, nor does the command server)."""
    from ortpool.cli import main

    os.chdir(cwd)
    code = main(list(args))
    print("ORT-IMPORTED" if "onnxruntime" in sys.modules else "ORT-NOT-IMPORTED")
    raise SystemExit(code)
