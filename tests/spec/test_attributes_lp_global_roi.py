"""The rest of the pooling family as data: versions, op types and attributes of LpPool,
GlobalMaxPool, GlobalAveragePool, GlobalLpPool and MaxRoiPool (ruling 12-15)."""

from __future__ import annotations

import pytest

from ortpool import optypes, versions
from ortpool.attributes import (
    GlobalAttrs,
    PoolAttrs,
    RoiAttrs,
    decode_float,
    encode_float,
    full_attributes,
    normalize,
)
from ortpool.errors import OrtpoolError

L1 = versions.get("LpPool", 1)
L2 = versions.get("LpPool", 2)
L18 = versions.get("LpPool", 18)
GL1 = versions.get("GlobalLpPool", 1)
GL22 = versions.get("GlobalLpPool", 22)
GM22 = versions.get("GlobalMaxPool", 22)
R1 = versions.get("MaxRoiPool", 1)


def test_every_version_the_installed_onnx_knows():
    assert versions.versions_of("LpPool") == (1, 2, 11, 18, 22)
    assert versions.versions_of("GlobalMaxPool") == (1, 22)
    assert versions.versions_of("GlobalAveragePool") == (1, 22)
    assert versions.versions_of("GlobalLpPool") == (1, 2, 22)
    assert versions.versions_of("MaxRoiPool") == (1, 22)


def test_schema_data():
    assert (L1.attrs["p"].kind, L1.attrs["p"].default) == ("float", 2.0)
    assert (L2.attrs["p"].kind, L2.attrs["p"].default) == ("int", 2)
    assert not L1.attrs["kernel_shape"].required and L2.attrs["kernel_shape"].required
    assert "dilations" in L18.attrs and "ceil_mode" in L18.attrs and "dilations" not in L2.attrs
    assert (GL1.attrs["p"].kind, GL22.attrs["p"].kind) == ("float", "int")
    assert dict(GM22.attrs) == {}
    assert (R1.attrs["spatial_scale"].kind, R1.attrs["spatial_scale"].default) == ("float", 1.0)
    assert R1.attrs["pooled_shape"].required
    assert (R1.input_names, R1.min_inputs, R1.typed_inputs) == (("X", "rois"), 2, (True, True))
    assert versions.get("MaxUnpool", 11).typed_inputs == (True, False, False)
    assert versions.get("GlobalAveragePool", 22).types == ("bfloat16", "float16", "float", "double")
    assert versions.get("GlobalAveragePool", 22).carried_types == ("float", "double")


def test_op_types():
    names = [t.name for t in optypes.all_op_types() if t.spec.op not in
             ("MaxPool", "AveragePool", "MaxUnpool")]
    assert names == [
        "LpPool_1", "LpPool_2", "LpPool_11", "LpPool_18", "LpPool_22",
        "GlobalMaxPool_1", "GlobalMaxPool_22", "GlobalAveragePool_1", "GlobalAveragePool_22",
        "GlobalLpPool_1", "GlobalLpPool_2", "GlobalLpPool_22", "MaxRoiPool_1", "MaxRoiPool_22",
    ]
    roi = optypes.parse("MaxRoiPool_22")
    assert (roi.n_inputs, roi.n_outputs, roi.input_names) == (2, 1, ("X", "rois"))
    assert optypes.for_node("LpPool", 18, 1, 1).name == "LpPool_18"
    assert optypes.for_node("MaxRoiPool", 1, 2, 1).name == "MaxRoiPool_1"
    with pytest.raises(ValueError, match="'LpPool_3' is not an ortpool op type"):
        optypes.parse("LpPool_3")


@pytest.mark.parametrize(
    ("value", "text"), [(0.1234567, "0.1234567"), (2.0, "2.0"), (0.0625, "0.0625"),
                        (1e-30, "1e-30"), (0.10000000149011612, "0.10000000149011612")])
def test_float_encoding_round_trips(value, text):
    """ruling 15: repr() text reads back as the same double (6 digits would not)."""
    assert encode_float(value) == text
    assert decode_float(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1,5", "1_0", "0x10", "[2.0]"])
def test_float_decoding_rejects(text):
    with pytest.raises(OrtpoolError) as info:
        decode_float(text, "p")
    assert str(info.value) == f"p={text!r} is not a decimal number"


def test_lppool_attributes():
    assert normalize(L1, {"kernel_shape": [2, 2], "p": "3.5"}) == PoolAttrs(
        kernel_shape=(2, 2), strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), p=3.5
    )
    assert normalize(L1, {"kernel_shape": [2]}).p == 2.0
    assert normalize(L2, {"kernel_shape": [2], "p": "3"}).p == 3
    assert normalize(L18, {"kernel_shape": "2", "dilations": "2", "ceil_mode": 1}).dilations == (2,)
    assert full_attributes(L1, normalize(L1, {"kernel_shape": [3], "p": 0.1234567})) == {
        "auto_pad": "NOTSET", "kernel_shape": "3", "p": "0.1234567", "pads": "0,0", "strides": "1",
    }
    assert full_attributes(L18, normalize(L18, {"kernel_shape": [3], "p": 1}))["p"] == 1


