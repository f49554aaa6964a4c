"""ortpool.model.reference: the onnx reference evaluator's one worker, for validate and bench."""

from __future__ import annotations


def test_reference_worker_times_refuses_and_answers_in_one_process():
    import numpy as np

    from ortpool.model.reference import ReferenceWorker
    from ortpool.model.singlenode import alone_model, feed_dict
    from tests.support.judging import site_of

    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    pool = alone_model(site_of("MaxPool", 12, attrs, [x]), [x])
    rois = np.array([[0, 0, 0, 3, 3]], dtype=np.float32)
    roi = alone_model(site_of("MaxRoiPool", 22, {"pooled_shape": [1, 1]}, [x, rois]), [x, rois])
    with ReferenceWorker(timeout=60) as worker:
        times, outputs = worker.time(pool.SerializeToString(), feed_dict([x]))
        assert 1 <= len(times) <= 5
        assert outputs[0].reshape(-1).tolist() == [5.0, 7.0, 13.0, 15.0]
        refused = worker.time(roi.SerializeToString(), feed_dict([x, rois]))
        assert refused is not None and refused[0] == []
        assert "No registered implementation for operator 'MaxRoiPool'" in refused[1]
        assert "\n" not in refused[1]  # the first line only, for the benchmark's table
        status, payload, _ = worker.run(roi.SerializeToString(), feed_dict([x, rois]))
        assert status == "error"  # validate keeps the whole text (its defects are matched in it)
        assert payload.startswith("RuntimeImplementationError: No registered") and "\n" in payload
        status, payload, _ = worker.run(pool.SerializeToString(), feed_dict([x]))  # same worker
        assert status == "ok" and payload[0].shape == (1, 1, 2, 2)
