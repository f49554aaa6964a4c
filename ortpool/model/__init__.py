"""The model layer: what ortpool knows about a model as a whole, without running it.

Between the kernels and onnxruntime (``spec -> kernels -> model -> ort -> rewrite/validate/fix/
bench -> cli``): it imports onnx, numpy and the spec modules, never onnxruntime.

- :mod:`ortpool.model.inputs`: a model's input shapes and values for a run, resolved the same
  way for every command that runs a model (``--shape``, ``--inputs``, ``--seed``).
"""