def test_global_and_roi_attributes():
    assert normalize(GM22, {}) == GlobalAttrs()
    assert normalize(GL1, {"p": "1.5"}) == GlobalAttrs(1.5)
    assert normalize(GL22, {}) == GlobalAttrs(2)
    assert full_attributes(GL1, normalize(GL1, {})) == {"p": "2.0"}
    assert full_attributes(GM22, normalize(GM22, {})) == {}
    assert normalize(R1, {"pooled_shape": "7,7", "spatial_scale": "0.0625"}, rank=2) == RoiAttrs(
        (7, 7), 0.0625
    )
    assert full_attributes(R1, normalize(R1, {"pooled_shape": [2, 3]})) == {
        "pooled_shape": "2,3", "spatial_scale": "1.0",
    }


@pytest.mark.parametrize(
    ("opv", "given", "rank", "message"),
    [
        (L1, {"p": 2.0},
         None, "(LpPool-1): attribute 'kernel_shape' is missing: this version's schema makes it "
               "optional, but no output size can be computed without it"),
        (L2, {"p": 2}, None, "(LpPool-2): attribute 'kernel_shape' is required"),
        (L2, {"kernel_shape": [2], "p": 0}, None,
         "(LpPool-2): p=0 must be > 0 (the Lp norm needs p > 0)"),
        (L18, {"kernel_shape": [2], "p": "-1"}, None,
         "(LpPool-18): p=-1 must be > 0 (the Lp norm needs p > 0)"),
        (L2, {"kernel_shape": [2], "p": 2.5}, None, "(LpPool-2): p=2.5 must be an integer"),
        (L1, {"kernel_shape": [2], "p": -0.5}, None,
         "(LpPool-1): p=-0.5 must be a finite number > 0 (the Lp norm needs p > 0)"),
        (L1, {"kernel_shape": [2], "p": "nan"}, None,
         "(LpPool-1): p=nan must be a finite number > 0 (the Lp norm needs p > 0)"),
        (L1, {"kernel_shape": [2], "p": "two"}, None,
         "(LpPool-1): p='two' is not a decimal number"),
        (L1, {"kernel_shape": [2], "dilations": [1]}, None,
         "(LpPool-1): attribute 'dilations' does not exist in this version (it has auto_pad, "
         "kernel_shape, p, pads, strides)"),
        (GL1, {"p": 0.0}, None,
         "(GlobalLpPool-1): p=0.0 must be a finite number > 0 (the Lp norm needs p > 0)"),
        (GL22, {"p": -3}, None, "(GlobalLpPool-22): p=-3 must be > 0 (the Lp norm needs p > 0)"),
        (GM22, {"kernel_shape": [2]}, None,
         "(GlobalMaxPool-22): attribute 'kernel_shape' does not exist in this version (it has no "
         "attributes)"),
        (R1, {}, None, "(MaxRoiPool-1): attribute 'pooled_shape' is required"),
        (R1, {"pooled_shape": [7]}, None,
         "(MaxRoiPool-1): pooled_shape='7' must have 2 values (height, width)"),
        (R1, {"pooled_shape": [7, 0]}, None, "(MaxRoiPool-1): pooled_shape='7,0' must all be >= 1"),
        (R1, {"pooled_shape": [7, 7], "spatial_scale": "inf"}, None,
         "(MaxRoiPool-1): spatial_scale=inf must be finite"),
        (R1, {"pooled_shape": [7, 7], "spatial_scale": "1/16"}, None,
         "(MaxRoiPool-1): spatial_scale='1/16' is not a decimal number"),
        (R1, {"pooled_shape": [7, 7]}, 3,
         "(MaxRoiPool-1): the input has 3 spatial axes; MaxRoiPool takes N x C x H x W"),
    ],
)
def test_errors(opv, given, rank, message):
    with pytest.raises(OrtpoolError) as info:
        normalize(opv, given, rank)
    assert str(info.value) == message
    assert (info.value.op, info.value.version) == (opv.op, opv.version)
