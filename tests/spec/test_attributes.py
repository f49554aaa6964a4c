"""ortpool.attributes and ortpool.versions: checks, defaults, the string encoding, the messages."""

from __future__ import annotations

import onnx.defs
import pytest

from ortpool import versions
from ortpool.attributes import PoolAttrs, decode_ints, encode_ints, full_attributes, normalize
from ortpool.errors import OrtpoolError

M8 = versions.get("MaxPool", 8)
M12 = versions.get("MaxPool", 12)
A1 = versions.get("AveragePool", 1)


@pytest.mark.parametrize(("values", "text"), [((3, 3), "3,3"), ((), ""), ((1, -2, 30), "1,-2,30")])
def test_encode_decode_round_trip(values, text):
    assert encode_ints(values) == text
    assert decode_ints(text) == values


def test_decode_tolerates_spaces():
    assert decode_ints(" 1, 2 ") == (1, 2)
    assert decode_ints("  ") == ()


@pytest.mark.parametrize("text", ["1,x", "1,,2", "1.5", "[1,2]", "1;2", ","])
def test_decode_rejects(text):
    with pytest.raises(OrtpoolError) as info:
        decode_ints(text, "pads")
    assert str(info.value) == f"pads={text!r} is not a comma-separated list of integers"


def test_defaults_filled():
    assert normalize(M12, {"kernel_shape": [2, 3]}) == PoolAttrs(
        kernel_shape=(2, 3), strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1)
    )


def test_lists_and_strings_agree():
    as_lists = normalize(M12, {"kernel_shape": [2, 3], "strides": [1, 2], "pads": [0, 1, 1, 0],
                               "dilations": [2, 1], "ceil_mode": 1, "storage_order": 1})
    as_strings = normalize(M12, {"kernel_shape": "2,3", "strides": "1,2", "pads": "0,1,1,0",
                                 "dilations": "2,1", "ceil_mode": "1", "storage_order": 1,
                                 "auto_pad": b"NOTSET"})
    assert as_lists == as_strings
    assert as_lists.pads == (0, 1, 1, 0) and as_lists.ceil_mode == 1


def test_empty_lists_mean_defaults():
    a = normalize(M12, {"kernel_shape": "2", "strides": "", "pads": "", "dilations": ""})
    assert (a.strides, a.pads, a.dilations) == ((1,), (0, 0), (1,))


@pytest.mark.parametrize(
    ("opv", "given", "message"),
    [
        (M8, {"kernel_shape": [2], "dilations": [1]},
         "(MaxPool-8): attribute 'dilations' does not exist in this version (it has auto_pad, "
         "kernel_shape, pads, storage_order, strides)"),
        (A1, {"kernel_shape": [2], "count_include_pad": 1},
         "(AveragePool-1): attribute 'count_include_pad' does not exist in this version (it has "
         "auto_pad, kernel_shape, pads, strides)"),
        (M12, {}, "(MaxPool-12): attribute 'kernel_shape' is required"),
        (M12, {"kernel_shape": ""}, "(MaxPool-12): kernel_shape='' must name at least one spatial "
                                    "axis"),
        (M12, {"kernel_shape": "2,-1"}, "(MaxPool-12): kernel_shape='2,-1' must all be >= 1"),
        (M12, {"kernel_shape": "2,0"}, "(MaxPool-12): kernel_shape='2,0' must all be >= 1"),
        (M12, {"kernel_shape": "2,2", "strides": "0,1"},
         "(MaxPool-12): strides='0,1' must all be >= 1"),
        (M12, {"kernel_shape": "2", "dilations": "-1"},
         "(MaxPool-12): dilations='-1' must all be >= 1"),
        (M12, {"kernel_shape": "2", "pads": "-1,0"}, "(MaxPool-12): pads='-1,0' must all be >= 0"),
        (M12, {"kernel_shape": "2", "pads": "1,x"},
         "(MaxPool-12): pads='1,x' is not a comma-separated list of integers"),
        (M12, {"kernel_shape": "2", "strides": "1,1"},
         "(MaxPool-12): strides='1,1' has 2 values; a kernel of rank 1 needs 1"),
        (M12, {"kernel_shape": "2", "pads": "1"},
         "(MaxPool-12): pads='1' has 1 values; a kernel of rank 1 needs 2"),
        (M12, {"kernel_shape": "2", "auto_pad": "SAME"},
         "(MaxPool-12): auto_pad='SAME' must be one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"),
        (M12, {"kernel_shape": "2", "auto_pad": "VALID", "pads": "1,0"},
         "(MaxPool-12): pads='1,0' cannot be used with auto_pad='VALID'"),
        (M12, {"kernel_shape": "2", "ceil_mode": 2}, "(MaxPool-12): ceil_mode=2 must be 0 or 1"),
        (M12, {"kernel_shape": "2", "storage_order": -1},
         "(MaxPool-12): storage_order=-1 must be 0 or 1"),
        (M12, {"kernel_shape": "2", "ceil_mode": True},
         "(MaxPool-12): ceil_mode=True must be an integer"),
        (M12, {"kernel_shape": "2", "ceil_mode": "yes"},
         "(MaxPool-12): ceil_mode='yes' must be an integer"),
        (M12, {"kernel_shape": [2.0]}, "(MaxPool-12): kernel_shape=[2.0] must be a list of "
                                       "integers"),
        (M12, {"kernel_shape": 2}, "(MaxPool-12): kernel_shape=2 must be a list of integers"),
    ],
)
def test_normalize_errors(opv, given, message):
    with pytest.raises(OrtpoolError) as info:
        normalize(opv, given)
    assert str(info.value) == message
    assert (info.value.op, info.value.version) == (opv.op, opv.version)


