//! What the engine reports while searching: `info` lines with scores derived from the
//! search's WDL.
//!
//! **Centipawns** from the expected score `q = W − L ∈ [−1, 1]` of the side to move, with lc0's
//! mapping `cp = 111.714640912 · tan(1.5620688421 · q)` (q = 0.5 is about +111 cp, q = 0.9 about
//! +671 cp), clamped to ±[`MAX_CP`].
//!
//! **Mate**: when the MCTS-solver has proven the root a win or a loss, the exact distance comes
//! from [`atomzero_mcts::mate_distance`] (the shortest forced win, or the longest defence, as
//! Stockfish and Fairy-Stockfish report it: `mate N` in moves of the side to move, negative when
//! it is mated), found once per position and kept in a [`MateCache`]. If that search gives up
//! (a mate beyond its node budget), the root's score is the distance the solver's proof found
//! ([`Search::root_proof`]: the length of that proof, counting the plies of the short forced
//! lines `Tactics` proves at leaves; not necessarily the shortest), `mate ±⌈plies / 2⌉`; a root
//! move's, the principal variation replayed: if it ends in a finished game won by the
//! expected side, or one move before it (an instant win the solver proved without playing it),
//! the length of that line. Otherwise a proven result is ±[`PROVEN_CP`]. A proven draw
//! is `cp 0`. Root moves of `MultiPV` lines get the same treatment.
//!
//! **WDL** in permille (`wdl W D L`, summing to 1000), for the side to move; printed only with
//! the `UCI_ShowWDL` option (as Stockfish and lc0 do).
//!
//! **depth** is the length of the principal variation, **seldepth** the deepest ply the search
//! reached, **nodes** the playouts of this search (visits reused from an earlier search not
//! counted), **hashfull** the share of the tree's memory bound in use (permille).

use atomzero_mcts::{ChildStats, Mate, MateLimits, Proven, Search, mate_distance};
use atomzero_rules::{Move, Position};
use std::fmt::Write as _;
use std::time::Duration;

/// The largest centipawn score an unproven position gets.
pub const MAX_CP: i32 = 10_000;
/// The centipawn score of a proven result whose mate distance is unknown.
pub const PROVEN_CP: i32 = 20_000;
/// The longest principal variation printed.
pub const MAX_PV_PLIES: usize = 64;

/// A UCI score.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Score {
    /// `cp <n>`.
    Cp(i32),
    /// `mate <n>`: positive when the side to move mates in n moves, negative when it is mated.
    Mate(i32),
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Mate(n) => write!(f, "mate {n}"),
        }
    }
}

/// Centipawns of an expected score `q = W − L` (lc0's mapping; see the module documentation).
pub fn q_to_cp(q: f32) -> i32 {
    if !q.is_finite() {
        return 0;
    }
    let q = f64::from(q.clamp(-1.0, 1.0));
    let cp = 111.714_640_912 * (1.562_068_842_1 * q).tan();
    cp.round().clamp(-f64::from(MAX_CP), f64::from(MAX_CP)) as i32
}

/// WDL probabilities in permille, summing to exactly 1000 (largest-remainder rounding).
pub fn wdl_permille(wdl: [f32; 3]) -> [u32; 3] {
    let clean = wdl.map(|p| if p.is_finite() && p > 0.0 { f64::from(p) } else { 0.0 });
    let sum: f64 = clean.iter().sum();
    if sum <= 0.0 {
        return [0, 1000, 0];
    }
    let exact = clean.map(|p| p / sum * 1000.0);
    let mut out = exact.map(|p| p.floor() as u32);
    let mut missing = 1000 - out.iter().sum::<u32>();
    let mut order = [0usize, 1, 2];
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().cycle() {
        if missing == 0 {
            break;
        }
        out[i] += 1;
        missing -= 1;
    }
    out
}

/// Mate distances found for the positions of one search: the exact search
/// ([`mate_distance`]) costs up to tens of milliseconds, so each position is searched once
/// and `info` lines printed every half second reuse the answer.
#[derive(Clone, Debug, Default)]
pub struct MateCache {
    limits: MateLimits,
    /// (position hash, asked for the winner, answer).
    entries: Vec<(u64, bool, Option<Mate>)>,
}

impl MateCache {
    /// A cache whose searches stop at `limits`.
    pub fn new(limits: MateLimits) -> MateCache {
        MateCache { limits, entries: Vec::new() }
    }

    /// The distance of the result of `pos`, for its side to move: how fast it wins
    /// (`winning`) or how long it holds out.
    pub fn distance(&mut self, pos: &Position, winning: bool) -> Option<Mate> {
        let key = pos.hash();
        if let Some(&(_, _, found)) =
            self.entries.iter().find(|&&(h, w, _)| h == key && w == winning)
        {
            return found;
        }
        let found = mate_distance(pos, winning, self.limits);
        self.entries.push((key, winning, found));
        found
    }
}

