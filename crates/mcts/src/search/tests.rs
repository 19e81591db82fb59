//! Tests of the search's internals: one-pass selection against the textbook two-pass PUCT,
//! the exploration table, tree reuse with leaves in flight, leaves' positions and
//! repetitions, LCB's value samples.

use super::select::exploration_terms;
use super::*;
use crate::Evaluations;
use crate::evaluator::{RandomEvaluator, UniformEvaluator};
use crate::root::RootChild;
use atomzero_rules::Variant;

#[test]
fn lcb_samples_are_each_root_childs_visits_of_this_search() {
    let game = Game::new(Position::new(Variant::Atomic));
    let config = SearchConfig { lcb_stdevs: 5.0, ..SearchConfig::default().without_noise() };
    let mut search = Search::new(&game, config, 3);
    search.run(&RandomEvaluator { seed: 3 }, 400, 4);
    let check = |search: &Search| {
        let root = &search.nodes[0];
        assert_eq!(search.root_samples.len(), root.n_edges as usize);
        for (i, (_, child)) in search.root_edges().enumerate() {
            let sample = search.root_samples[i];
            assert_eq!(sample.n, child.visits, "child {i}");
            let sum = child.win_loss_sum[0] - child.win_loss_sum[1];
            assert!((sample.sum - f64::from(sum)).abs() < 1e-3, "child {i}: {sample:?}");
        }
    };
    check(&search);
    // After tree reuse the new root's children start a fresh sample.
    let m = search.best_move().unwrap();
    let reply = search.root_position().play(m).unwrap().legal_moves()[0];
    search.advance(m);
    search.advance(reply);
    assert!(search.root_samples.iter().all(|s| s.n == 0));
    search.run(&RandomEvaluator { seed: 3 }, search.root_visits() + 200, 4);
    let fresh: u32 = search.root_samples.iter().map(|s| s.n).sum();
    assert!(fresh >= 200, "{fresh}");
    // Without LCB nothing is kept.
    let mut plain = Search::new(&game, SearchConfig::default().without_noise(), 3);
    plain.run(&RandomEvaluator { seed: 3 }, 100, 4);
    assert!(plain.root_samples.is_empty());
    // One leaf at a time (no virtual loss) counts the same way.
    let mut single = Search::new(&game, config, 5);
    single.run(&RandomEvaluator { seed: 5 }, 300, 1);
    check(&single);
}

/// The textbook two-pass PUCT selection the one-pass `select_edge` must agree with.
fn reference_select(search: &Search, parent: NodeId) -> EdgeId {
    let config = &search.config;
    let p = &search.nodes[parent as usize];
    let n_parent = p.in_tree() as f32;
    let c =
        config.c_init + config.c_factor * ((n_parent + config.c_base + 1.0) / config.c_base).ln();
    let mut c_sqrt_n = c * n_parent.max(1.0).sqrt();
    if config.cpuct_stdev_scale > 0.0 && config.minimax_weight == 0.0 {
        // KataGo's estimate, in f64 from the node's stored mean square.
        let (prior, weight) =
            (f64::from(config.cpuct_stdev_prior), f64::from(config.cpuct_stdev_prior_weight));
        let stdev = if p.visits <= 1 {
            prior
        } else {
            let (n, q) = (f64::from(p.visits), f64::from(p.q()));
            let mean_sq = f64::from(p.value_sq_mean()).max(q * q);
            (((q * q + prior * prior) * weight + mean_sq * n) / (weight + n - 1.0) - q * q)
                .max(0.0)
                .sqrt()
        };
        c_sqrt_n *= (1.0 + f64::from(config.cpuct_stdev_scale) * (stdev / prior - 1.0)) as f32;
    }
    let stats = |i: usize| search.stats(p, i).clone();
    let visited_prior: f32 = search
        .edges
        .iter(p.edges())
        .enumerate()
        .filter(|&(i, _)| stats(i).in_tree() > 0)
        .map(|(_, e)| e.prior)
        .sum();
    let reduction = if parent == 0 { config.fpu_reduction_root } else { config.fpu_reduction };
    let fpu = -p.q() - reduction * visited_prior.sqrt();
    let mut best = p.first_edge;
    let mut best_score = f32::NEG_INFINITY;
    for (i, edge) in search.edges.iter(p.edges()).enumerate() {
        let id = p.first_edge + i as EdgeId;
        let child = stats(i);
        let n = child.in_tree() as f32;
        let score = match child.proven {
            Proven::Win => return id,
            Proven::Loss => -1e6 + child.visits as f32 * 1e-3,
            Proven::Draw => c_sqrt_n * edge.prior / (1.0 + n),
            Proven::Unknown if n == 0.0 => fpu + c_sqrt_n * edge.prior,
            Proven::Unknown => {
                let q = (child.win_loss_sum[0]
                    - child.win_loss_sum[1]
                    - config.virtual_loss * child.in_flight as f32)
                    / n;
                let w = config.minimax_weight;
                let q = if child.visits > 0 { (1.0 - w) * q + w * child.minimax() } else { q };
                q + c_sqrt_n * edge.prior / (1.0 + n)
            }
        };
        if score > best_score {
            best_score = score;
            best = id;
        }
    }
    best
}

