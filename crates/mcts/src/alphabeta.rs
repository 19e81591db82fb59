//! A tactical alpha-beta search: the search's alpha-beta priors
//! ([`crate::SearchConfig::ab_prior_nodes`]) and the engine's check of its root moves.
//!
//! The network misjudges forced lines a few moves deep (king explosions, mates, lost pieces)
//! that an alpha-beta search over material sees: `docs/experiments.md` ("Why the engine loses
//! at 0.5 s") has the data. [`check_root`] searches the root by iterative deepening (negamax
//! with a transposition table, killer and history move ordering, and a capture quiescence
//! search that plays every blast out) and returns, at the deepest depth it completed, the
//! root moves that score at least `margin` centipawns worse than its best one: moves that
//! lose material or the king by force within its horizon. The MCTS then raises the priors of
//! the few moves left (alpha-beta priors, at the nodes it visits often), or leaves the
//! refuted ones out at the root ([`crate::Search::exclude_root_moves`], `AlphaBetaShare`).
//!
//! Scores are centipawns for the side to move (pawn 100, knight and bishop 300, rook 500,
//! queen 900); a game end `n` plies ahead scores ±([`WIN`] − n); repetitions (counted from the
//! game's history and the line searched), the fifty-move rule, stalemate and insufficient
//! material score 0. Pure: no clock, no threads; the caller's `keep_going(nodes)` (asked every
//! 1,024 nodes) ends the search, and the last completed depth's result stands.

use atomzero_rules::{Board, Color, Move, MoveList, Outcome, Position, Role};

/// The score of a won game at the root (a win `n` plies ahead scores `WIN - n`).
pub const WIN: i32 = 30_000;
/// Scores above this in absolute value are game ends.
pub const WIN_THRESHOLD: i32 = WIN - 1_000;
const INFINITY: i32 = WIN + 1;
/// Deepest line searched (full-width plies plus quiescence).
const MAX_PLY: usize = 64;
/// Quiescence plies after the nominal depth.
const MAX_QUIESCENCE: usize = 8;

/// The value of a piece in centipawns (kings are not material).
const fn piece_value(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight | Role::Bishop => 300,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 0,
    }
}

/// Material of the side to move minus the opponent's.
fn material(board: &Board, us: Color) -> i32 {
    let mut score = 0;
    for role in [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        let pieces = board.by_role(role);
        let diff = (pieces & board.by_color(us)).count() as i32
            - (pieces & board.by_color(!us)).count() as i32;
        score += diff * piece_value(role);
    }
    score
}

/// What [`check_root`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootCheck {
    /// The deepest depth completed (full-width plies).
    pub depth: u32,
    /// The best move at that depth and its score.
    pub best: Move,
    /// The best move's score (centipawns for the side to move; game ends near ±[`WIN`]).
    pub score: i32,
    /// The root moves scoring at most `score - margin` at that depth (never the best one).
    pub refuted: Vec<Move>,
    /// Nodes searched (all depths).
    pub nodes: u64,
}

/// Bound kinds of a table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

/// A capture (or check evasion) of the quiescence search: its sort key, the position after
/// it and that position's game end, if any.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    key: i32,
    child: Position,
    outcome: Option<Outcome>,
}

/// One transposition table entry.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    mv: Option<Move>,
    score: i32,
    depth: i32,
    bound: Bound,
}

/// The search's state: table, ordering heuristics and counters.
#[derive(Clone, Debug)]
pub struct AlphaBeta {
    table: Vec<Option<Entry>>,
    killers: [[Option<Move>; 2]; MAX_PLY],
    history: Vec<i32>,
    nodes: u64,
    stopped: bool,
    /// Hashes of the game's positions before the root (oldest first), then of the line.
    line: Vec<u64>,
    /// Nodes after which a search stops ([`AlphaBeta::quiescence_score`]'s budget).
    limit: u64,
    /// Per ply: the node's moves (generated in place, never initialised or copied again),
    /// its moves in search order, and the quiescence search's candidates.
    moves: Vec<MoveList>,
    ordered: Vec<Vec<(i32, Move)>>,
    candidates: Vec<Vec<Candidate>>,
}

