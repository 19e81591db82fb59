//! `atomzero bench selfplay`, first part: tree work alone (a uniform evaluator costs nothing),
//! with legal-move generation on the same positions as the reference.

use crate::error::{BenchError, Result};
use atomzero_mcts::{Evaluator, Search, SearchConfig, UniformEvaluator, pending_requests};
use atomzero_rules::{Game, MoveList, Position, Variant};
use std::io::Write;
use std::time::Instant;

/// Drives `trees` searches from different positions on this thread, as a self-play worker
/// does (each tree plays `moves` moves after the first search, keeping its subtree), with an
/// evaluator that costs nothing: what remains is tree work and move generation. Repeated for at
/// least 1.5 s; the median repetition is reported.
pub fn tree(
    trees: usize,
    visits: u32,
    leaves: usize,
    moves: usize,
    out: &mut dyn Write,
) -> Result<()> {
    if trees == 0 || visits == 0 || leaves == 0 {
        return Err(BenchError::msg("--trees, --visits and --leaves must be positive"));
    }
    // The reference: legal-move generation alone, on a sample of the positions the trees
    // expand (every node costs one generation besides its selection, play and backup). Timed
    // right after each repetition, so both see the same moment of the machine.
    let mut sample = Vec::new();
    tree_run(trees, visits, leaves, moves, Some(&mut sample));
    let start = Instant::now();
    let mut runs: Vec<TreeRun> = Vec::new();
    let mut movegen: Vec<f64> = Vec::new();
    while runs.len() < 3 || start.elapsed().as_secs_f64() < 1.5 {
        runs.push(tree_run(trees, visits, leaves, moves, None));
        movegen.push(movegen_run(&sample));
    }
    runs.sort_by(|a, b| a.nodes_per_sec().total_cmp(&b.nodes_per_sec()));
    movegen.sort_by(f64::total_cmp);
    let median = &runs[runs.len() / 2];
    let best = &runs[runs.len() - 1];
    let movegen = movegen[movegen.len() / 2];
    writeln!(out, "bench selfplay (tree work alone, uniform evaluator, 1 thread)")?;
    writeln!(
        out,
        "  {trees} trees x {} moves x {visits} visits (tree reuse), {leaves} leaves/tree/round: \
         {} nodes in {:.3} s; {} repetitions: median {:.0} nodes/s per core (best {:.0})",
        moves + 1,
        median.nodes,
        median.secs,
        runs.len(),
        median.nodes_per_sec(),
        best.nodes_per_sec()
    )?;
    writeln!(
        out,
        "  {} batches, mean batch {:.1} positions; uniform evaluator share {:.1}% of wall time",
        median.batches,
        median.evaluated as f64 / median.batches.max(1) as f64,
        100.0 * median.eval_secs / median.secs
    )?;
    writeln!(
        out,
        "  reference, same run: legal-move generation alone on {} of these positions: median {:.0} \
         positions/s; the tree work costs {:.2} generations' time per node",
        sample.len(),
        movegen,
        movegen / median.nodes_per_sec()
    )?;
    writeln!(
        out,
        "  goal: >= 1,000,000 nodes/s per core ({:.2}x of goal)",
        median.nodes_per_sec() / 1e6
    )?;
    Ok(())
}

/// Legal-move generations per second over `positions` (passes repeated for at least 0.1 s).
fn movegen_run(positions: &[Position]) -> f64 {
    let mut list = MoveList::new();
    let (mut generated, mut moves) = (0usize, 0usize);
    let start = Instant::now();
    while generated == 0 || start.elapsed().as_secs_f64() < 0.1 {
        for pos in positions {
            pos.legal_moves_into(&mut list);
            moves += list.len();
        }
        generated += positions.len().max(1);
    }
    std::hint::black_box(moves);
    generated as f64 / start.elapsed().as_secs_f64()
}

/// One repetition of [`tree`].
struct TreeRun {
    nodes: u64,
    secs: f64,
    batches: u64,
    evaluated: u64,
    eval_secs: f64,
}

impl TreeRun {
    fn nodes_per_sec(&self) -> f64 {
        self.nodes as f64 / self.secs
    }
}

/// One repetition of [`tree`]; with `sample`, every 16th position sent to the evaluator
/// is copied into it.
fn tree_run(
    trees: usize,
    visits: u32,
    leaves: usize,
    moves: usize,
    mut sample: Option<&mut Vec<Position>>,
) -> TreeRun {
    let start = Instant::now();
    // (search, moves still to play, root visits when this move's search began)
    let mut searches: Vec<(Search, usize, u32)> = (0..trees)
        .map(|i| {
            // Distinct positions: a few plies of a fixed pseudo-random walk.
            let mut pos = Position::new(Variant::Atomic);
            for k in 0..(i % 7) {
                let moves = pos.legal_moves();
                pos.play_unchecked(moves[(i * 31 + k * 17) % moves.len()]);
            }
            (Search::new(&Game::new(pos), SearchConfig::default(), i as u64), moves, 0)
        })
        .collect();
    let evaluator = UniformEvaluator;
    let (mut batches, mut evaluated, mut nodes) = (0u64, 0u64, 0u64);
    let mut eval_secs = 0.0;
    let mut active: Vec<bool> = vec![true; trees];
    loop {
        for (k, (s, left, base)) in searches.iter_mut().enumerate() {
            if !active[k] {
                continue;
            }
            let before = s.root_visits();
            if before >= visits || s.root_proven() != atomzero_mcts::Proven::Unknown {
                // This move's search is done: count its visits, then play on with tree reuse.
                nodes += u64::from(before - *base);
                match s.best_move() {
                    Some(mv) if *left > 0 => {
                        *left -= 1;
                        s.advance(mv);
                        *base = s.root_visits();
                    }
                    _ => {
                        active[k] = false;
                        continue;
                    }
                }
            }
            if s.gather(leaves).is_empty() && s.root_visits() == before {
                // Nothing to search (a finished game at the root).
                active[k] = false;
            }
        }
        if !active.iter().any(|&a| a) {
            break;
        }
        let requests = pending_requests(searches.iter().map(|(s, ..)| s));
        if let Some(sample) = sample.as_deref_mut() {
            let first = (16 - evaluated % 16) % 16;
            sample.extend(requests.iter().skip(first as usize).step_by(16).map(|r| *r.position));
        }
        let t = Instant::now();
        let evals = evaluator.evaluate(&requests);
        eval_secs += t.elapsed().as_secs_f64();
        batches += 1;
        evaluated += requests.len() as u64;
        drop(requests);
        let mut offset = 0;
        for (s, ..) in searches.iter_mut() {
            let n = s.pending().len();
            s.apply(evals.range(offset..offset + n));
            offset += n;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    TreeRun { nodes, secs, batches, evaluated, eval_secs }
}