def test_kernel_rank_against_input_rank():
    with pytest.raises(OrtpoolError, match="kernel_shape='2,2' has 2 axes but the input has 1 "
                                           "spatial axes"):
        normalize(M12, {"kernel_shape": "2,2"}, rank=1)


def test_zero_pads_tolerated_with_auto_pad():
    a = normalize(M12, {"kernel_shape": "2", "auto_pad": "SAME_UPPER", "pads": "0,0"})
    assert a.auto_pad == "SAME_UPPER" and a.pads == (0, 0)


def test_full_attributes_every_attribute_of_the_version():
    assert full_attributes(M12, normalize(M12, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})) == {
        "auto_pad": "NOTSET", "ceil_mode": 0, "dilations": "1,1", "kernel_shape": "3,3",
        "pads": "1,1,1,1", "storage_order": 0, "strides": "1,1",
    }
    assert full_attributes(A1, normalize(A1, {"kernel_shape": [3], "pads": [1, 2]})) == {
        "auto_pad": "NOTSET", "kernel_shape": "3", "pads": "1,2", "strides": "1",
    }


def test_full_attributes_auto_pad_keeps_pads_empty():
    encoded = full_attributes(M12, normalize(M12, {"kernel_shape": [3], "auto_pad": "SAME_LOWER"}))
    assert encoded["pads"] == ""
    # ...which normalizes back to the same attributes.
    again = normalize(M12, {"kernel_shape": [3], "auto_pad": "SAME_LOWER"})
    assert normalize(M12, encoded) == again


# ------------------------------------------------------------ versions table


def test_versions_from_the_schemas():
    assert versions.versions_of("MaxPool") == (1, 8, 10, 11, 12, 22)
    assert versions.versions_of("AveragePool") == (1, 7, 10, 11, 19, 22)
    assert versions.versions_of("MaxUnpool") == (9, 11, 22)
    for opv in versions.all_versions():
        schema = onnx.defs.get_schema(opv.op, opv.version)
        assert schema.since_version == opv.version
        assert set(opv.attrs) == set(schema.attributes)


def test_carried_types():
    assert versions.get("MaxPool", 11).carried_types == ("float", "double")
    assert versions.get("MaxPool", 12).carried_types == ("float", "double", "int8", "uint8")
    assert "float16" in versions.get("MaxPool", 12).types
    assert versions.get("AveragePool", 22).carried_types == ("float", "double")


@pytest.mark.parametrize(
    ("op", "opset", "version"),
    [("AveragePool", 18, 11), ("AveragePool", 19, 19), ("MaxPool", 21, 12), ("MaxPool", 9, 8),
     ("MaxUnpool", 10, 9)],
)
def test_resolve(op, opset, version):
    assert versions.resolve(op, opset).version == version


def test_resolve_and_get_errors():
    with pytest.raises(ValueError, match=r"MaxUnpool does not exist at ai\.onnx opset 8"):
        versions.resolve("MaxUnpool", 8)
    with pytest.raises(ValueError, match="MaxPool has no spec version 9; its versions are "
                                         "1, 8, 10, 11, 12, 22"):
        versions.get("MaxPool", 9)


def test_version_defaults_come_from_the_schema_the_axis_rule_and_the_neutral_values():
    assert M12.default("auto_pad") == "NOTSET"
    assert M12.default("storage_order") == 0
    assert M12.default("strides", 3) == (1, 1, 1)
    assert M12.default("pads", 2) == (0, 0, 0, 0)
    assert M12.default("kernel_shape") is None  # required: no default
    assert M8.default("dilations", 2) == (1, 1)  # MaxPool-8 has none: 1 per axis
    assert A1.default("count_include_pad") == 0  # AveragePool-1 has none: pads not counted
    assert versions.get("LpPool", 1).default("p") == 2.0
    assert versions.get("LpPool", 2).default("p") == 2
    assert versions.get("MaxRoiPool", 22).default("spatial_scale") == 1.0
    assert versions.get("MaxUnpool", 11).default("auto_pad") == "NOTSET"
    with pytest.raises(ValueError, match="'strides' needs the number of spatial axes"):
        M12.default("strides")


def test_standard_attributes_leave_the_versions_defaults_out():
    from ortpool.attributes import standard_attributes

    plain = normalize(M12, {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [0, 0, 0, 0]})
    assert standard_attributes(M12, plain) == {"kernel_shape": [3, 3]}
    same = normalize(M12, {"kernel_shape": [3], "auto_pad": "SAME_UPPER", "strides": [2],
                           "ceil_mode": 1, "storage_order": 0})
    assert standard_attributes(M12, same) == {
        "auto_pad": "SAME_UPPER", "ceil_mode": 1, "kernel_shape": [3], "strides": [2]
    }
    padded = normalize(A1, {"kernel_shape": [2], "pads": [1, 0]})
    assert standard_attributes(A1, padded) == {"kernel_shape": [2], "pads": [1, 0]}
    lp1 = versions.get("LpPool", 1)
    assert standard_attributes(lp1, normalize(lp1, {"kernel_shape": [2], "p": 3.0})) == {
        "kernel_shape": [2], "p": 3.0
    }
    roi = versions.get("MaxRoiPool", 22)
    assert standard_attributes(roi, normalize(roi, {"pooled_shape": [2, 2]})) == {
        "pooled_shape": [2, 2]
    }


def test_neutral_defaults_are_the_first_schema_defaults():
    """An attribute a later version adds reads as its first version's schema default."""
    assert versions.neutral_defaults() == {
        "ceil_mode": 0, "dilations": None, "count_include_pad": 0, "storage_order": 0,
        "auto_pad": "NOTSET",
    }


def test_flags_from_the_schemas():
    assert versions.flags() == ("ceil_mode", "count_include_pad", "storage_order")
