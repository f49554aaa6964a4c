"""Python calls ortpool refuses, each with its whole message: the data of
``tests/api/test_refusals.py`` (every call run in one child process with a time limit) and of
the table in docs/api.md (``scripts/gen_docs.py``), so the page shows what the test checks.

Each call names a public function and one bad value of one of its parameters (a wrong type,
NaN or an infinite number, a string for a boolean, a huge size, a negative count); ``M`` is a
model file, ``HUGE`` a 4 TiB float32 array that is a broadcast view of one element. A message
ending in ``...`` goes on with figures of this machine (the memory it can still allocate,
its providers, its cores).
"""

from __future__ import annotations

import json
import os
from typing import Any

#: the names a call may use besides ``ortpool``
NAMES = {"M": "a model file", "HUGE": "np.broadcast_to(np.float32(0), (1024,) * 4)"}

#: (call, "ExceptionType: message")
CASES: list[tuple[str, str]] = [
    ('ortpool.validate(5)',
     'TypeError: model=5 must be a path, an onnx.ModelProto, or a list of them, not int'),
    ('ortpool.validate([])',
     'OrtpoolError: model=[] names no model; give at least one (or None: the bundled models)'),
    ('ortpool.validate([M, 5])',
     'TypeError: model[1]=5 must be a path or an onnx.ModelProto, not int'),
    ('ortpool.validate(M, shapes=5)',
     "TypeError: shapes=5 must be a name -> sizes mapping (e.g. {'image': (1, 3, 224, 224)}) "
     "or 'NAME:D1,D2,...' strings, not int"),
    ("ortpool.validate(M, shapes='x')",
     "OrtpoolError: shapes='x' must be NAME:D1,D2,... with integer sizes >= 0 (digits 0-9), "
     'e.g. image:1,3,224,224'),
    ("ortpool.validate(M, shapes={'x': 'abc'})",
     "OrtpoolError: shapes: the shape of 'x' must be a sequence of integers >= 0, not 'abc'"),
    ("ortpool.validate(M, shapes={'x': (1, -1)})",
     "OrtpoolError: shapes: the shape of 'x' must be a sequence of integers >= 0, not (1, -1)"),
    ("ortpool.validate(M, shapes={'x': (True, 3)})",
     "OrtpoolError: shapes: the shape of 'x' must be a sequence of integers >= 0, not (True, 3)"),
    ("ortpool.validate(M, shapes={'x': (2**40, 2**40, 2**40)})",
     "OrtpoolError: shapes['x']: its sizes multiply to more than 576460752303423488 elements "
     '(2**59), more than any array can hold'),
    ('ortpool.validate(M, inputs=5)',
     'TypeError: inputs=5 must be a name -> array mapping or an .npz path, not int'),
    ("ortpool.validate(M, inputs='')",
     "OrtpoolError: inputs='' must name a file"),
    ("ortpool.validate(M, inputs={'x': 'a'})",
     "TypeError: inputs['x'] must be an array of numbers, not of <U1 ('a')"),
    ("ortpool.validate(M, inputs={'x': HUGE})",
     "OrtpoolError: inputs['x'], an array of shape [1024, 1024, 1024, 1024] (float32) would "
     'take 4398046511104 bytes; ...'),
    ("ortpool.validate(M, seed='a')",
     "TypeError: seed='a' must be an integer, not str"),
    ('ortpool.validate(M, seed=-1)',
     'OrtpoolError: seed=-1 must be from 0 to 18446744073709551615'),
    ('ortpool.validate(M, seed=1.5)',
     'TypeError: seed=1.5 must be an integer, not float'),
    ('ortpool.validate(M, seed=2**64)',
     'OrtpoolError: seed=18446744073709551616 must be from 0 to 18446744073709551615'),
    ('ortpool.validate(M, seed=10**5000)',
     'OrtpoolError: seed is an integer of 16610 bits, larger than any option takes'),
    ('ortpool.validate(M, atol=10**400)',
     'OrtpoolError: atol is an integer of 1329 bits, larger than any option takes'),
    ('ortpool.validate(M, providers=[None])',
     'TypeError: providers=[None]: None is neither a provider name nor a (name, {options}) pair'),
    ('ortpool.validate(M, providers=5)',
     'TypeError: providers=5 must be a provider name or a list of them, not int'),
    ("ortpool.validate(M, providers='')",
     "OrtpoolError: providers '' names no provider; name at least one (e.g. cpu)"),
    ("ortpool.validate(M, providers='nope')",
     'OrtpoolError: providers: nope is not available in this onnxruntime ...'),
    ("ortpool.validate(M, providers=['cpu', 'cpu'])",
     "OrtpoolError: providers ['cpu', 'cpu'] names CPUExecutionProvider twice"),
    ('ortpool.validate(M, runtime=5)',
     'TypeError: runtime=5 must be a runtime name (onnxruntime, openvino, reference, tract) or '
     'a Runtime, not int'),
    ("ortpool.validate(M, runtime='nope')",
     "OrtpoolError: runtime='nope' is not a runtime ortpool knows: onnxruntime, openvino, "
     'reference, tract'),
    ("ortpool.validate(M, runtime='tract', providers='cpu')",
     "OrtpoolError: providers is onnxruntime's; runtime tract takes runtime_options and "
     'case_timeout (leave it out)'),
    ("ortpool.validate(M, runtime='openvino', opt_level='all', intra_op_threads=2)",
     "OrtpoolError: opt_level, intra_op_threads are onnxruntime's; runtime openvino takes "
     'runtime_options and case_timeout (leave them out)'),
    ("ortpool.validate(M, runtime_options={'precision': 'f32'})",
     "OrtpoolError: runtime_options {'precision': 'f32'}: onnxruntime's options are "
     'providers, opt_level and the threads'),
    ("ortpool.validate(M, runtime='openvino', runtime_options={'speed': 'max'})",
     "OrtpoolError: runtime_options: runtime 'openvino' takes no option 'speed' (its options: "
     'device, precision)'),
    ("ortpool.validate(M, runtime='openvino', runtime_options={'precision': 'f8'})",
     "OrtpoolError: runtime_options: openvino: precision='f8' is not one of f32, bf16, f16"),
    ("ortpool.validate(M, runtime='openvino', runtime_options=5)",
     'TypeError: runtime_options=5 must be a mapping of option names, not int'),
    ("ortpool.validate(M, runtime=ortpool.runtimes.get('tract'), runtime_options={})",
     'OrtpoolError: runtime_options={} with a Runtime object: give its options to '
     'ortpool.runtimes.get, or give runtime= a name'),
    ("ortpool.validate(M, runtime='tract', case_timeout=float('nan'))",
     'OrtpoolError: case_timeout=nan must be a finite number of seconds > 0 and <= 1000000'),
    ("ortpool.validate(M, case_timeout='5')",
     "TypeError: case_timeout='5' must be a number, not str"),
    ('ortpool.validate(M, case_timeout=5)',
     'OrtpoolError: case_timeout=5 limits a run of another runtime in its worker process; '
     'onnxruntime runs in this process, where it would do nothing (leave it out)'),
    ("ortpool.validate(M, opt_level='bogus')",
     "OrtpoolError: opt_level='bogus' must be one of disable, basic, extended, layout, all"),
    ('ortpool.validate(M, opt_level=1)',
     "TypeError: opt_level=1 must be one of 'disable', 'basic', 'extended', 'layout', 'all', "
     'not int'),
    ('ortpool.validate(M, intra_op_threads=-1)',
     'OrtpoolError: intra_op_threads=-1 must be >= 0'),
    ('ortpool.validate(M, intra_op_threads=10**6)',
     'OrtpoolError: intra_op_threads=1000000 must be at most ...'),
    ("ortpool.validate(M, inter_op_threads='2')",
     "TypeError: inter_op_threads='2' must be an integer, not str"),
    ("ortpool.validate(M, execution_mode='fast')",
     "OrtpoolError: execution_mode='fast' must be one of sequential, parallel"),
    ("ortpool.validate(M, nonfinite='false')",
     "TypeError: nonfinite='false' must be True or False, not str"),
    ("ortpool.validate(M, nonfinite='yes')",
     "TypeError: nonfinite='yes' must be True or False, not str"),
    ('ortpool.validate(M, nonfinite=1)',
     'TypeError: nonfinite=1 must be True or False, not int'),
    ("ortpool.validate(M, atol='1')",
     "TypeError: atol='1' must be a number, not str"),
    ("ortpool.validate(M, atol=float('nan'))",
     'OrtpoolError: atol=nan must be a finite number >= 0'),
    ('ortpool.validate(M, atol=-1)',
     'OrtpoolError: atol=-1 must be a finite number >= 0'),
    ("ortpool.validate(M, rtol=float('inf'))",
     'OrtpoolError: rtol=inf must be a finite number >= 0'),
    ("ortpool.validate(M, accuracy='x')",
     "TypeError: accuracy='x' must be an ortpool.tolerances.AccuracyRule, not str"),
    ("ortpool.validate(M, reference='yes')",
     "TypeError: reference='yes' must be True or False, not str"),
    ("ortpool.validate(M, reference_timeout=float('inf'))",
     'OrtpoolError: reference_timeout=inf must be a finite number of seconds > 0 and <= 1000000'),
    ("ortpool.validate(M, reference_timeout=float('nan'))",
     'OrtpoolError: reference_timeout=nan must be a finite number of seconds > 0 and <= 1000000'),
    ('ortpool.validate(M, reference_timeout=0)',
     'OrtpoolError: reference_timeout=0 must be a finite number of seconds > 0 and <= 1000000'),
    ("ortpool.validate(M, fail_on_rulings='no')",
     "TypeError: fail_on_rulings='no' must be True or False, not str"),
    ("ortpool.validate(M, isolate='yes')",
     "TypeError: isolate='yes' must be True or False, not str"),
    ('ortpool.validate(M, jobs=-1)',
     'OrtpoolError: jobs=-1 must be from 0 to 4096 (0: one per core)'),
    ('ortpool.validate(M, jobs=1.5)',
     'TypeError: jobs=1.5 must be an integer, not float'),
    ('ortpool.validate(M, jobs=10**9)',
     'OrtpoolError: jobs=1000000000 must be from 0 to 4096 (0: one per core)'),
    ("ortpool.validate(M, timeout=float('nan'))",
     'OrtpoolError: timeout=nan must be a finite number of seconds >= 0 and <= 1000000 (0: no '
     'limit)'),
    ("ortpool.validate(M, timeout=float('inf'))",
     'OrtpoolError: timeout=inf must be a finite number of seconds >= 0 and <= 1000000 (0: no '
     'limit)'),
    ('ortpool.validate(M, timeout=1e300)',
     'OrtpoolError: timeout=1e+300 must be a finite number of seconds >= 0 and <= 1000000 (0: '
     'no limit)'),
    ('ortpool.validate(M, timeout=-1)',
     'OrtpoolError: timeout=-1 must be a finite number of seconds >= 0 and <= 1000000 (0: no '
     'limit)'),
    ("ortpool.validate(M, timeout='10')",
     "TypeError: timeout='10' must be a number, not str"),
    ('ortpool.validate(M, timeout=60, isolate=False)',
     'OrtpoolError: timeout=60 limits a model validated in a child process; isolate=False '
     'validates in this process, where no limit applies (leave one of them out)'),
    ("ortpool.validate(M, guard_cost='x')",
     "TypeError: guard_cost='x' must be True or False, not str"),
    ('ortpool.fix(None)',
     'TypeError: model=None must be a path or an onnx.ModelProto, not NoneType'),
    ('ortpool.fix(5)',
     'TypeError: model=5 must be a path or an onnx.ModelProto, not int'),
    ("ortpool.fix(M, ops='Conv')",
     "OrtpoolError: ops: 'Conv' is not a pooling operator; choose from MaxPool,AveragePool,Max"
     'Unpool,LpPool,GlobalMaxPool,GlobalAveragePool,GlobalLpPool,MaxRoiPool'),
    ('ortpool.fix(M, ops=5)',
     'TypeError: ops=5 must be a name or a list of names, not int'),
    ('ortpool.fix(M, nodes=5)',
     'TypeError: nodes=5 must be a name or a list of names, not int'),
    ('ortpool.fix(M, exclude=[None])',
     'TypeError: exclude=[None] must hold names (str), not NoneType'),
    ("ortpool.fix(M, skip_invalid='x')",
     "TypeError: skip_invalid='x' must be True or False, not str"),
    ("ortpool.fix(M, shapes={'x': (1, 2.5)})",
     "OrtpoolError: shapes: the shape of 'x' must be a sequence of integers >= 0, not (1, 2.5)"),
    ("ortpool.fix(M, inputs={'x': HUGE})",
     "OrtpoolError: inputs['x'], an array of shape [1024, 1024, 1024, 1024] (float32) would "
     'take 4398046511104 bytes; ...'),
    ("ortpool.fix(M, seed='a')",
     "TypeError: seed='a' must be an integer, not str"),
    ("ortpool.fix(M, providers=[('cpu', 'x')])",
     "TypeError: providers=[('cpu', 'x')]: ('cpu', 'x') is neither a provider name nor a "
     '(name, {options}) pair'),
    ("ortpool.fix(M, opt_level='bogus')",
     "OrtpoolError: opt_level='bogus' must be one of disable, basic, extended, layout, all"),
    ('ortpool.fix(M, intra_op_threads=-1)',
     'OrtpoolError: intra_op_threads=-1 must be >= 0'),
    ('ortpool.fix(M, inter_op_threads=2.5)',
     'TypeError: inter_op_threads=2.5 must be an integer, not float'),
    ('ortpool.fix(M, execution_mode=None)',
     "TypeError: execution_mode=None must be one of 'sequential', 'parallel', not NoneType"),
    ("ortpool.fix(M, nonfinite='false')",
     "TypeError: nonfinite='false' must be True or False, not str"),
    ('ortpool.fix(M, accuracy=0.1)',
     'TypeError: accuracy=0.1 must be an ortpool.tolerances.AccuracyRule, not float'),
    ("ortpool.fix(M, lift_opset='no')",
     "TypeError: lift_opset='no' must be True or False, not str"),
    ('ortpool.fix(M, source_dir=5)',
     'TypeError: source_dir=5 must be a path (str or os.PathLike), not int'),
    ("ortpool.fix.fix_file(None, 'out.onnx')",
     'TypeError: source=None must be a path (str or os.PathLike), not NoneType'),
    ('ortpool.fix.fix_file(M, 5)',
     'TypeError: target=5 must be a path (str or os.PathLike), not int'),
    ("ortpool.fix.fix_file(M, 'out.onnx', allow_unproven='x')",
     "TypeError: allow_unproven='x' must be True or False, not str"),
    ("ortpool.fix.fix_file(M, 'out.onnx', dry_run='x')",
     "TypeError: dry_run='x' must be True or False, not str"),
    ("ortpool.fix.fix_file(M, 'out.onnx', link_data=1)",
     'TypeError: link_data=1 must be True or False, not int'),
    ("ortpool.fix.fix_file(M, 'out.onnx', json_report=5)",
     'TypeError: json_report=5 must be a path (str or os.PathLike), not int'),
    ("ortpool.fix.fix_file(M, 'out.onnx', bogus=1)",
     "TypeError: fix_file() got an unexpected keyword argument 'bogus'"),
    ("ortpool.fix.fix_file(M, 'out.onnx', source_dir='.')",
     "TypeError: fix_file() got an unexpected keyword argument 'source_dir'"),
    ("ortpool.fix.fix_file(M, 'out.onnx', nonfinite='false')",
     "TypeError: nonfinite='false' must be True or False, not str"),
    ('ortpool.bench(5)',
     'TypeError: model=5 must be a path (str or os.PathLike), not int'),
    ('ortpool.bench(M, 5)',
     'TypeError: fixed=5 must be a path (str or os.PathLike), not int'),
    ("ortpool.bench(shapes={'x': (1, 3)})",
     "OrtpoolError: shapes= and inputs= size a model's inputs: give model= (the bundled cases "
     "are ortpool's own models)"),
    ('ortpool.bench(inputs=5)',
     'TypeError: inputs=5 must be a name -> array mapping or an .npz path, not int'),
    ('ortpool.bench(cases=5)',
     'TypeError: cases=5 must be a name or a list of names, not int'),
    ("ortpool.bench(cases='nope')",
     'OrtpoolError: cases: no benchmark case matches nope; the cases are resnet-stem, vgg, '
     'segnet-indices, segnet-unpool, densenet-transition, inception, 3d, 1d, audio-1d, '
     'fixed-cost, gap-r50-head, gap-512, lppool, faster-rcnn-roi'),
    ("ortpool.bench(M, cases='vgg')",
     'OrtpoolError: model= and fixed= time a model against its fixed form, cases= the bundled '
     'cases: give model= (and fixed=), or cases='),
    ('ortpool.bench(repeat=0)',
     'OrtpoolError: repeat=0 must be from 1 to 1000000'),
    ("ortpool.bench(repeat='3')",
     "TypeError: repeat='3' must be an integer, not str"),
    ('ortpool.bench(repeat=10**9)',
     'OrtpoolError: repeat=1000000000 must be from 1 to 1000000'),
    ('ortpool.bench(repeat=True)',
     'TypeError: repeat=True must be an integer, not bool'),
    ("ortpool.bench(min_sample_ms=float('inf'))",
     'OrtpoolError: min_sample_ms=inf must be a finite number >= 0 and <= 1000'),
    ('ortpool.bench(min_sample_ms=2**1024)',
     'OrtpoolError: min_sample_ms is an integer of 1025 bits, larger than any option takes'),
    ('ortpool.bench(min_sample_ms=-5)',
     'OrtpoolError: min_sample_ms=-5 must be a finite number >= 0 and <= 1000'),
    ("ortpool.bench(min_sample_ms=float('nan'))",
     'OrtpoolError: min_sample_ms=nan must be a finite number >= 0 and <= 1000'),
    ("ortpool.bench(reference_timeout=float('inf'))",
     'OrtpoolError: reference_timeout=inf must be a finite number of seconds >= 0 and <= '
     '1000000 (0: skipped)'),
    ("ortpool.bench(reference_timeout=float('nan'))",
     'OrtpoolError: reference_timeout=nan must be a finite number of seconds >= 0 and <= '
     '1000000 (0: skipped)'),
    ('ortpool.bench(reference_timeout=-1)',
     'OrtpoolError: reference_timeout=-1 must be a finite number of seconds >= 0 and <= '
     '1000000 (0: skipped)'),
    ('ortpool.bench(seed=-1)',
     'OrtpoolError: seed=-1 must be from 0 to 18446744073709551615'),
    ("ortpool.bench(shared_pool='x')",
     "TypeError: shared_pool='x' must be True or False, not str"),
    ("ortpool.bench(opt_level='bogus')",
     "OrtpoolError: opt_level='bogus' must be one of disable, basic, extended, layout, all"),
    ('ortpool.bench(providers=[None])',
     'TypeError: providers=[None]: None is neither a provider name nor a (name, {options}) pair'),
    ("ortpool.bench(intra_op_threads='1')",
     "TypeError: intra_op_threads='1' must be an integer, not str"),
    ('ortpool.bench(inter_op_threads=-2)',
     'OrtpoolError: inter_op_threads=-2 must be >= 0'),
    ("ortpool.bench(execution_mode='x')",
     "OrtpoolError: execution_mode='x' must be one of sequential, parallel"),
    ("ortpool.conformance(runtime='nope')",
     "OrtpoolError: runtime='nope' is not a runtime ortpool knows: onnxruntime, openvino, "
     'reference, tract'),
    ("ortpool.conformance(runtime='reference', providers=['cpu'])",
     "OrtpoolError: providers is onnxruntime's; runtime reference takes runtime_options and "
     'case_timeout (leave it out)'),
    ("ortpool.conformance(runtime='openvino', runtime_options={'device': ''})",
     "OrtpoolError: runtime_options: openvino: device='' is not a device name (e.g. 'CPU')"),
    ("ortpool.conformance(runtime='tract', case_timeout=float('inf'))",
     'OrtpoolError: case_timeout=inf must be a finite number of seconds > 0 and <= 1000000'),
    ("ortpool.conformance(runtime='onnxruntime', case_timeout=30)",
     'OrtpoolError: case_timeout=30 limits a run of another runtime in its worker process; '
     'onnxruntime runs in this process, where it would do nothing (leave it out)'),
    ("ortpool.conformance(ops='Conv')",
     "OrtpoolError: ops: unknown pooling operator 'Conv'; expected one of MaxPool, "
     'AveragePool, MaxUnpool, LpPool, GlobalMaxPool, GlobalAveragePool, GlobalLpPool, '
     'MaxRoiPool'),
    ('ortpool.conformance(ops=5)',
     'TypeError: ops=5 must be a name or a list of names, not int'),
    ("ortpool.conformance(versions='x')",
     "TypeError: versions='x' must be an integer or a list of integers, not str"),
    ('ortpool.conformance(versions=[-1])',
     'OrtpoolError: versions=-1 must be >= 0'),
    ("ortpool.conformance(versions=['1'])",
     "TypeError: versions='1' must be an integer, not str"),
    ("ortpool.conformance(dtypes='complex')",
     "OrtpoolError: dtypes: element type 'complex' is not one of float, double, float16, "
     'bfloat16, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool (ONNX names; '
     "numpy's spellings are read too: float32=float, float64=double, bool_=bool)"),
    ('ortpool.conformance(dtypes=5)',
     'TypeError: dtypes=5 must be a name or a list of names, not int'),
    ('ortpool.conformance(ranks=[4])',
     'OrtpoolError: ranks [4] must name ranks among 1, 2, 3'),
    ("ortpool.conformance(ranks='x')",
     "TypeError: ranks='x' must be an integer or a list of integers, not str"),
    ('ortpool.conformance(ranks=[])',
     'OrtpoolError: ranks [] must name ranks among 1, 2, 3'),
    ('ortpool.conformance(seed=-1)',
     'OrtpoolError: seed=-1 must be from 0 to 18446744073709551615'),
    ("ortpool.conformance(nonfinite='yes')",
     "TypeError: nonfinite='yes' must be True or False, not str"),
    ("ortpool.conformance(atol='1')",
     "TypeError: atol='1' must be a number, not str"),
    ("ortpool.conformance(accuracy='x')",
     "TypeError: accuracy='x' must be an ortpool.tolerances.AccuracyRule, not str"),
    ("ortpool.conformance(opt_level='bogus')",
     "OrtpoolError: opt_level='bogus' must be one of disable, basic, extended, layout, all"),
    ('ortpool.conformance(providers=[5])',
     'TypeError: providers=[5]: 5 is neither a provider name nor a (name, {options}) pair'),
    ('ortpool.conformance(intra_op_threads=True)',
     'TypeError: intra_op_threads=True must be an integer, not bool'),
    ('ortpool.conformance(inter_op_threads=-1)',
     'OrtpoolError: inter_op_threads=-1 must be >= 0'),
    ('ortpool.conformance(execution_mode=1)',
     "TypeError: execution_mode=1 must be one of 'sequential', 'parallel', not int"),
    ("ortpool.conformance(rtol=float('nan'))",
     'OrtpoolError: rtol=nan must be a finite number >= 0'),
    ('ortpool.rewrite(5)',
     'TypeError: model=5 must be a path or an onnx.ModelProto, not int'),
    ('ortpool.rewrite(None)',
     'TypeError: model=None must be a path or an onnx.ModelProto, not NoneType'),
    ("ortpool.rewrite(b'junk')",
     "TypeError: model=b'junk' must be a path or an onnx.ModelProto, not bytes"),
    ("ortpool.rewrite(M, ops='Conv')",
     "OrtpoolError: ops: 'Conv' is not a pooling operator; choose from MaxPool,AveragePool,Max"
     'Unpool,LpPool,GlobalMaxPool,GlobalAveragePool,GlobalLpPool,MaxRoiPool'),
    ('ortpool.rewrite(M, nodes=5)',
     'TypeError: nodes=5 must be a name or a list of names, not int'),
    ('ortpool.rewrite(M, exclude=[1])',
     'TypeError: exclude=[1] must hold names (str), not int'),
    ("ortpool.rewrite(M, skip_invalid='yes')",
     "TypeError: skip_invalid='yes' must be True or False, not str"),
    ('ortpool.restore(5)',
     'TypeError: model=5 must be a path or an onnx.ModelProto, not int'),
    ("ortpool.restore(M, ops='Conv')",
     "OrtpoolError: ops: 'Conv' is not a pooling operator; choose from MaxPool,AveragePool,Max"
     'Unpool,LpPool,GlobalMaxPool,GlobalAveragePool,GlobalLpPool,MaxRoiPool'),
    ("ortpool.restore(M, skip_invalid='yes')",
     "TypeError: skip_invalid='yes' must be True or False, not str"),
    ('ortpool.restore(M, nodes=5)',
     'TypeError: nodes=5 must be a name or a list of names, not int'),
    ('ortpool.restore(M, exclude=[None])',
     'TypeError: exclude=[None] must hold names (str), not NoneType'),
    ("ortpool.rewrite.rewrite_file(5, 'out.onnx')",
     'TypeError: source=5 must be a path (str or os.PathLike), not int'),
    ('ortpool.rewrite.rewrite_file(M, None)',
     'TypeError: target=None must be a path (str or os.PathLike), not NoneType'),
    ("ortpool.rewrite.rewrite_file(M, 'out.onnx', link_data='x')",
     "TypeError: link_data='x' must be True or False, not str"),
    ("ortpool.rewrite.rewrite_file(M, 'out.onnx', json_report=5)",
     'TypeError: json_report=5 must be a path (str or os.PathLike), not int'),
    ("ortpool.rewrite.rewrite_file(M, 'out.onnx', ops='Conv')",
     "OrtpoolError: ops: 'Conv' is not a pooling operator; choose from MaxPool,AveragePool,Max"
     'Unpool,LpPool,GlobalMaxPool,GlobalAveragePool,GlobalLpPool,MaxRoiPool'),
    ("ortpool.rewrite.rewrite_file(M, 'out.onnx', nodes=[1])",
     'TypeError: nodes=[1] must hold names (str), not int'),
    ("ortpool.rewrite.rewrite_file(M, 'out.onnx', exclude=5)",
     'TypeError: exclude=5 must be a name or a list of names, not int'),
    ("ortpool.rewrite.rewrite_file(M, 'out.onnx', skip_invalid='x')",
     "TypeError: skip_invalid='x' must be True or False, not str"),
    ("ortpool.rewrite.restore_file(5, 'out.onnx')",
     'TypeError: source=5 must be a path (str or os.PathLike), not int'),
    ("ortpool.rewrite.restore_file(M, 'out.onnx', skip_invalid=0)",
     'TypeError: skip_invalid=0 must be True or False, not int'),
    ("ortpool.rewrite.restore_file(M, 'out.onnx', ops=5)",
     'TypeError: ops=5 must be a name or a list of names, not int'),
    ("ortpool.rewrite.restore_file(M, 'out.onnx', nodes=5)",
     'TypeError: nodes=5 must be a name or a list of names, not int'),
    ("ortpool.rewrite.restore_file(M, 'out.onnx', exclude=[None])",
     'TypeError: exclude=[None] must hold names (str), not NoneType'),
    ("ortpool.rewrite.restore_file(M, 'out.onnx', link_data='no')",
     "TypeError: link_data='no' must be True or False, not str"),
    ("ortpool.rewrite.restore_file(M, 'out.onnx', json_report=b'x')",
     "TypeError: json_report=b'x' must be a path (str or os.PathLike), not bytes"),
    ('ortpool.check_model(5)',
     "TypeError: model=5 must be a path, the model's bytes or an onnx.ModelProto, not int"),
    ("ortpool.check_model(b'junk')",
     "OrtpoolError: model=b'junk' is not an ONNX model: DecodeError: Error parsing message "
     "with type 'onnx.ModelProto': Wire format was corrupt"),
    ("ortpool.check_model('no-such-model.onnx')",
     "OrtpoolError: model='no-such-model.onnx': No such file or directory"),
    ('ortpool.InferenceSession(5)',
     "TypeError: model=5 must be a path, the model's bytes or an onnx.ModelProto, not int"),
    ("ortpool.InferenceSession(b'junk')",
     "OrtpoolError: model=b'junk' is not an ONNX model: DecodeError: Error parsing message "
     "with type 'onnx.ModelProto': Wire format was corrupt"),
    ('ortpool.InferenceSession(M, providers=[None])',
     'TypeError: providers[0]=None must be a provider name or a (name, {options}) pair'),
    ("ortpool.InferenceSession(M, providers='cpu')",
     "TypeError: providers='cpu' must be a list of provider names or (name, {options}) pairs"),
    ("ortpool.InferenceSession(M, sess_options='x')",
     "TypeError: sess_options='x' must be an onnxruntime.SessionOptions or None, not str"),
]  # fmt: skip


def namespace() -> dict[str, Any]:
    import numpy as np

    import ortpool

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    model = os.path.join(root, "models", "maxpool-12.onnx")
    return {"ortpool": ortpool, "M": model, "HUGE": np.broadcast_to(np.float32(0), (1024,) * 4)}


def outcome(call: str, names: dict[str, Any]) -> tuple[str, bool]:
    """``"Type: message"`` of what ``call`` raised (or ``"returned"``), and whether the error
    arrived clean: no other exception chained to it, the traceback's last frame ortpool's."""
    try:
        eval(call, names)  # the table's own calls, written in this file
    except Exception as err:  # every refusal, whatever its type: the test judges it
        clean = err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)
        return f"{type(err).__name__}: {err}", clean
    return "returned", True


def run(calls: list[str], cwd: str) -> None:
    """In the child: each call in turn, printed as one JSON list of (outcome, clean)."""
    os.chdir(cwd)
    names = namespace()
    print(json.dumps([outcome(call, names) for call in calls]))
