#!/usr/bin/env python3
"""Reads atomzero's TensorBoard event files with TensorBoard's own EventAccumulator and checks
the scalars a run must log. Exit 1 with the reason on any problem."""
import argparse
import glob
import math
import os
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

ap = argparse.ArgumentParser()
ap.add_argument("logdir")
ap.add_argument("--generations", type=int, required=True)
ap.add_argument("--steps", type=int, required=True)
ap.add_argument("--log-every", type=int, required=True)
args = ap.parse_args()

files = sorted(glob.glob(os.path.join(args.logdir, "events.out.tfevents.*")))
if not files:
    sys.exit(f"no event files in {args.logdir}")

scalars = {}
for path in files:
    acc = EventAccumulator(path, size_guidance={"scalars": 0})
    acc.Reload()
    for tag in acc.Tags()["scalars"]:
        scalars.setdefault(tag, []).extend((e.step, e.value) for e in acc.Scalars(tag))

training = ["loss/total", "loss/policy", "loss/value", "policy/entropy", "value/accuracy",
            "train/learning_rate", "train/grad_norm", "train/samples_per_sec",
            "train/data_fraction"]
per_generation = ["selfplay/game_length", "selfplay/white_wins", "selfplay/draws",
                  "selfplay/black_wins", "selfplay/positions_per_sec", "gate/score",
                  "gate/passed"]
problems = []
want_steps = list(range(args.log_every, args.steps + 1, args.log_every))
for tag in training:
    steps = sorted(s for s, _ in scalars.get(tag, []))
    if steps != want_steps:
        problems.append(f"{tag}: steps {steps}, expected {want_steps}")
for tag in per_generation:
    steps = sorted(s for s, _ in scalars.get(tag, []))
    if steps != list(range(1, args.generations + 1)):
        problems.append(f"{tag}: generations {steps}, expected 1..{args.generations}")
if not scalars.get("eval/elo"):
    problems.append("eval/elo: missing")
for tag, points in scalars.items():
    for step, value in points:
        if not math.isfinite(value):
            problems.append(f"{tag}: value {value} at step {step}")
loss = [v for _, v in sorted(scalars.get("loss/total", []))]
if loss and not all(0 < v < 20 for v in loss):
    problems.append(f"loss/total out of range: {loss}")
for tag in ["selfplay/white_wins", "selfplay/draws", "selfplay/black_wins", "gate/score"]:
    for step, value in scalars.get(tag, []):
        if not 0 <= value <= 1:
            problems.append(f"{tag}: {value} at generation {step} is not a fraction")

if problems:
    print("tensorboard check FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"tensorboard: {len(files)} event files read by TensorBoard's EventAccumulator, "
      f"{len(scalars)} tags, {sum(len(p) for p in scalars.values())} points, all as expected")