#[test]
fn one_pass_selection_agrees_with_the_two_pass_reference() {
    let mut checked = 0;
    let mut raised = 0;
    for seed in 0..8u64 {
        let mut pos = Position::new(Variant::Atomic);
        for k in 0..seed as usize {
            let moves = pos.legal_moves();
            pos.play_unchecked(moves[(k * 7 + 3) % moves.len()]);
        }
        // Seed 5 with exploration scaled by each node's spread of values; other odd seeds
        // below 6 with a steep growth of the exploration constant (`c_factor`, a
        // small `c_base`), so that a selection ignoring it would disagree; seeds 2 and 4 with
        // implicit minimax values in the scores; seeds 6 and 7 with alpha-beta priors (a
        // raised prior reorders the unvisited edges and changes the root's inputs; seed 7
        // with three levels of checks near the root, so priors are raised again later).
        let config = if seed >= 6 {
            SearchConfig {
                ab_prior_nodes: 600,
                ab_prior_visits: 2 + seed as u32,
                ab_prior_levels: 1 + 2 * (seed as u8 - 6),
                ..SearchConfig::default()
            }
        } else if seed == 5 {
            SearchConfig { cpuct_stdev_scale: 0.85, ..SearchConfig::default() }
        } else if seed % 2 == 1 {
            SearchConfig { c_base: 50.0, c_factor: 2.0, ..SearchConfig::default() }
        } else if seed > 0 {
            SearchConfig { minimax_weight: 0.4, ..SearchConfig::default() }
        } else {
            SearchConfig::default()
        };
        let mut search = Search::new(&Game::new(pos), config, seed);
        search.run(&RandomEvaluator { seed }, 300, 4);
        // Leave some leaves in flight so virtual loss takes part.
        search.gather(6);
        checked += check_selection(&search);
        check_counts(&search);
        // Tree reuse with leaves still in flight: their visits are dropped, and the
        // children must still be ordered as the early stop requires.
        let best = search.best_move().unwrap();
        search.advance(best);
        checked += check_selection(&search);
        check_counts(&search);
        search.run(&RandomEvaluator { seed }, 200, 4);
        search.gather(6);
        checked += check_selection(&search);
        check_counts(&search);
        raised += search.ab_prior_stats().raised;
    }
    assert!(checked > 400, "{checked} nodes checked");
    assert!(raised > 0, "no alpha-beta check raised a prior");
}

/// An evaluator of uniform priors and one WDL for every position.
struct ConstantEvaluator([f32; 3]);

impl Evaluator for ConstantEvaluator {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        let mut out = Evaluations::new();
        for r in requests {
            out.push_repeated(1.0 / r.moves.len().max(1) as f32, r.moves.len(), self.0);
        }
        out
    }
}

/// Whether node `id` or a node below it is proven.
fn proof_below(search: &Search, id: usize) -> bool {
    let node = &search.nodes[id];
    node.proven != Proven::Unknown || node.children().any(|c| proof_below(search, c))
}

#[test]
fn each_node_keeps_the_mean_square_of_its_values_for_the_exploration_scaling() {
    // Every leaf is worth ±0.6 to the player who moved into it (+0.6 for the side to move at
    // the leaf, flipped up the path), so every mean square is 0.36 while the means are not.
    let config = SearchConfig { cpuct_stdev_scale: 0.85, ..SearchConfig::default() };
    let mut search = Search::new(&Game::new(Position::new(Variant::Atomic)), config, 1);
    search.run(&ConstantEvaluator([0.8, 0.0, 0.2]), 400, 4);
    let mut checked = 0;
    for id in 0..search.nodes.len() {
        let node = &search.nodes[id];
        if node.visits == 0 || proof_below(&search, id) {
            continue;
        }
        assert!((node.value_sq_mean() - 0.36).abs() < 1e-4, "node {id}: {node:?}");
        // The estimate mixes in the prior 0.4 at the weight of 2 visits.
        let n = node.visits as f32;
        let q = node.q();
        let expected = if node.visits <= 1 {
            0.4
        } else {
            (((q * q + 0.16) * 2.0 + 0.36 * n) / (n + 1.0) - q * q).max(0.0).sqrt()
        };
        assert!((node.value_stdev(0.4, 2.0) - expected).abs() < 1e-3, "node {id}");
        checked += 1;
    }
    assert!(checked > 100, "{checked}");
    // Tree reuse keeps them (a child whose line found a repetition, a draw worth 0, has a
    // lower mean square).
    let before: Vec<f32> = search.root_edges().map(|(_, c)| c.value_sq_mean()).collect();
    let best = search.best_move().unwrap();
    let k = search.root_edges().position(|(e, _)| e.mv == best).unwrap();
    search.advance(best);
    let root = search.nodes[0].clone();
    assert!(root.visits > 10, "{root:?}");
    assert_eq!(root.value_sq_mean(), before[k]);
    // Without the scaling the bits stay unused (they hold the implicit minimax value when
    // that is on).
    let mut plain =
        Search::new(&Game::new(Position::new(Variant::Atomic)), SearchConfig::default(), 1);
    plain.run(&ConstantEvaluator([0.8, 0.0, 0.2]), 100, 4);
    assert!(plain.nodes.iter().all(|n| n.plies == 0));
}

