"""``ortpool bench``: onnxruntime's built-in pooling against ortpool's ops on real CNN shapes.

* :mod:`ortpool.bench.cases` - the benchmark cases (shapes, attributes, inputs).
* :mod:`ortpool.bench.models` - single-node models: built-in node or ortpool node.
* :mod:`ortpool.bench.timing` - the interleaved timing loop and its statistics.
* :mod:`ortpool.bench.machine` - what the figures were measured on.
* :mod:`ortpool.bench.runner` - one case measured end to end.
* :mod:`ortpool.bench.report` - the table and the JSON document.
"""
