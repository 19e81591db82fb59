#!/usr/bin/env python3
"""onnxruntime's speed on an atomzero network, for `atomzero bench net` (which starts this with
the project venv's Python when onnxruntime is installed there, see scripts/python-env.sh).

Usage: ort_bench.py MODEL.onnx INPUTS.f32 PLANES
  MODEL.onnx   the network exported by atomzero (`planes` -> `policy`, `wdl`)
  INPUTS.f32   little-endian float32 positions, [n, PLANES, 8, 8]
Then reads lines `BATCH SECONDS` on stdin and answers each with `ort BATCH SECONDS_PER_CALL`
(the median of calls repeated for about SECONDS, after one warm-up call), so that the caller
can alternate between onnxruntime and its own runtime at the same moments of the machine.
onnxruntime runs on one thread (intra- and inter-op), all graph optimisations on.
"""
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort


def main() -> None:
    model, inputs, planes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    data = np.fromfile(inputs, dtype="<f4").reshape(-1, planes, 8, 8)
    print("ready", flush=True)
    for line in sys.stdin:
        batch, seconds = int(line.split()[0]), float(line.split()[1])
        x = np.ascontiguousarray(data[:batch])
        session.run(None, {"planes": x})
        times = []
        start = time.perf_counter()
        while len(times) < 3 or (time.perf_counter() - start < seconds and len(times) < 2000):
            t0 = time.perf_counter()
            session.run(None, {"planes": x})
            times.append(time.perf_counter() - t0)
        print(f"ort {batch} {statistics.median(times):.9f}", flush=True)


if __name__ == "__main__":
    main()