/// The score of a root move or root from its WDL and proof, without a mate distance.
fn score_of(wdl: [f32; 3], proven: Proven) -> Score {
    match proven {
        Proven::Win => Score::Cp(PROVEN_CP),
        Proven::Loss => Score::Cp(-PROVEN_CP),
        Proven::Draw => Score::Cp(0),
        Proven::Unknown => Score::Cp(q_to_cp(wdl[0] - wdl[2])),
    }
}

/// The mate score of a line `pv` from `root` proven `proven` for `root`'s side to move, if the
/// line ends in that result, or one move before it with an instant win for the winner.
fn pv_mate(root: &Position, proven: Proven, pv: &[Move]) -> Option<Score> {
    if !matches!(proven, Proven::Win | Proven::Loss) || pv.is_empty() {
        return None;
    }
    let expected = if proven == Proven::Win { root.turn() } else { !root.turn() };
    let mut pos = *root;
    for &m in pv {
        pos.play_unchecked(m);
    }
    let plies = match pos.outcome() {
        Some(o) if o.winner == Some(expected) => pv.len(),
        Some(_) => return None,
        // The solver proves a position whose side to move can blow up the enemy king at once
        // without playing the move: the line stops one ply short of the end.
        None if pos.turn() == expected && pos.winning_move(&pos.legal_moves()).is_some() => {
            pv.len() + 1
        }
        None => return None,
    };
    let moves = i32::try_from(plies.div_ceil(2)).unwrap_or(i32::MAX);
    Some(Score::Mate(if proven == Proven::Win { moves } else { -moves }))
}

/// The score of `pos` for its side to move, proven `proven` there (`pv`: a line from it).
fn proven_score(
    pos: &Position,
    proven: Proven,
    wdl: [f32; 3],
    pv: &[Move],
    mates: &mut MateCache,
) -> Score {
    if matches!(proven, Proven::Win | Proven::Loss)
        && let Some(mate) = mates.distance(pos, proven == Proven::Win)
    {
        return Score::Mate(mate.uci_moves());
    }
    pv_mate(pos, proven, pv).unwrap_or_else(|| score_of(wdl, proven))
}

/// The score of the root: a mate score when the root is proven (see the module
/// documentation), else centipawns from its WDL. `pv` is the principal variation.
pub fn root_score(search: &Search, pv: &[Move], mates: &mut MateCache) -> Score {
    let (pos, proven) = (search.root_position(), search.root_proven());
    if matches!(proven, Proven::Win | Proven::Loss)
        && mates.distance(pos, proven == Proven::Win).is_none()
    {
        // Beyond the exact search: the distance of the solver's own proof.
        match search.root_proof() {
            Some((Proven::Win, plies)) => return Score::Mate(i32::from(plies.div_ceil(2).max(1))),
            Some((Proven::Loss, plies)) => return Score::Mate(-i32::from(plies / 2)),
            _ => {}
        }
    }
    proven_score(pos, proven, search.root_wdl(), pv, mates)
}

/// The score of root move `child` for the root's side to move.
fn child_score(root: &Position, child: &ChildStats, mates: &mut MateCache) -> Score {
    let wdl = child.proven.wdl().unwrap_or(child.wdl);
    if matches!(child.proven, Proven::Win | Proven::Loss) {
        let mut after = *root;
        after.play_unchecked(child.mv);
        // The position after the move is decided the other way for its side to move.
        let mate = match after.outcome() {
            Some(o) if o.winner == Some(root.turn()) => Some(Mate::Loses(0)),
            Some(_) => None,
            None => mates.distance(&after, child.proven == Proven::Loss),
        };
        if let Some(mate) = mate {
            return Score::Mate(mate.before().uci_moves());
        }
    }
    score_of(wdl, child.proven)
}

/// Counters of one search, for `info` lines.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Playouts made by this search.
    pub nodes: u64,
    /// Time since the search started.
    pub elapsed: Duration,
    /// The tree's size bound in bytes (for `hashfull`).
    pub max_tree_bytes: usize,
}

