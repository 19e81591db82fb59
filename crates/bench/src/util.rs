//! Shared pieces of the measurements: median timing, threads that call in a loop, synthetic
//! games and their encoded positions.

use atomzero_encoding::{Batch, Encoder};
use atomzero_mcts::Rng;
use atomzero_nn::NetConfig;
use atomzero_replay::{EndReason, GameRecord, MoveRecord, ReplayWindow, SearchTarget};
use atomzero_rules::{Color, Position, Variant};
use std::time::Instant;

pub(crate) fn time_median(seconds: f64, mut f: impl FnMut()) -> f64 {
    f();
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3 || (start.elapsed().as_secs_f64() < seconds && times.len() < 2000) {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// `n` random atomic games (fixed seed) recorded as self-play would, every move a training
/// target with a few visited moves. Their results cycle through a white win, a black win (by
/// resignation) and a draw (the length limit), so that the value targets differ and a
/// training step's value loss (and its gradients, which `gpu-check` compares) is not zero.
pub(crate) fn random_games(n: usize, seed: u64) -> Vec<GameRecord> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let start = Position::new(Variant::Atomic);
            let mut pos = start;
            let mut moves = Vec::new();
            for _ in 0..80 {
                if pos.outcome().is_some() {
                    break;
                }
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal[rng.below(legal.len())];
                let policy = (0..legal.len().min(8)).map(|i| (legal[i], 1.0 + i as f32)).collect();
                moves.push(MoveRecord {
                    mv,
                    target: Some(SearchTarget {
                        policy,
                        root_wdl: [0.3, 0.4, 0.3],
                        surprise: None,
                    }),
                });
                pos.play_unchecked(mv);
            }
            GameRecord {
                variant: Variant::Atomic,
                start_fen: start.fen(),
                chess960: false,
                moves,
                winner: [Some(Color::White), Some(Color::Black), None][i % 3],
                reason: if i % 3 == 2 { EndReason::MaxLength } else { EndReason::Resignation },
                resign_disabled: false,
                resign_point: None,
            }
        })
        .collect()
}

/// `[n, planes, 8, 8]` inputs encoded from positions of `games` (repeated if needed).
pub(crate) fn encoded_positions(games: &[GameRecord], config: &NetConfig, n: usize) -> Vec<f32> {
    let window = ReplayWindow::from_games(games.to_vec());
    let encoder = Encoder::new(config.encoder);
    let mut batch = Batch::new(encoder, n);
    let history = config.encoder.history;
    for i in 0..n {
        if let Some(sample) = window.get((i * 7) % window.len().max(1), history) {
            batch.push(&sample.position, &sample.history, sample.repetitions);
        }
    }
    let mut out = batch.as_slice().to_vec();
    out.resize(n * encoder.planes() * 64, 0.0);
    out
}
