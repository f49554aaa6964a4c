"""The onnx backend node cases of every pooling operator, run through ortpool ops.

Each case's node is retargeted by hand to its ortpool op type (as the rewriter would) and run in
an :class:`ortpool.InferenceSession`, first at the case's own spec version, then stamped at every
older version whose schema admits the node: its attributes exist there, its element type is
allowed and carried, its input and output counts fit. The expected outputs stay the same at every
version (ruling 1 applies the ceil drop rule at every version that has ceil_mode). LpPool's
``p`` is an int in the cases (versions 2 on) and becomes the same float at version 1.

The backend has cases for MaxPool, AveragePool, MaxUnpool, LpPool, GlobalMaxPool and
GlobalAveragePool; none for GlobalLpPool or MaxRoiPool (their properties are tested against the
loop reference instead, tests/kernels/test_properties_lp_global_roi.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import ortpool
from ortpool import versions
from tests import support
from tests.support import reference_loops

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

DEVIATION = "test_maxunpool_export_with_output_shape"
#: Cases whose expected values were typed in with 4 decimals, from inputs that were rounded too
#: (0.8816 + 0.4353 + 0.5772 + 0.6623) / 9 = 0.28404, typed as 0.2841): they hold only to the
#: backend's own tolerance (rtol 1e-3), so ours is also checked tightly against the loop reference.
APPROXIMATE = {"test_averagepool_2d_ceil_last_window_starts_on_pad"}
CASES = support.pooling_backend_cases()


def _own_version(case) -> int:
    node = case.model.graph.node[0]
    opset = next(o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx"))
    return versions.resolve(node.op_type, opset).version


def _type_name(dtype: np.dtype) -> str:
    return {"float32": "float", "float64": "double"}.get(dtype.name, dtype.name)


def admits(opv: versions.OpVersion, case) -> bool:
    """Would ``opv``'s schema accept the case's node, and can an ortpool op carry its type?"""
    node = case.model.graph.node[0]
    x_type = _type_name(support.tensor_dtype(case.model.graph.input[0]))
    return (
        {a.name for a in node.attribute} <= set(opv.attrs)
        and x_type in opv.carried_types
        and len(node.input) <= opv.max_inputs
        and len(node.output) <= opv.max_outputs
    )


def _stamps(deviation: bool):
    for case in CASES:
        if (case.name == DEVIATION) != deviation:
            continue
        node = case.model.graph.node[0]
        own = _own_version(case)
        for version in versions.versions_of(node.op_type):
            if version <= own and admits(versions.get(node.op_type, version), case):
                yield pytest.param(case, version, version == own, id=f"{case.name}@{version}")


def _run(case, version: int):
    node = case.model.graph.node[0]
    x_dtype = support.tensor_dtype(case.model.graph.input[0])
    model = support.ortpool_model(
        node.op_type,
        version,
        support.onnx_attrs(node),
        x_dtype,
        n_inputs=len(node.input),
        n_outputs=len(node.output),
        node_name=case.name,
    )
    session = ortpool.InferenceSession(model)
    for inputs, expected in case.data_sets:
        got = session.run(None, support.session_inputs(model, inputs))
        yield node.op_type, inputs, expected, got


def test_every_case_is_found():
    """Guard the count: the three operators' cases exist and none is silently dropped."""
    by_op = {}
    for case in CASES:
        by_op.setdefault(case.model.graph.node[0].op_type, []).append(case.name)
    assert set(by_op) == {
        "MaxPool", "AveragePool", "MaxUnpool", "LpPool", "GlobalMaxPool", "GlobalAveragePool"
    }
    assert DEVIATION in by_op["MaxUnpool"]
    own = [p for p in _stamps(False) if p.values[2]] + [p for p in _stamps(True) if p.values[2]]
    assert len(own) == len(CASES)  # every case runs at its own version


@pytest.mark.parametrize(("case", "version", "own"), list(_stamps(False)))
def test_backend_case(case, version, own):
    node = case.model.graph.node[0]
    for op, inputs, expected, got in _run(case, version):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert g.dtype == e.dtype
            assert g.shape == e.shape
            if case.name in APPROXIMATE:
                np.testing.assert_allclose(g, e, rtol=case.rtol, atol=case.atol)
                ref = reference_loops.average_pool(inputs[0], support.onnx_attrs(node))
                np.testing.assert_allclose(g, ref, rtol=1e-6)
            elif op in ("AveragePool", "GlobalAveragePool", "LpPool"):
                np.testing.assert_allclose(g, e, rtol=2e-6, atol=1e-7)
                # and within 1 ulp of the loop reference (at the case's own version, on inputs
                # small enough for its exact decimals: the 3-D case's 98,304 take 11 s)
                if op == "LpPool" and own and inputs[0].size <= 40_000:
                    ref = reference_loops.lp_pool(inputs[0], support.onnx_attrs(node))
                    np.testing.assert_array_less(
                        np.abs(g.astype(np.float64) - ref), np.spacing(np.abs(g)) + 1e-300
                    )
            else:
                np.testing.assert_array_equal(g, e)
    support.BACKEND_RUNS.append((node.op_type, case.name, version, own, False))


@pytest.mark.parametrize(("case", "version", "own"), list(_stamps(True)))
def test_maxunpool_with_output_shape_deviation(case, version, own):
    """ruling 9, a deliberate deviation from the backend case.

    The case scatters X = [[5, 6], [7, 8]] with indices [[5, 7], [13, 15]] into the *inferred*
    4x4 shape and zero-extends the result to output_shape 5x5. Its indices could not come from
    MaxPool on a 5x5 input, and ORT and PyTorch instead read the indices as flat positions of the
    output tensor itself, which is what makes MaxPool -> MaxUnpool round-trip. ortpool does the
    latter: Y has exactly output_shape and Y.flat[I[j]] = X.flat[j].
    """
    for _, inputs, expected, got in _run(case, version):
        x, indices, output_shape = inputs
        ours = np.zeros(tuple(int(v) for v in output_shape), x.dtype)
        for value, index in zip(x.reshape(-1), indices.reshape(-1), strict=True):
            ours.reshape(-1)[int(index)] = value
        (y,) = got
        assert y.dtype == x.dtype
        np.testing.assert_array_equal(y, ours)
        # Spelled out for the 5x5 case: flat 5 -> (1, 0), 7 -> (1, 2), 13 -> (2, 3), 15 -> (3, 0).
        assert (y[0, 0, 1, 0], y[0, 0, 1, 2], y[0, 0, 2, 3], y[0, 0, 3, 0]) == (5, 6, 7, 8)
        # And it is not the backend's expectation: the deviation is real and known.
        assert not np.array_equal(y, expected[0])
    support.BACKEND_RUNS.append(("MaxUnpool", case.name, version, own, True))