/// The `info` lines describing the search now: one per reported root move (`multipv` ≥ 1),
/// best first. The best move's line carries the principal variation; the others, which the
/// search API cannot follow below the root, show only their first move. `wdl` is printed with
/// `show_wdl` (the `UCI_ShowWDL` option); mate distances come from and go to `mates`.
pub fn info_lines(
    search: &Search,
    progress: &Progress,
    multipv: usize,
    show_wdl: bool,
    mates: &mut MateCache,
) -> Vec<String> {
    let root = search.root_position();
    let pv = search.pv(MAX_PV_PLIES);
    if pv.is_empty() {
        return Vec::new();
    }
    let elapsed_ms = progress.elapsed.as_millis().max(1);
    let nps = u128::from(progress.nodes) * 1000 / elapsed_ms;
    let hashfull =
        (search.tree_bytes() as u128 * 1000 / progress.max_tree_bytes.max(1) as u128).min(1000);
    let common = |depth: usize, line: usize, score: Score, wdl: [f32; 3], moves: &[Move]| {
        let [w, d, l] = wdl_permille(wdl);
        let mut s = format!(
            "info depth {} seldepth {}",
            depth.max(1),
            search.max_depth().max(depth).max(1)
        );
        if multipv > 1 {
            let _ = write!(s, " multipv {line}");
        }
        let _ = write!(s, " score {score}");
        if show_wdl {
            let _ = write!(s, " wdl {w} {d} {l}");
        }
        let _ = write!(
            s,
            " nodes {} nps {nps} hashfull {hashfull} time {} pv",
            progress.nodes,
            progress.elapsed.as_millis()
        );
        for &m in moves {
            let _ = write!(s, " {}", root.uci(m));
        }
        s
    };
    let mut lines =
        vec![common(pv.len(), 1, root_score(search, &pv, mates), search.root_wdl(), &pv)];
    if multipv > 1 {
        let mut others: Vec<ChildStats> = search
            .root_child_stats()
            .into_iter()
            .filter(|c| c.visits > 0 && c.mv != pv[0])
            .collect();
        others.sort_by(|a, b| {
            let key =
                |c: &ChildStats| (c.proven == Proven::Win, c.proven != Proven::Loss, c.visits);
            key(b).cmp(&key(a)).then((b.wdl[0] - b.wdl[2]).total_cmp(&(a.wdl[0] - a.wdl[2])))
        });
        for (i, child) in others.iter().take(multipv - 1).enumerate() {
            let wdl = child.proven.wdl().unwrap_or(child.wdl);
            let score = child_score(root, child, mates);
            lines.push(common(1, i + 2, score, wdl, &[child.mv]));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_mcts::{SearchConfig, UniformEvaluator};
    use atomzero_rules::{Game, Position, Variant};

    #[test]
    fn cp_mapping() {
        assert_eq!(q_to_cp(0.0), 0);
        assert_eq!(q_to_cp(0.5), 111);
        assert_eq!(q_to_cp(-0.5), -111);
        assert_eq!(q_to_cp(0.9), 671);
        assert_eq!(q_to_cp(1.0), MAX_CP);
        assert_eq!(q_to_cp(f32::NAN), 0);
    }

    #[test]
    fn permille_sums_to_1000() {
        assert_eq!(wdl_permille([1.0 / 3.0; 3]).iter().sum::<u32>(), 1000);
        assert_eq!(wdl_permille([0.2556, 0.5, 0.2444]), [256, 500, 244]);
        assert_eq!(wdl_permille([f32::NAN, 0.0, 0.0]), [0, 1000, 0]);
        assert_eq!(wdl_permille([0.0, 0.0, 1.0]), [0, 0, 1000]);
    }

    #[test]
    fn mate_in_one_is_reported_as_mate() {
        // Atomic: Qxd7 explodes the black king on e8... any capture next to the king wins.
        let fen = "4k3/3p4/8/8/8/8/8/3QK3 w - - 0 1";
        let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
        let mut search = Search::new(&Game::new(pos), SearchConfig::default().without_noise(), 1);
        search.run(&UniformEvaluator, 200, 8);
        assert_eq!(search.root_proven(), Proven::Win);
        let pv = search.pv(MAX_PV_PLIES);
        let mut mates = MateCache::default();
        assert_eq!(root_score(&search, &pv, &mut mates), Score::Mate(1));
        let progress =
            Progress { nodes: 10, elapsed: Duration::from_millis(5), max_tree_bytes: 1000 };
        let lines = info_lines(&search, &progress, 3, true, &mut mates);
        assert!(lines[0].contains(" score mate 1 wdl 1000 0 0 "), "{}", lines[0]);
        assert!(lines[0].contains(" multipv 1 "), "{}", lines[0]);
        assert!(lines.len() > 1);
        // Without UCI_ShowWDL no `wdl`.
        let lines = info_lines(&search, &progress, 1, false, &mut mates);
        assert!(lines[0].contains(" score mate 1 nodes "), "{}", lines[0]);
        assert!(!lines[0].contains("wdl"), "{}", lines[0]);
    }
}
