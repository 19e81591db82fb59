"""Checks an ONNX file written by `atomzero export` against atomzero's own outputs.

Reads the reference dump of `atomzero export --reference DIR` (planes.npy, policy.npy, wdl.npy,
positions.txt; see crates/cli/src/export_cmd.rs), runs the ONNX model with onnxruntime and
requires:

- the declared interface: input `planes` [batch, C, 8, 8], outputs `policy` [batch, 4672] and
  `wdl` [batch, 3], float32, `batch` symbolic; the documented metadata keys;
- outputs equal to atomzero's within the tolerance (default 1e-4, absolute), with the whole
  batch at once and in batches of 1 and 7 (the batch dimension is dynamic);
- positions with both colours to move;
- planes 0-23 equal to an independent encoding of each FEN with python-chess's AtomicBoard,
  following the plane list in the file's `atomzero.input_encoding` metadata (and the legal
  moves listed by atomzero equal to python-chess's).

Exits 1 with the reason on any failure. Usage:
    python scripts/onnx_check.py --onnx NET.onnx --reference DIR [--tolerance 1e-4]
"""

import argparse
import os
import sys

import chess
import chess.variant
import numpy as np
import onnxruntime as ort

METADATA_KEYS = [
    "atomzero.onnx_format",
    "atomzero.encoding_version",
    "atomzero.input_planes",
    "atomzero.input_encoding",
    "atomzero.policy_layout",
    "atomzero.value_layout",
    "atomzero.variant",
    "atomzero.architecture",
    "atomzero.training_step",
    "atomzero.source",
]
PIECES = [chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING]
VARIANTS = ["atomic", "nocheckatomic", "atomar", "deathmatch", "pawnblast"]


def fail(message):
    print(f"onnx-check: FAIL: {message}")
    sys.exit(1)


def encode(board, repetitions, variant):
    """Planes 0-23 of encoding version 1, written from the plane list, not from atomzero."""
    planes = np.zeros((24, 64), dtype=np.float32)
    us = board.turn

    def view(square):
        return square if us == chess.WHITE else square ^ 56

    for i, piece in enumerate(PIECES):
        for square in board.pieces(piece, us):
            planes[i, view(square)] = 1.0
        for square in board.pieces(piece, not us):
            planes[6 + i, view(square)] = 1.0
    if repetitions >= 1:
        planes[12, :] = 1.0
    if repetitions >= 2:
        planes[13, :] = 1.0
    rooks = board.clean_castling_rights()
    for square in chess.SquareSet(rooks & board.occupied_co[us]):
        planes[14, view(square)] = 1.0
    for square in chess.SquareSet(rooks & board.occupied_co[not us]):
        planes[15, view(square)] = 1.0
    if board.ep_square is not None and board.has_legal_en_passant():
        planes[16, view(board.ep_square)] = 1.0
    planes[17, :] = min(board.halfmove_clock, 100) / 100.0
    planes[18, :] = 1.0
    planes[19 + VARIANTS.index(variant), :] = 1.0
    return planes.reshape(24, 8, 8)


def check_interface(session):
    inputs, outputs = session.get_inputs(), session.get_outputs()
    if [i.name for i in inputs] != ["planes"]:
        fail(f"inputs {[i.name for i in inputs]}, expected ['planes']")
    shape = inputs[0].shape
    if not (isinstance(shape[0], str) and shape[1:] == [shape[1], 8, 8] and len(shape) == 4):
        fail(f"input shape {shape}, expected [batch, C, 8, 8] with a symbolic batch")
    got = [(o.name, o.shape) for o in outputs]
    want = [("policy", [shape[0], 4672]), ("wdl", [shape[0], 3])]
    if got != want:
        fail(f"outputs {got}, expected {want}")
    for value in inputs + outputs:
        if value.type != "tensor(float)":
            fail(f"{value.name} has type {value.type}, expected tensor(float)")
    metadata = session.get_modelmeta().custom_metadata_map
    missing = [key for key in METADATA_KEYS if key not in metadata]
    if missing:
        fail(f"metadata lacks {missing}")
    if int(metadata["atomzero.input_planes"]) != shape[1]:
        fail("atomzero.input_planes differs from the input's channels")
    return metadata


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--onnx", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()

    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(args.onnx, options, providers=["CPUExecutionProvider"])
    metadata = check_interface(session)

    planes = np.load(os.path.join(args.reference, "planes.npy"))
    policy = np.load(os.path.join(args.reference, "policy.npy"))
    wdl = np.load(os.path.join(args.reference, "wdl.npy"))
    with open(os.path.join(args.reference, "positions.txt")) as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    n = len(rows)
    if not (planes.shape[0] == policy.shape[0] == wdl.shape[0] == n) or n == 0:
        fail(f"reference sizes differ: {planes.shape}, {policy.shape}, {wdl.shape}, {n} FENs")

    # Outputs: the whole batch, then batches of 1 and 7 (dynamic batch dimension).
    worst = {"policy": 0.0, "wdl": 0.0}
    for batch in (n, 1, 7):
        for start in range(0, n, batch):
            got_policy, got_wdl = session.run(None, {"planes": planes[start:start + batch]})
            for name, got, want in (("policy", got_policy, policy), ("wdl", got_wdl, wdl)):
                expected = want[start:start + batch]
                if got.shape != expected.shape:
                    fail(f"{name} has shape {got.shape} for batch {batch}, expected {expected.shape}")
                worst[name] = max(worst[name], float(np.max(np.abs(got - expected))))
    if max(worst.values()) > args.tolerance:
        fail(f"max |onnxruntime - atomzero|: policy {worst['policy']:.3g}, "
             f"wdl {worst['wdl']:.3g} > {args.tolerance}")
    if float(np.max(np.abs(policy))) < 1e-3:
        fail("the reference policy is all zero: nothing was compared")

    # Positions: both colours, real (legal per python-chess), and the encoding as documented.
    variant = metadata["atomzero.variant"]
    colours = {"w": 0, "b": 0}
    for i, (fen, repetitions, moves) in enumerate(rows):
        colours[fen.split()[1]] += 1
        if variant != "atomic":
            continue  # python-chess's AtomicBoard plays lichess atomic only.
        board = chess.variant.AtomicBoard(fen)
        if not board.is_valid() or board.is_variant_end():
            fail(f"position {i} is not a playable atomic position: {fen}")
        ours = sorted(moves.split())
        theirs = sorted(m.uci() for m in board.legal_moves)
        if ours != theirs:
            fail(f"legal moves of {fen} differ: atomzero only {sorted(set(ours) - set(theirs))}, "
                 f"python-chess only {sorted(set(theirs) - set(ours))}")
        expected = encode(board, int(repetitions), variant)
        if not np.array_equal(planes[i, :24], expected):
            bad = sorted({int(p) for p in np.argwhere(planes[i, :24] != expected)[:, 0]})
            fail(f"planes {bad} of position {i} ({fen}) differ from the documented encoding")
    if min(colours.values()) == 0:
        fail(f"positions have only one colour to move: {colours}")

    print(f"onnx-check: {args.onnx}: {n} positions ({colours['w']} White, {colours['b']} Black "
          f"to move), batches {n}, 1, 7: max |onnxruntime - atomzero| policy "
          f"{worst['policy']:.3g}, wdl {worst['wdl']:.3g} (tolerance {args.tolerance:g}); "
          f"interface, metadata and planes 0-23 as documented")


if __name__ == "__main__":
    main()
