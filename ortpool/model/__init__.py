"""The model layer: what ortpool knows about a model as a whole, without running it.

Between the kernels and onnxruntime (``spec -> kernels -> model -> ort -> rewrite/validate/fix/
bench -> cli``): it imports onnx, numpy and the spec modules, never onnxruntime.

- :mod:`ortpool.model.inputs`: a model's input shapes and values for a run, resolved the same
  way for every command that runs a model (``--shape``, ``--inputs``, ``--seed``).
- :mod:`ortpool.model.scopes`: a model's graphs, subgraphs and model-local functions, each with
  the opset that governs it.
- :mod:`ortpool.model.inference`: element types, ranks and dims per scope (onnx inference),
  for the rewrite and the fix.
- :mod:`ortpool.model.splice`: a node replaced where it stood, the opset import of its owner.
- :mod:`ortpool.model.singlenode`: one node alone as a model; ``node_model`` builds every small
  model ortpool makes, stamped with the IR every supported onnxruntime reads.
- :mod:`ortpool.model.reference`: the onnx reference evaluator in a worker with a time limit
  (:mod:`ortpool.model.worker`: the spawned-worker pattern).
- :mod:`ortpool.model.carry`: bfloat16 inputs, outputs and captured tensors carried as float32
  through Casts (onnxruntime's Python API feeds and fetches no bfloat16 array).
- :mod:`ortpool.model.branch_outputs`: declared shapes of branch outputs set aside and put back.
- :mod:`ortpool.model.external`: external data located, planned and serialized.
- :mod:`ortpool.model.files`: a model file and its report written all together or not at all
  (``write_file``, ``save``).
"""