#[test]
fn the_exploration_scaling_follows_the_spread_of_a_nodes_values() {
    let search = |scale: f32| {
        let config = SearchConfig { cpuct_stdev_scale: scale, ..SearchConfig::default() };
        let mut s = Search::new(&Game::new(Position::new(Variant::Atomic)), config, 1);
        s.run(&ConstantEvaluator([0.8, 0.0, 0.2]), 200, 1);
        s
    };
    let (plain, scaled) = (search(0.0), search(0.85));
    let root = scaled.nodes[0].clone();
    // All values ±0.6, the sign by the leaf's depth: at the root they average near 0 and
    // spread by about 0.6, above the prior 0.4, so the root explores more than plain PUCT.
    let stdev = root.value_stdev(0.4, 2.0);
    assert!(stdev > 0.55, "{stdev}");
    let expected = plain.exploration(&root) * (1.0 + 0.85 * (stdev / 0.4 - 1.0));
    assert!((scaled.exploration(&root) - expected).abs() < 1e-4 * expected);
    assert!(scaled.exploration(&root) > 1.2 * plain.exploration(&root));
    // Exploring more, the scaled search gives its favourite move fewer of its visits.
    let top = |s: &Search| s.root_edges().map(|(_, c)| c.visits).max().unwrap();
    assert!(top(&scaled) < top(&plain), "{} vs {}", top(&scaled), top(&plain));
}

/// Checks that every unproven node with a valued child (a completed visit or a proof) holds
/// the negated best of its children's values as its implicit minimax value; returns how many
/// nodes it checked.
fn check_minimax(search: &Search) -> usize {
    let mut checked = 0;
    let mut stack = vec![0 as NodeId];
    while let Some(id) = stack.pop() {
        let node = &search.nodes[id as usize];
        let children = &search.nodes[node.children()];
        stack.extend(node.children().map(|c| c as NodeId));
        let best = children
            .iter()
            .filter_map(|c| match c.proven {
                Proven::Unknown if c.visits > 0 => Some(c.minimax()),
                Proven::Unknown => None,
                Proven::Win => Some(1.0),
                Proven::Draw => Some(0.0),
                Proven::Loss => Some(-1.0),
            })
            .fold(f32::NEG_INFINITY, f32::max);
        if id != 0 && node.proven == Proven::Unknown && best > f32::NEG_INFINITY {
            let error = (node.minimax() + best).abs();
            assert!(error <= 1.0 / 32767.0, "node {id}: {} vs -{best}", node.minimax());
            checked += 1;
        }
    }
    checked
}

#[test]
fn implicit_minimax_values_are_the_minimax_of_the_evaluations_below() {
    for (seed, pos) in [(1u64, Position::new(Variant::Atomic)), (2, mate_threat_position())] {
        let config = SearchConfig {
            minimax_weight: 0.3,
            instant_wins: true,
            ..SearchConfig::default().without_noise()
        };
        let mut search = Search::new(&Game::new(pos), config, seed);
        search.run(&RandomEvaluator { seed }, 1500, 4);
        let checked = check_minimax(&search);
        assert!(checked > 100, "{checked} nodes checked");
        // A leaf's value is its evaluation until a child of it is visited: some leaves of
        // a random evaluator's tree must hold values other than 0.
        assert!(search.nodes.iter().any(|n| n.proven == Proven::Unknown && n.minimax() != 0.0));
        // After tree reuse and more search (leaves in flight dropped), still consistent.
        let best = search.best_move().unwrap();
        search.gather(6);
        search.advance(best);
        search.run(&RandomEvaluator { seed }, search.root_visits() + 500, 4);
        assert!(check_minimax(&search) > 50);
        // Without the weight nothing is written: the bits are the proofs' plies only.
        let plain = SearchConfig { minimax_weight: 0.0, ..config };
        let mut search = Search::new(&Game::new(pos), plain, seed);
        search.run(&RandomEvaluator { seed }, 500, 4);
        assert!(search.nodes.iter().all(|n| n.proven != Proven::Unknown || n.plies == 0));
    }
}

/// A position eight plies into a game, a queen next to the enemy king's pawns: explosions a
/// few plies away, where the search meets proofs as well as estimates.
fn mate_threat_position() -> Position {
    let mut pos = Position::new(Variant::Atomic);
    for uci in ["e2e3", "f7f6", "g1h3", "e7e6", "h3g5", "f6g5", "d1h5", "g7g6"] {
        let mv = pos.parse_uci(uci).unwrap();
        pos.play_unchecked(mv);
    }
    pos
}

#[test]
fn exploration_table_gives_the_computed_bits() {
    for c_base in [19652.0f32, 500.0] {
        for n in [0u32, 1, 2, 3, 799, 4095, 4096, 100_000] {
            let log = ((n as f32 + c_base + 1.0) / c_base).ln();
            let sqrt = (n as f32).max(1.0).sqrt();
            let (table_log, table_sqrt) = exploration_terms(c_base, n);
            assert_eq!(table_log.to_bits(), log.to_bits(), "{c_base} {n}");
            assert_eq!(table_sqrt.to_bits(), sqrt.to_bits(), "{c_base} {n}");
        }
    }
}

