"""Whole-project checks: the import graph, the wheel, the bundled models, the lowest onnxruntime
release, OpenVINO."""