impl AlphaBeta {
    /// A search with a table of `2^table_bits` entries.
    pub fn new(table_bits: u32) -> AlphaBeta {
        AlphaBeta {
            table: vec![None; 1 << table_bits.min(24)],
            killers: [[None; 2]; MAX_PLY],
            history: vec![0; 64 * 64],
            nodes: 0,
            stopped: false,
            line: Vec::new(),
            limit: u64::MAX,
            moves: vec![MoveList::new(); MAX_PLY + 1],
            ordered: vec![Vec::new(); MAX_PLY + 1],
            candidates: vec![Vec::new(); MAX_PLY + 1],
        }
    }

    /// Nodes searched since the last [`AlphaBeta::check_root`] began.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Searches `root` (after the game positions whose hashes are `before`, oldest first) by
    /// iterative deepening up to `max_depth` while `keep_going(nodes)` says so, and returns the
    /// root moves that score `margin` or more below the best at the deepest completed depth.
    /// `None` when the root has no legal move or not even depth 1 completed.
    pub fn check_root(
        &mut self,
        root: &Position,
        before: &[u64],
        max_depth: u32,
        margin: i32,
        keep_going: &mut dyn FnMut(u64) -> bool,
    ) -> Option<RootCheck> {
        self.nodes = 0;
        self.stopped = false;
        self.killers = [[None; 2]; MAX_PLY];
        self.history.iter_mut().for_each(|h| *h /= 8);
        let mut moves: Vec<Move> = root.legal_moves().iter().copied().collect();
        if moves.is_empty() {
            return None;
        }
        let mut result: Option<RootCheck> = None;
        for depth in 1..=max_depth.max(1) as i32 {
            self.line.clear();
            self.line.extend_from_slice(before);
            self.line.push(root.hash());
            let mut best = -INFINITY;
            let mut best_move = moves[0];
            let mut scores: Vec<(Move, i32)> = Vec::with_capacity(moves.len());
            for &m in &moves {
                let mut child = *root;
                child.play_unchecked(m);
                // Every move gets a score exact above `best - margin` (a bound below it), so
                // that the moves far below the best are known.
                let floor = if best == -INFINITY { -INFINITY } else { best - margin };
                let score = -self.negamax(&child, depth - 1, 1, -INFINITY, -floor, keep_going);
                if self.stopped {
                    break;
                }
                scores.push((m, score));
                if score > best {
                    best = score;
                    best_move = m;
                }
            }
            if self.stopped {
                break;
            }
            let refuted = scores
                .iter()
                .filter(|&&(m, s)| m != best_move && s <= best - margin)
                .map(|&(m, _)| m)
                .collect();
            result = Some(RootCheck {
                depth: depth as u32,
                best: best_move,
                score: best,
                refuted,
                nodes: self.nodes,
            });
            // The next depth searches the best moves first.
            scores.sort_by_key(|&(_, s)| std::cmp::Reverse(s));
            moves = scores.into_iter().map(|(m, _)| m).collect();
            if best.abs() >= WIN_THRESHOLD {
                break;
            }
        }
        if let Some(r) = &mut result {
            r.nodes = self.nodes;
        }
        result
    }

    /// The quiescence search's view of `pos`: its static material and its score after the
    /// captures worth making (blasts played out; a king lost scores near ±[`WIN`]), both in
    /// centipawns for the side to move. `None` when `max_nodes` ran out first. Uses no
    /// table, so it never depends on earlier searches.
    pub fn quiescence_score(&mut self, pos: &Position, max_nodes: u64) -> Option<(i32, i32)> {
        self.nodes = 0;
        self.stopped = false;
        let mut keep_going = |_: u64| true;
        self.limit = max_nodes;
        let score = self.quiescence(pos, 0, 0, -INFINITY, INFINITY, &mut keep_going);
        self.limit = u64::MAX;
        (!self.stopped).then(|| (material(pos.board(), pos.turn()), score))
    }

    /// Counts a node and asks the caller every 1,024.
    #[inline]
    fn tick(&mut self, keep_going: &mut dyn FnMut(u64) -> bool) -> bool {
        self.nodes += 1;
        if self.nodes > self.limit || (self.nodes.is_multiple_of(1024) && !keep_going(self.nodes)) {
            self.stopped = true;
        }
        self.stopped
    }