#[test]
fn tree_reuse_keeps_visited_children_first_when_it_drops_in_flight_visits() {
    let game = Game::new(Position::new(Variant::Atomic));
    let mut search = Search::new(&game, SearchConfig::default(), 3);
    search.run(&RandomEvaluator { seed: 3 }, 2000, 1);
    let best = search.best_move().unwrap();
    // A node's edges, each with its child (NO_NODE if none).
    let edges_of = |search: &Search, node: NodeId| -> Vec<(Move, NodeId)> {
        let node = &search.nodes[node as usize];
        let edges = search.edges.iter(node.edges());
        edges.enumerate().map(|(i, e)| (e.mv, node.child(i))).collect()
    };
    let child_by = |search: &Search, node: NodeId, mv: Move| {
        edges_of(search, node).iter().find(|e| e.0 == mv).unwrap().1
    };
    let b = child_by(&search, 0, best);
    // A child of the new root whose first two children were visited: make the first one
    // a leaf still waiting for its evaluation (in flight, no completed visit).
    let c_edge = edges_of(&search, b)
        .into_iter()
        .find(|e| {
            let kids = if e.1 == NO_NODE { Vec::new() } else { edges_of(&search, e.1) };
            kids.len() >= 2 && kids[..2].iter().all(|k| k.1 != NO_NODE)
        })
        .expect("a node with two visited children");
    let kids = edges_of(&search, c_edge.1);
    let (d0_move, d1_move) = (kids[0].0, kids[1].0);
    search.nodes[kids[0].1 as usize] =
        Node { in_flight: 1, expansion: Expansion::Pending, ..Node::new() };
    search.advance(best);
    // The dropped leaf is unvisited again (no node) and must now come after its visited
    // siblings.
    let c = child_by(&search, 0, c_edge.0);
    let kids = edges_of(&search, c);
    assert_eq!(kids[0].0, d1_move);
    let d0 = kids.iter().position(|k| k.0 == d0_move).unwrap();
    assert!(d0 > 0);
    assert_eq!(kids[d0].1, NO_NODE);
    check_selection(&search);
}

/// The moves along a gathered leaf's path, from the root.
fn path_moves(search: &Search, leaf: &Leaf) -> Vec<Move> {
    leaf.path
        .windows(2)
        .map(|pair| {
            let parent = &search.nodes[pair[0] as usize];
            let i = (pair[1] - parent.first_child) as usize;
            assert!(i < parent.n_children as usize);
            search.edges.mv(parent.first_edge as usize + i)
        })
        .collect()
}

