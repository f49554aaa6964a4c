"""The model layer: what ortpool knows about a model as a whole, without running it.

Between the kernels and onnxruntime (``spec -> kernels -> model -> ort -> rewrite/validate/fix/
bench -> cli``): it imports onnx, numpy and the spec modules, never onnxruntime.

- :mod:`ortpool.model.inputs`: a model's input shapes and values for a run, resolved the same
  way for every command that runs a model (``--shape``, ``--inputs``, ``--seed``).
- :mod:`ortpool.model.scopes`: a model's graphs, subgraphs and model-local functions, each with
  the opset that governs it.
- :mod:`ortpool.model.carry`: bfloat16 inputs, outputs and captured tensors carried as float32
  through Casts (onnxruntime's Python API feeds and fetches no bfloat16 array).
- :mod:`ortpool.model.branch_outputs`: declared shapes of branch outputs set aside and put back.
- :mod:`ortpool.model.external`: external data located, planned and serialized.
- :mod:`ortpool.model.files`: a model file and its report written all together or not at all
  (``write_file``, ``save``).
"""
