"""A spec version newer than onnxruntime's own schemas know, written with an attribute the version
they know lacks, is "no kernel", not "rejected": onnxruntime reads it as the version it knows.
No such version exists today, so a child process registers one in onnx: MaxPool-23 (the newest
plus one), MaxPool-22 with an attribute ortpool reads (count_include_pad), which onnxruntime's
MaxPool-22 refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ortpool import versions
from ortpool.ort.ortrun import known_version

#: Depends on onnxruntime's behaviour: also run on the lowest supported release.
pytestmark = pytest.mark.onnxruntime

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json
import sys

import onnx.defs
from onnx import TensorProto, helper
from onnx.defs import OpSchema
from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

from ortpool import versions  # imported (not read yet): onnx knows what ortpool is given

newest = onnx.defs.get_schema("MaxPool", onnx.defs.onnx_opset_version(), "").since_version
fake = newest + 1
# onnxruntime must know the opset (1.21 refuses a model of opset 23: No Op registered for MaxPool)
ort_opset = max(s.since_version for s in ort_c.get_all_operator_schema() if s.domain == "")
if fake > min(onnx.defs.onnx_opset_version(), ort_opset):
    print(json.dumps(f"onnx or onnxruntime has no ai.onnx opset {fake}"))
    sys.exit(0)
old = onnx.defs.get_schema("MaxPool", newest, "")
attrs = [OpSchema.Attribute(a.name, a.default_value, a.description)
         if a.default_value is not None and a.default_value.name
         else OpSchema.Attribute(a.name, a.type, a.description, required=a.required)
         for a in old.attributes.values() if a.name != "count_include_pad"]
attrs.append(OpSchema.Attribute(
    "count_include_pad", helper.make_attribute("count_include_pad", 0), "a fake addition"))
onnx.defs.register_schema(OpSchema(
    "MaxPool", "", fake, doc=old.doc,
    inputs=[OpSchema.FormalParameter(i.name, i.type_str, i.description, param_option=i.option)
            for i in old.inputs],
    outputs=[OpSchema.FormalParameter(o.name, o.type_str, o.description, param_option=o.option)
             for o in old.outputs],
    type_constraints=[(t.type_param_str, list(t.allowed_type_strs), t.description)
                      for t in old.type_constraints],
    attributes=attrs))
assert versions.versions_of("MaxPool")[-1] == fake  # read after the registration

import ortpool


def model(**extra):
    node = helper.make_node("MaxPool", ["X"], ["Y"], name="pool", kernel_shape=[2, 2], **extra)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, 3, 3])])
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", fake)])
    made.ir_version = 10
    return made


found = []
for extra in ({"count_include_pad": 1}, {}):
    (result,) = ortpool.validate(model(**extra)).models
    found += [(n.op, n.spec_version, n.status) for n in result.nodes]
print(json.dumps(found))
"""


def test_onnxruntime_knows_a_version_onnx_knows():
    assert known_version("MaxPool") in versions.versions_of("MaxPool")
    assert known_version("NoSuchPool") == 0


def test_a_newer_version_with_an_attribute_onnxruntime_lacks_has_no_kernel():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", None)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, timeout=300, text=True,
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    if isinstance(found, str):
        pytest.skip(found)
    fake = versions.versions_of("MaxPool")[-1] + 1
    assert found == [
        ["MaxPool", fake, "no-kernel"],  # onnxruntime's newest MaxPool refuses the attribute
        ["MaxPool", fake, "agree"],  # without it, that version computes it
    ]
