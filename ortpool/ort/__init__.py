"""Everything that touches onnxruntime: op registration, the result hook, the session wrapper,
and what the installed runtime is (``runtime``).

Importing ``register``, ``hook`` or ``session`` imports onnxruntime and onnxruntime-extensions
(about 250 MB); ``runtime`` imports them only when asked for versions or the IR limit.
The rest of ortpool imports neither.
"""
