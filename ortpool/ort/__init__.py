"""Everything that touches onnxruntime: op registration, the result hook, the session wrapper.

Importing this package imports onnxruntime and onnxruntime-extensions (about 250 MB); the rest of
ortpool does not, so commands that need no session stay light.
"""