    /// Whether `pos` repeats a position of the game or the line (the last entry of `line`
    /// is `pos` itself), within its half-move clock.
    fn repeats(&self, pos: &Position) -> bool {
        let hash = pos.hash();
        let n = self.line.len();
        let window = pos.halfmoves() as usize;
        let mut back = 2;
        while back <= window && back < n {
            if self.line[n - 1 - back] == hash {
                return true;
            }
            back += 2;
        }
        false
    }

    fn negamax(
        &mut self,
        pos: &Position,
        depth: i32,
        ply: usize,
        alpha: i32,
        beta: i32,
        keep_going: &mut dyn FnMut(u64) -> bool,
    ) -> i32 {
        if self.tick(keep_going) {
            return 0;
        }
        if let Some(outcome) = pos.variant_outcome() {
            return end_score(outcome, pos.turn(), ply);
        }
        self.line.push(pos.hash());
        let score = self.negamax_inner(pos, depth, ply, alpha, beta, keep_going);
        self.line.pop();
        score
    }

    fn negamax_inner(
        &mut self,
        pos: &Position,
        depth: i32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
        keep_going: &mut dyn FnMut(u64) -> bool,
    ) -> i32 {
        if pos.halfmoves() >= 100 || self.repeats(pos) {
            return 0;
        }
        if depth <= 0 || ply >= MAX_PLY - MAX_QUIESCENCE - 1 {
            // The quiescence search generates only what it searches (captures, or every
            // evasion in check); a stalemate there scores its material.
            if pos.is_insufficient_material() {
                return 0;
            }
            return self.quiescence(pos, ply, 0, alpha, beta, keep_going);
        }
        pos.legal_moves_into(&mut self.moves[ply]);
        if self.moves[ply].is_empty() {
            return if pos.is_check() { -(WIN - ply as i32) } else { 0 };
        }
        if pos.is_insufficient_material() {
            return 0;
        }
        let key = pos.hash();
        let slot = (key as usize) & (self.table.len() - 1);
        let mut tt_move = None;
        if let Some(e) = self.table[slot]
            && e.key == key
        {
            tt_move = e.mv;
            if e.depth >= depth {
                let score = from_table(e.score, ply);
                let cut = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                };
                if cut {
                    return score;
                }
            }
        }
        let mut order = std::mem::take(&mut self.ordered[ply]);
        self.order(pos, tt_move, ply, &mut order);
        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut best_move = None;
        for (i, &(_, m)) in order.iter().enumerate() {
            let mut child = *pos;
            child.play_unchecked(m);
            let score = if i == 0 {
                -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha, keep_going)
            } else {
                // Principal variation search: a null window first.
                let s = -self.negamax(&child, depth - 1, ply + 1, -alpha - 1, -alpha, keep_going);
                if s > alpha && s < beta && !self.stopped {
                    -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha, keep_going)
                } else {
                    s
                }
            };
            if self.stopped {
                self.ordered[ply] = order;
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(m);
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        if !pos.is_capture(m) {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(m) {
                                k[1] = k[0];
                                k[0] = Some(m);
                            }
                            let h = &mut self.history[history_index(m)];
                            *h = (*h + depth * depth).min(1 << 20);
                        }
                        break;
                    }
                }
            }
        }
        self.ordered[ply] = order;
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.table[slot] =
            Some(Entry { key, mv: best_move, score: to_table(best, ply), depth, bound });
        best
    }

    /// The moves of `ply` (`self.moves[ply]`) into `keyed` in search order, each with its
    /// sort key: the table's move, then captures by the material after the blast, then
    /// killers, then quiet moves by history.
    fn order(
        &self,
        pos: &Position,
        tt_move: Option<Move>,
        ply: usize,
        keyed: &mut Vec<(i32, Move)>,
    ) {
        let us = pos.turn();
        keyed.clear();
        keyed.extend(self.moves[ply].iter().map(|&m| {
            let key = if Some(m) == tt_move {
                1 << 30
            } else if pos.is_capture(m) {
                let mut after = *pos;
                after.play_unchecked(m);
                let gain = match after.variant_outcome() {
                    Some(o) if o.winner == Some(us) => WIN,
                    _ => material(after.board(), us),
                };
                (1 << 28) + gain
            } else if self.killers[ply].contains(&Some(m)) {
                1 << 27
            } else {
                self.history[history_index(m)]
            };
            (key, m)
        }));
        keyed.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
    }

    /// The capture search below the nominal depth: the side to move stands on its material
    /// (unless in check) or plays a capture (every evasion in check), best captures first, for
    /// at most [`MAX_QUIESCENCE`] plies. Generates only the moves it searches, so a stalemate
    /// outside check is not seen (it scores its material).
    fn quiescence(
        &mut self,
        pos: &Position,
        ply: usize,
        qply: usize,
        mut alpha: i32,
        beta: i32,
        keep_going: &mut dyn FnMut(u64) -> bool,
    ) -> i32 {
        let us = pos.turn();
        let in_check = pos.is_check();
        if in_check {
            pos.legal_moves_into(&mut self.moves[ply]);
            if self.moves[ply].is_empty() {
                return -(WIN - ply as i32);
            }
        }
        let mut best = -INFINITY;
        if !in_check || qply >= MAX_QUIESCENCE {
            best = material(pos.board(), us);
            if best >= beta || qply >= MAX_QUIESCENCE {
                return best;
            }
            alpha = alpha.max(best);
        }
        if !in_check {
            pos.legal_captures_into(&mut self.moves[ply]);
        }
        let mut candidates = std::mem::take(&mut self.candidates[ply]);
        candidates.clear();
        for &mv in self.moves[ply].iter() {
            let mut child = *pos;
            child.play_unchecked(mv);
            let outcome = child.variant_outcome();
            let key = match outcome {
                Some(o) if o.winner == Some(us) => {
                    self.candidates[ply] = candidates;
                    return WIN - (ply + 1) as i32;
                }
                _ => material(child.board(), us),
            };
            candidates.push(Candidate { key, child, outcome });
        }
        candidates.sort_by_key(|c| std::cmp::Reverse(c.key));
        for c in &candidates {
            if self.tick(keep_going) {
                break;
            }
            let score = match c.outcome {
                // A game end after the move, from the mover's side.
                Some(outcome) => end_score(outcome, us, ply + 1),
                None => -self.quiescence(&c.child, ply + 1, qply + 1, -beta, -alpha, keep_going),
            };
            if self.stopped {
                break;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        self.candidates[ply] = candidates;
        if self.stopped { 0 } else { best }
    }
}

/// The score of a game ended `ply` plies from the root, for `side`.
#[inline]
fn end_score(outcome: Outcome, side: Color, ply: usize) -> i32 {
    match outcome.winner {
        Some(w) if w == side => WIN - ply as i32,
        Some(_) => -(WIN - ply as i32),
        None => 0,
    }
}

/// The history table's index of a move.
#[inline]
fn history_index(m: Move) -> usize {
    m.from().index() * 64 + m.to().index()
}

/// A score stored in the table: game ends relative to the node, not the root.
#[inline]
fn to_table(score: i32, ply: usize) -> i32 {
    if score >= WIN_THRESHOLD {
        score + ply as i32
    } else if score <= -WIN_THRESHOLD {
        score - ply as i32
    } else {
        score
    }
}

/// A table score back at `ply`.
#[inline]
fn from_table(score: i32, ply: usize) -> i32 {
    if score >= WIN_THRESHOLD {
        score - ply as i32
    } else if score <= -WIN_THRESHOLD {
        score + ply as i32
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::Variant;

    fn check(fen: &str, depth: u32, margin: i32) -> RootCheck {
        let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
        AlphaBeta::new(16).check_root(&pos, &[], depth, margin, &mut |_| true).unwrap()
    }

    fn uci(fen: &str, m: Move) -> String {
        Position::from_fen(fen, Variant::Atomic).unwrap().uci(m)
    }

    #[test]
    fn the_quiescence_score_plays_the_captures_out_within_its_budget() {
        // White, a queen down for a pawn, blows the queen up with exd5 (both explode).
        let pos = Position::from_fen("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1", Variant::Atomic).unwrap();
        let mut ab = AlphaBeta::new(4);
        assert_eq!(ab.quiescence_score(&pos, 256), Some((-800, 0)));
        // Out of budget before the capture is searched: no score.
        assert_eq!(ab.quiescence_score(&pos, 0), None);
        // The limit does not outlive the call: the same search again finds the same score.
        assert_eq!(ab.quiescence_score(&pos, 256), Some((-800, 0)));
        let start = Position::new(Variant::Atomic);
        assert_eq!(ab.quiescence_score(&start, 256), Some((0, 0)));
    }

    #[test]
    fn the_quiescence_search_sees_mate_in_check_and_plays_captures_only_outside_it() {
        // Black is mated on the back rank: in check, no evasion (every evasion is searched
        // in check, and there is none).
        let mated =
            Position::from_fen("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", Variant::Atomic).unwrap();
        let mut ab = AlphaBeta::new(4);
        assert_eq!(ab.quiescence_score(&mated, 256), Some((-200, -WIN)));
        // White to move, the rook on a1: no capture, so it stands on its material
        // without searching a quiet move (one node would be counted per move searched).
        let quiet =
            Position::from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", Variant::Atomic).unwrap();
        assert_eq!(ab.quiescence_score(&quiet, 256), Some((200, 200)));
        assert_eq!(ab.nodes(), 0);
    }

    #[test]
    fn explodes_the_king_in_one() {
        let fen = "4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1";
        let r = check(fen, 3, 300);
        assert_eq!(uci(fen, r.best), "d5f7");
        assert_eq!(r.score, WIN - 1);
    }

    #[test]
    fn mates_in_one_and_two() {
        let fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";
        let r = check(fen, 3, 300);
        assert_eq!(uci(fen, r.best), "a1a8");
        assert_eq!(r.score, WIN - 1);
        // 7... Qh4: Fairy-Stockfish's mate 2 (d8h4 c2c3 h4f2).
        let fen = "rnbqkb1r/1p1p1ppp/p1p5/4p3/1n2PNP1/P2B4/1PPP1P1P/RNBQKR2 b Qkq - 0 7";
        let r = check(fen, 4, 300);
        assert_eq!(uci(fen, r.best), "d8h4");
        assert_eq!(r.score, WIN - 3);
        assert!(r.refuted.len() > 10, "every other move is far below a mate");
    }

    #[test]
    fn refutes_a_move_that_allows_an_explosion() {
        // Black threatens Bxf2 (the blast takes the g1 king): the moves that allow it, and
        // only those, are refuted at depth 2.
        let fen = "4k3/8/8/2b5/8/8/5P2/6K1 w - - 0 1";
        let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
        let r = check(fen, 2, 300);
        for &m in &pos.legal_moves() {
            let after = pos.play(m).unwrap();
            let allows = after.winning_move(&after.legal_moves()).is_some();
            assert_eq!(r.refuted.contains(&m), allows, "{}", pos.uci(m));
        }
        assert!(!r.refuted.is_empty());
    }

    #[test]
    fn the_start_position_is_level_and_nothing_is_refuted_at_depth_three() {
        let r = check(atomzero_rules::STARTING_FEN, 3, 300);
        assert_eq!(r.score, 0);
        assert!(r.refuted.is_empty(), "{:?}", r.refuted);
        assert_eq!(r.depth, 3);
    }

    #[test]
    fn a_stopped_search_keeps_the_last_completed_depth() {
        let pos = Position::new(Variant::Atomic);
        let mut ab = AlphaBeta::new(16);
        let r = ab.check_root(&pos, &[], 20, 300, &mut |n| n < 20_000).unwrap();
        assert!(r.depth >= 1 && r.depth < 20, "depth {}", r.depth);
        assert!(ab.nodes() >= 20_000 && ab.nodes() < 30_000, "{}", ab.nodes());
    }

    #[test]
    fn a_repetition_scores_as_a_draw() {
        // White is a queen down (-900). If the position after Kf1 occurred two plies before
        // the root (the game's history), Kf1 repeats it: a draw, the best move.
        let fen = "q3k3/8/8/8/8/8/8/6K1 w - - 10 40";
        let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
        let kf1 = *pos.legal_moves().iter().find(|&&m| pos.uci(m) == "g1f1").unwrap();
        let repeated = pos.play(kf1).unwrap().hash();
        let mut ab = AlphaBeta::new(12);
        let plain = ab.check_root(&pos, &[], 1, 300, &mut |_| true).unwrap();
        assert_eq!(plain.score, -900);
        let r = ab.check_root(&pos, &[repeated], 1, 300, &mut |_| true).unwrap();
        assert_eq!((r.best, r.score), (kf1, 0));
        assert_eq!(r.refuted.len(), pos.legal_moves().len() - 1);
    }
}