#[test]
fn leaves_hold_the_positions_their_paths_lead_to_across_tree_reuse() {
    // Walks copy the position after a root move instead of playing it: the copies must
    // follow the root's expansion and every `advance`.
    let game = Game::new(Position::new(Variant::Atomic));
    let mut search = Search::new(&game, SearchConfig::default(), 11);
    let evaluator = RandomEvaluator { seed: 11 };
    let mut checked = 0;
    for _ in 0..6 {
        for _ in 0..40 {
            let leaves = search.gather(8).len();
            for leaf in search.pending() {
                let mut pos = search.root_position;
                for mv in path_moves(&search, leaf) {
                    pos.play_unchecked(mv);
                }
                assert_eq!(leaf.position, pos);
                assert_eq!(leaf.position.hash(), pos.compute_hash());
                checked += 1;
            }
            let requests: Vec<EvalRequest<'_>> =
                search.pending().iter().map(Leaf::request).collect();
            let evals = evaluator.evaluate(&requests);
            search.apply(&evals);
            if leaves == 0 {
                break;
            }
        }
        let Some(best) = search.best_move() else { break };
        search.advance(best);
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn leaves_count_the_repetitions_of_the_game_and_their_path() {
    // Few moves (kings, cornered knights, blocked pawns) shuffled out and back: the tree
    // below holds many repeated positions, and the half-move clock reaches into the game.
    let start = "n3k3/4p3/4P3/8/8/8/8/N3K3 w - - 10 30";
    let mut game = Game::new(Position::from_fen(start, Variant::Atomic).unwrap());
    for uci in ["e1d1", "e8d8", "d1e1", "d8e8", "a1b3"] {
        let m = game.position().parse_uci(uci).unwrap();
        game.play(m).unwrap();
    }
    // Two-fold repetitions stay leaves (with the default they end the walk as draws).
    let config = SearchConfig { twofold_draw: false, ..SearchConfig::default() };
    let mut search = Search::new(&game, config, 5);
    let evaluator = RandomEvaluator { seed: 5 };
    let (mut checked, mut repeated) = (0, 0);
    for _ in 0..1000 {
        search.gather(4);
        for leaf in search.pending() {
            // Every earlier position, both sides to move, within the half-move clock.
            let mut hashes = search.game_hashes.clone();
            let mut pos = search.root_position;
            for mv in path_moves(&search, leaf) {
                hashes.push(pos.hash());
                pos.play_unchecked(mv);
            }
            let window = pos.halfmoves() as usize;
            let expected = hashes.iter().rev().take(window).filter(|&&h| h == pos.hash()).count();
            assert_eq!(leaf.repetitions, expected);
            checked += 1;
            repeated += usize::from(expected > 0);
        }
        let requests: Vec<EvalRequest<'_>> = search.pending().iter().map(Leaf::request).collect();
        let evals = evaluator.evaluate(&requests);
        search.apply(&evals);
    }
    assert!(checked > 2000 && repeated > 40, "{checked} leaves, {repeated} repeated");
}

/// The visits of every node of the tree add up: an expanded node's own evaluation and its
/// children's visits (a proven node also counts the walks that stopped at it); and each
/// leaf waiting for its evaluation holds one visit in flight on every node of its path,
/// and its node (only its) is pending.
fn check_counts(search: &Search) {
    let mut stack = vec![0 as NodeId];
    while let Some(id) = stack.pop() {
        let node = &search.nodes[id as usize];
        stack.extend(node.children().map(|c| c as NodeId));
        let below: u32 = search.nodes[node.children()].iter().map(|c| c.visits).sum();
        if node.expansion == Expansion::Expanded && node.proven == Proven::Unknown {
            assert_eq!(node.visits, 1 + below, "node {id}");
        } else if node.expansion == Expansion::Expanded {
            assert!(node.visits > below, "node {id}");
        }
        let paths = search.pending().iter().flat_map(|l| &l.path);
        let waiting = paths.filter(|&&p| p == id).count();
        assert_eq!(node.in_flight as usize, waiting, "node {id}");
        let is_leaf = search.pending().iter().any(|l| l.node == id);
        assert_eq!(node.expansion == Expansion::Pending, is_leaf, "node {id}");
    }
}

/// Every expanded node selects what the reference selects; below the root, the visited
/// edges form a prefix (and only they have nodes) and the unvisited ones follow in
/// descending order of prior. Returns the number of nodes checked.
fn check_selection(search: &Search) -> usize {
    let mut checked = 0;
    // The nodes reachable from the root (the arena also holds blocks children moved out
    // of), each reached once: no two nodes share a child.
    let mut reached = vec![false; search.nodes.len()];
    let mut stack = vec![0 as NodeId];
    while let Some(id) = stack.pop() {
        assert!(!std::mem::replace(&mut reached[id as usize], true), "node {id} twice");
        let node = &search.nodes[id as usize];
        stack.extend(node.children().map(|c| c as NodeId));
        if node.n_edges == 0 {
            continue;
        }
        assert_eq!(search.select_edge(id), reference_select(search, id), "node {id}");
        if id == 0 {
            // The stored selection inputs of the root's children are up to date.
            let fresh = RootInputs::from_children(search.root_edges().map(|(e, c)| {
                RootChild::new(e.prior, c, search.config.virtual_loss, search.config.minimax_weight)
            }));
            assert_eq!(search.root_children, fresh);
            // Every walk scans the root's children: they all have nodes.
            assert_eq!(node.n_children, node.n_edges);
        } else {
            // The children are the visited edges' (a prefix) and the unvisited edges
            // follow in descending order of prior.
            let children = &search.nodes[node.children()];
            assert!(children.iter().all(Node::is_visited), "node {id}");
            let rest = &search.edges.packed(node.edges())[children.len()..];
            assert!(rest.windows(2).all(|w| w[0].prior >= w[1].prior), "node {id}");
        }
        assert!(node.n_children <= node.child_capacity, "node {id}");
        assert!(node.child_capacity <= node.n_edges, "node {id}");
        let block = node.first_child as usize + node.child_capacity as usize;
        assert!(block <= search.nodes.len(), "node {id}");
        checked += 1;
    }
    checked
}

/// The prior of the root move written `uci`.
fn root_prior(search: &Search, uci: &str) -> f32 {
    let (edge, _) =
        search.root_edges().find(|(e, _)| search.root_position.uci(e.mv) == uci).unwrap();
    edge.prior
}

/// A search of `pos` with uniform priors and alpha-beta priors at one visit (4,000 nodes, the
/// default weight 0.5), run for two visits: the root's first walk expands it, the second finds
/// it at one visit and checks it. Also returns the settings.
fn root_checked_once(pos: Position) -> (Search, SearchConfig) {
    let config = SearchConfig {
        ab_prior_nodes: 4000,
        ab_prior_visits: 1,
        ab_prior_weight: 0.5,
        ..SearchConfig::default().without_noise()
    };
    let mut search = Search::new(&Game::new(pos), config, 1);
    search.run(&UniformEvaluator, 2, 1);
    (search, config)
}

#[test]
fn an_alpha_beta_check_raises_the_only_move_that_keeps_the_material() {
    // Nxd5 takes the queen (both explode: K v K, a draw); every other move leaves White a
    // knight against a queen, 6 pawns down. Uniform priors give Nxd5 1/n.
    let pos = Position::from_fen("4k3/8/8/3q4/8/4N3/8/4K3 w - - 0 1", Variant::Atomic).unwrap();
    let n = pos.legal_moves().len() as f32;
    let (mut search, config) = root_checked_once(pos);
    let stats = search.ab_prior_stats();
    assert_eq!((stats.checks, stats.raised), (1, 1), "{stats:?}");
    assert!(stats.nodes > 0);
    assert!((root_prior(&search, "e3d5") - 0.5).abs() < 1e-3, "{}", root_prior(&search, "e3d5"));
    // The others make room, evenly (they were equal): the sum stays 1.
    let other = root_prior(&search, "e1e2");
    assert!((other - 0.5 / (n - 1.0)).abs() < 1e-3, "{other}");
    let total: f32 = search.root_edges().map(|(e, _)| e.prior).sum();
    assert!((total - 1.0).abs() < 1e-3, "{total}");
    // Checking again changes nothing (a floor, not a boost).
    let before: Vec<f32> = search.root_edges().map(|(e, _)| e.prior).collect();
    search.ab_check(0, &pos, &[], 4000);
    let after: Vec<f32> = search.root_edges().map(|(e, _)| e.prior).collect();
    for (a, b) in before.iter().zip(&after) {
        assert!((a - b).abs() < 1e-3, "{before:?} -> {after:?}");
    }
    // The root's selection inputs follow, and the search goes on: Nxd5 is searched most.
    check_selection(&search);
    search.run(&UniformEvaluator, 200, 4);
    assert_eq!(search.root_position.uci(search.best_move().unwrap()), "e3d5");
    // Off, the prior stays the network's.
    let mut plain = Search::new(&Game::new(pos), SearchConfig { ab_prior_nodes: 0, ..config }, 1);
    plain.run(&UniformEvaluator, 200, 4);
    assert!((root_prior(&plain, "e3d5") - 1.0 / n).abs() < 1e-3);
    assert_eq!(plain.ab_prior_stats(), AbPriorStats::default());
}

#[test]
fn raising_the_root_priors_waits_for_the_expansion_and_leaves_them_a_distribution() {
    // The same position as above, the refuted moves given from outside (the engine's deeper
    // check before its search): every move but Nxd5.
    let pos = Position::from_fen("4k3/8/8/3q4/8/4N3/8/4K3 w - - 0 1", Variant::Atomic).unwrap();
    let legal = pos.legal_moves();
    let n = legal.len() as f32;
    let refuted: Vec<_> = legal.iter().copied().filter(|&m| pos.uci(m) != "e3d5").collect();
    let config = SearchConfig { ab_prior_weight: 0.5, ..SearchConfig::default().without_noise() };
    let mut search = Search::new(&Game::new(pos), config, 1);
    // Not expanded yet: nothing to raise.
    assert!(!search.raise_root_priors(&refuted));
    search.run(&UniformEvaluator, 1, 1);
    assert!(search.raise_root_priors(&refuted));
    assert!((root_prior(&search, "e3d5") - 0.5).abs() < 1e-3, "{}", root_prior(&search, "e3d5"));
    let other = root_prior(&search, "e1e2");
    assert!((other - 0.5 / (n - 1.0)).abs() < 1e-3, "{other}");
    let total: f32 = search.root_edges().map(|(e, _)| e.prior).sum();
    assert!((total - 1.0).abs() < 1e-3, "{total}");
    assert_eq!(search.ab_prior_stats().raised, 1);
    check_selection(&search);
    // Four or more moves left unrefuted is a quiet position: nothing changes.
    let mut quiet = Search::new(&Game::new(pos), config, 1);
    quiet.run(&UniformEvaluator, 1, 1);
    assert!(quiet.raise_root_priors(&refuted[..refuted.len() - 3]));
    assert!(quiet.root_edges().all(|(e, _)| (e.prior - 1.0 / n).abs() < 1e-3));
    // A Gumbel search's root is chosen by its own rule.
    let gumbel = SearchConfig { gumbel: Some(Default::default()), ..config };
    let mut g = Search::new(&Game::new(pos), gumbel, 1);
    g.run(&UniformEvaluator, 1, 1);
    assert!(!g.raise_root_priors(&refuted));
}

#[test]
fn deeper_alpha_beta_checks_come_at_eight_times_the_visits_with_eight_times_the_nodes() {
    let pos = Position::new(Variant::Atomic);
    let config = SearchConfig {
        ab_prior_nodes: 100,
        ab_prior_visits: 2,
        ab_prior_levels: 3,
        ..SearchConfig::default().without_noise()
    };
    let mut search = Search::new(&Game::new(pos), config, 1);
    let mut one_level =
        Search::new(&Game::new(pos), SearchConfig { ab_prior_levels: 1, ..config }, 1);
    // The root's budget at each count of visits (`run` goes on to a total).
    let mut budgets = Vec::new();
    let mut single = Vec::new();
    // The same counts two plies down: one level only.
    let mut below = Vec::new();
    for visits in [1, 2, 3, 15, 16, 17, 127, 128, 129, 1024] {
        search.run(&UniformEvaluator, visits, 1);
        one_level.run(&UniformEvaluator, visits, 1);
        assert_eq!(search.root_visits(), visits);
        budgets.push(search.ab_check_budget(0, 0));
        single.push(one_level.ab_check_budget(0, 0));
        below.push(search.ab_check_budget(0, 2));
    }
    let s = Some;
    assert_eq!(
        budgets,
        [None, s(100), None, None, s(800), None, None, s(6400), None, None],
        "levels 2 and 8 visits, 2 * 8^2 and 8^3 visits"
    );
    assert_eq!(single, [None, s(100), None, None, None, None, None, None, None, None]);
    assert_eq!(below, single);
    // Each level checked once as the root passed it (the checks below the root come on top).
    assert!(search.ab_prior_stats().checks > one_level.ab_prior_stats().checks);
    // A kept subtree: the new root, past the second level's visits, gets its deepest check
    // due at once, and only once.
    let m = search.best_move().unwrap();
    search.advance(m);
    let visits = search.root_visits();
    assert!(visits >= 16, "{visits}");
    let due = if visits >= 128 { 6400 } else { 800 };
    assert_eq!(search.ab_check_budget(0, 0), Some(due), "{visits} visits");
    assert_eq!(search.ab_check_budget(0, 0), None);
    let off = SearchConfig { ab_prior_nodes: 0, ..config };
    let mut none = Search::new(&Game::new(pos), off, 1);
    none.run(&UniformEvaluator, 2, 1);
    assert_eq!(none.ab_check_budget(0, 0), None);
}

#[test]
fn alpha_beta_checks_stop_after_a_searchs_playouts_and_start_again_after_advance() {
    let pos = Position::new(Variant::Atomic);
    let capped = SearchConfig {
        ab_prior_nodes: 100,
        ab_prior_visits: 1,
        ab_prior_playouts: 256,
        ..SearchConfig::default().without_noise()
    };
    let mut search = Search::new(&Game::new(pos), capped, 1);
    let mut free = Search::new(&Game::new(pos), SearchConfig { ab_prior_playouts: 0, ..capped }, 1);
    search.run(&UniformEvaluator, 256, 1);
    free.run(&UniformEvaluator, 256, 1);
    let at_cap = search.ab_prior_stats().checks;
    assert!(at_cap > 0 && at_cap <= free.ab_prior_stats().checks, "{at_cap}");
    search.run(&UniformEvaluator, 8192, 1);
    free.run(&UniformEvaluator, 8192, 1);
    assert_eq!(search.ab_prior_stats().checks, at_cap, "no check after 256 playouts");
    assert!(free.ab_prior_stats().checks > at_cap, "without the cap the checks go on");
    // The next search (a kept subtree of more than 256 visits, so a count from zero would
    // allow none) gets its own 256 playouts of checks, then none.
    let m = search.best_move().unwrap();
    search.advance(m);
    let kept = search.root_visits();
    assert!(kept > 256, "{kept}");
    search.run(&UniformEvaluator, kept + 256, 1);
    let again = search.ab_prior_stats().checks;
    assert!(again > at_cap, "checks again after advance");
    search.run(&UniformEvaluator, kept + 2048, 1);
    assert_eq!(search.ab_prior_stats().checks, again);
}

#[test]
fn alpha_beta_checks_turned_off_start_none_and_turned_on_start_again() {
    let pos = Position::new(Variant::Atomic);
    let config = SearchConfig {
        ab_prior_nodes: 100,
        ab_prior_visits: 1,
        ..SearchConfig::default().without_noise()
    };
    let mut search = Search::new(&Game::new(pos), config, 1);
    assert!(search.alpha_beta_priors_enabled(), "on by default");
    search.set_alpha_beta_priors(false);
    search.run(&UniformEvaluator, 512, 1);
    assert_eq!(search.ab_prior_stats().checks, 0, "no check while off");
    // The switch survives `advance` (the caller decides each search) and leaves the
    // settings, which gate the tree's reuse, alone.
    let m = search.best_move().unwrap();
    search.advance(m);
    assert!(!search.alpha_beta_priors_enabled());
    assert_eq!(*search.config(), config);
    let kept = search.root_visits();
    search.run(&UniformEvaluator, kept + 512, 1);
    assert_eq!(search.ab_prior_stats().checks, 0, "still none after advance");
    search.set_alpha_beta_priors(true);
    search.run(&UniformEvaluator, kept + 1024, 1);
    assert!(search.ab_prior_stats().checks > 0, "checks again once on");
}

#[test]
fn an_alpha_beta_check_of_a_quiet_position_changes_nothing() {
    let pos = Position::new(Variant::Atomic);
    let (search, _) = root_checked_once(pos);
    let stats = search.ab_prior_stats();
    assert_eq!((stats.checks, stats.raised), (1, 0), "{stats:?}");
    let n = pos.legal_moves().len() as f32;
    assert!(search.root_edges().all(|(e, _)| (e.prior - 1.0 / n).abs() < 1e-3));
}

/// A search of a position where Black mates in two (`tests/data/fsf-mates.txt`: every White
/// reply to the mating move lets Black explode the king), uniform priors, checks at one visit,
/// alpha-beta proofs on or off, run for `visits`.
fn mate_in_two_searched(proofs: bool, visits: u32) -> Search {
    let fen = "rnbqkbr1/p1pp2p1/4pn2/7p/2P2pPP/PP5R/3PPP2/1RBQKBN1 b q - 1 10";
    let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
    let config = SearchConfig {
        ab_prior_nodes: 2000,
        ab_prior_visits: 1,
        ab_prior_proofs: proofs,
        ..SearchConfig::default().without_noise()
    };
    let mut search = Search::new(&Game::new(pos), config, 1);
    search.run(&UniformEvaluator, visits, 1);
    search
}

#[test]
fn alpha_beta_proofs_prove_a_mate_in_two_the_tree_has_not_searched_out() {
    // 20 walks: the root's check raises the mating move's prior, the child's check (one
    // visit) proves it. The tree alone proves it by 60 walks.
    let search = mate_in_two_searched(true, 20);
    let stats = search.ab_prior_stats();
    assert_eq!(stats.proofs, 1, "{stats:?}");
    // The root is proven through its child, with the exact distance: Black's move, any White
    // reply, Black's explosion.
    assert_eq!(search.root_proof(), Some((Proven::Win, 3)));
    let best = search.best_move().unwrap();
    let after = search.root_position.play(best).unwrap();
    for reply in after.legal_moves().iter().copied() {
        let next = after.play(reply).unwrap();
        let won =
            next.variant_outcome().is_some() || next.winning_move(&next.legal_moves()).is_some();
        assert!(won, "{} then {} escapes", search.root_position.uci(best), after.uci(reply));
    }
    // Without proofs the same search has proven nothing, and no check claimed a proof.
    let plain = mate_in_two_searched(false, 20);
    assert_eq!(plain.ab_prior_stats().proofs, 0);
    assert_eq!(plain.root_proof(), None);
}

#[test]
fn a_root_proven_only_by_its_alpha_beta_check_is_searched_again_after_advance() {
    let mut search = mate_in_two_searched(true, 20);
    let best = search.best_move().unwrap();
    search.advance(best);
    // White to move, lost, but proven only by the check (no child proven): searched again.
    assert_eq!(search.root_proven(), Proven::Unknown);
    let before = search.root_visits();
    search.run(&UniformEvaluator, before + 100, 1);
    assert!(search.root_visits() > before);
    // The tree's own proof follows from the children: every reply loses at once.
    assert_eq!(search.root_proof().map(|(p, _)| p), Some(Proven::Loss));
    assert!(search.proof_rests_on_children(0));
}

/// The root's value after one visit of `pos` with uniform priors and an even value, with the
/// quiescence correction at `weight` (scale 400).
fn root_value_with_quiescence(pos: Position, weight: f32) -> f32 {
    let config = SearchConfig {
        quiescence_weight: weight,
        quiescence_scale: 400.0,
        ..SearchConfig::default().without_noise()
    };
    let mut search = Search::new(&Game::new(pos), config, 1);
    search.run(&UniformEvaluator, 1, 1);
    let [w, d, l] = search.root_wdl();
    assert!((w + d + l - 1.0).abs() < 1e-5 && w >= 0.0 && l >= 0.0, "{w} {d} {l}");
    w - l
}

#[test]
fn the_quiescence_correction_adds_what_the_captures_win() {
    // White is a queen down for a pawn (-800) but exd5 blows the queen up with the pawn: the
    // capture search keeps 0, so the value gains 0.5 · (tanh(0) − tanh(−2)) = 0.482.
    let pos = Position::from_fen("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1", Variant::Atomic).unwrap();
    let v = root_value_with_quiescence(pos, 0.5);
    let expected = 0.5 * (0.0f32.tanh() - (-2.0f32).tanh());
    assert!((v - expected).abs() < 1e-3, "{v} vs {expected}");
    assert_eq!(root_value_with_quiescence(pos, 0.0), 0.0);
    // Black to move in the same position keeps the queen: no capture pays, no correction.
    let quiet = Position::from_fen("4k3/8/8/3q4/4P3/8/8/4K3 b - - 0 1", Variant::Atomic).unwrap();
    assert_eq!(root_value_with_quiescence(quiet, 0.5), 0.0);
    assert_eq!(root_value_with_quiescence(Position::new(Variant::Atomic), 0.5), 0.0);
}

#[test]
fn a_corrected_evaluation_stays_a_distribution() {
    assert_eq!(super::corrected([0.2, 0.5, 0.3], 0.0), [0.2, 0.5, 0.3]);
    let [w, d, l] = super::corrected([0.2, 0.5, 0.3], 0.3);
    assert!((w - l - 0.2).abs() < 1e-6 && (d - 0.5).abs() < 1e-6, "{w} {d} {l}");
    // Past what the draw leaves room for: the draw shrinks; past 1: clamped.
    let [w, d, l] = super::corrected([0.2, 0.5, 0.3], 0.9);
    assert!((w - l - 0.8).abs() < 1e-6 && (d - 0.2).abs() < 1e-6 && l >= 0.0, "{w} {d} {l}");
    assert_eq!(super::corrected([0.6, 0.4, 0.0], 1.0), [1.0, 0.0, 0.0]);
}
