"""``ortpool.model.carry``: bfloat16 crossing onnxruntime's Python API as float32, exactly.

Every bfloat16 bit pattern is fed through a carried input and fetched through a carried output
and a carried inner tensor, on the installed onnxruntime; the carried model's names and Casts
are checked as written, and the model it was made from is left as it was.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from ortpool import dtypes
from ortpool.model import carry
from ortpool.ort import RuntimeSpec, open_session

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

BF16 = dtypes.NUMPY["bfloat16"]


def _model() -> onnx.ModelProto:
    """X (bfloat16) -> Identity -> mid -> Identity -> Y (bfloat16); F (float) -> G unchanged."""
    graph = h.make_graph(
        [
            h.make_node("Identity", ["X"], ["mid"]),
            h.make_node("Identity", ["mid"], ["Y"]),
            h.make_node("Identity", ["F"], ["G"]),
        ],
        "g",
        [
            h.make_tensor_value_info("X", T.BFLOAT16, [None]),
            h.make_tensor_value_info("F", T.FLOAT, [2]),
        ],
        [
            h.make_tensor_value_info("Y", T.BFLOAT16, [None]),
            h.make_tensor_value_info("G", T.FLOAT, [2]),
        ],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def test_carried_model_names_and_casts_and_the_source_untouched():
    model = _model()
    before = model.SerializeToString()
    carried = carry.carry(model, ["mid"])
    assert model.SerializeToString() == before
    graph = carried.graph
    assert [v.name for v in graph.input] == ["X__float32", "F"]
    assert [v.name for v in graph.output] == ["Y__float32", "G", "mid__float32"]
    assert [v.type.tensor_type.elem_type for v in graph.input] == [T.FLOAT, T.FLOAT]
    assert graph.output[0].type.tensor_type.elem_type == T.FLOAT
    ops = [(n.op_type, list(n.input), list(n.output)) for n in graph.node]
    assert ops[0] == ("Cast", ["X__float32"], ["X"])
    assert ops[-2:] == [("Cast", ["Y"], ["Y__float32"]), ("Cast", ["mid"], ["mid__float32"])]
    assert [a.i for a in graph.node[0].attribute] == [T.BFLOAT16]
    # graph=False: the graph's own inputs and outputs as they are, the inner tensor carried
    inner = carry.carry(model, ["mid"], graph=False).graph
    assert [v.name for v in inner.input] == ["X", "F"]
    assert [v.name for v in inner.output] == ["Y", "G", "mid__float32"]
    assert carry.carry(model, graph=False).SerializeToString() == before


def test_every_bfloat16_value_crosses_both_ways_exactly():
    bits = np.arange(1 << 16, dtype=np.uint16)
    x = bits.view(BF16)
    fed = carry.feedable(x)
    assert fed.dtype == np.float32 and carry.feedable(fed) is fed  # float32 is fed as it is
    session = open_session(RuntimeSpec(), carry.carry(_model(), ["mid"]))
    f = np.array([1.5, -0.0], np.float32)
    y, g, mid = session.run(["Y__float32", "G", "mid__float32"], {"X__float32": fed, "F": f})
    for got in (y, mid):
        back = carry.uncarried(got, "bfloat16")
        assert back.dtype == BF16
        nan = np.isnan(x.astype(np.float32))
        # every value but NaN bit for bit (+0 and -0 apart); NaN stays NaN
        assert np.array_equal(back.view(np.uint16)[~nan], bits[~nan])
        assert np.isnan(back[nan].astype(np.float32)).all()
    assert np.array_equal(g.view(np.uint32), f.view(np.uint32))
    assert carry.is_carried("bfloat16") and not carry.is_carried("float16")


def test_a_carried_input_that_is_also_an_output_or_fetched_crosses_once():
    """X is a graph output as well as an input, and asked for again as an inner tensor: it
    crosses once, as the float32 input itself (no second tensor of that name)."""
    graph = h.make_graph(
        [h.make_node("Identity", ["X"], ["Y"])],
        "g",
        [h.make_tensor_value_info("X", T.BFLOAT16, [3])],
        [
            h.make_tensor_value_info("X", T.BFLOAT16, [3]),
            h.make_tensor_value_info("Y", T.BFLOAT16, [3]),
        ],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    carried = carry.carry(model, ["X", "Y"])
    assert [v.name for v in carried.graph.output] == ["X__float32", "Y__float32"]
    made = [o for n in carried.graph.node for o in n.output]
    assert sorted(made) == ["X", "Y", "Y__float32"]  # one Cast in, Identity, one Cast out
    onnx.checker.check_model(carried)
    x = np.array([1.5, -np.inf, np.nan], BF16)
    session = open_session(RuntimeSpec(), carried)
    got_x, got_y = session.run(None, {"X__float32": carry.feedable(x)})
    for got in (got_x, got_y):
        back = carry.uncarried(got, "bfloat16")
        assert back.dtype == BF16
        np.testing.assert_array_equal(back.astype(np.float32), x.astype(np.float32))
