//! `atomzero bench ...`: throughput figures measured on this machine, each printed beside a
//! reference measured in the same run.

use anyhow::Result;
use atomzero_mcts::{EvalRequest, Evaluator, Search, SearchConfig, UniformEvaluator};
use atomzero_rules::{Game, Position, Variant};
use clap::{Args, Subcommand};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    what: BenchWhat,
}

#[derive(Subcommand, Debug)]
enum BenchWhat {
    /// Search speed: tree work alone with a uniform evaluator (nodes/s on one core).
    Selfplay {
        /// Concurrent trees driven by the one thread.
        #[arg(long, default_value_t = 64)]
        trees: usize,
        /// Visits per tree.
        #[arg(long, default_value_t = 800)]
        visits: u32,
        /// Leaves gathered per tree per round.
        #[arg(long, default_value_t = 4)]
        leaves: usize,
    },
}

pub fn run(args: BenchArgs) -> Result<()> {
    match args.what {
        BenchWhat::Selfplay { trees, visits, leaves } => bench_tree(trees, visits, leaves),
    }
}

/// Drives `trees` searches from different positions on this thread, as a self-play worker
/// does, with an evaluator that costs nothing: what remains is tree work and move generation.
fn bench_tree(trees: usize, visits: u32, leaves: usize) -> Result<()> {
    let mut searches: Vec<Search> = (0..trees)
        .map(|i| {
            // Distinct positions: a few plies of a fixed pseudo-random walk.
            let mut pos = Position::new(Variant::Atomic);
            for k in 0..(i % 7) {
                let moves = pos.legal_moves();
                pos.play_unchecked(moves[(i * 31 + k * 17) % moves.len()]);
            }
            Search::new(&Game::new(pos), SearchConfig::default(), i as u64)
        })
        .collect();
    let evaluator = UniformEvaluator;
    let start = Instant::now();
    let (mut batches, mut evaluated) = (0u64, 0u64);
    let mut eval_secs = 0.0;
    loop {
        let mut active = false;
        for s in searches.iter_mut().filter(|s| {
            s.root_visits() < visits && s.root_proven() == atomzero_mcts::Proven::Unknown
        }) {
            s.gather(leaves);
            active = true;
        }
        if !active {
            break;
        }
        let requests: Vec<EvalRequest<'_>> =
            searches.iter().flat_map(|s| s.pending().iter().map(|l| l.request())).collect();
        let t = Instant::now();
        let evals = evaluator.evaluate(&requests);
        eval_secs += t.elapsed().as_secs_f64();
        batches += 1;
        evaluated += requests.len() as u64;
        drop(requests);
        let mut offset = 0;
        for s in searches.iter_mut() {
            let n = s.pending().len();
            s.apply(&evals[offset..offset + n]);
            offset += n;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let nodes: u64 = searches.iter().map(|s| u64::from(s.root_visits())).sum();
    println!("bench selfplay (tree work alone, uniform evaluator, 1 thread)");
    println!(
        "  {trees} trees x {visits} visits, {leaves} leaves/tree/round: {nodes} nodes in {secs:.3} s = {:.0} nodes/s per core",
        nodes as f64 / secs
    );
    println!(
        "  {batches} batches, mean batch {:.1} positions, {evaluated} evaluations; uniform evaluator share {:.1}% of wall time",
        evaluated as f64 / batches.max(1) as f64,
        100.0 * eval_secs / secs
    );
    println!("  goal: >= 1,000,000 nodes/s per core ({:.2}x of goal)", nodes as f64 / secs / 1e6);
    Ok(())
}
