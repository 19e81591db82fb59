//! A small alpha-beta baseline: fail-soft negamax to a fixed depth, then a capture-only
//! quiescence search, over a material evaluation. It understands blasts because it plays the
//! moves out: material is counted after each explosion, and game ends (exploded kings, mates,
//! stalemates, variant endings) are scored exactly by distance (see [`crate::material`]).
//! Captures are searched first (best material after the blast first). Equal best root moves
//! are chosen by a seeded generator, so games between fixed seeds repeat exactly.

use crate::material::{self, WIN, moves_and_outcome, outcome_score};
use crate::player::{Player, PlayerError};
use atomzero_mcts::Rng;
use atomzero_rules::{Game, Move, MoveList, Position};

/// Deepest quiescence search (plies of captures after the nominal depth).
const MAX_QUIESCENCE_PLIES: usize = 8;

/// Larger than any score.
const INFINITY: i32 = WIN + 1;

/// The alpha-beta player.
#[derive(Clone, Debug)]
pub struct AlphaBetaPlayer {
    depth: u32,
    rng: Rng,
}

impl AlphaBetaPlayer {
    /// A searcher of `depth` full-width plies (at least 1) with root ties broken by `seed`.
    pub fn new(depth: u32, seed: u64) -> AlphaBetaPlayer {
        AlphaBetaPlayer { depth: depth.max(1), rng: Rng::new(seed) }
    }

    /// The nominal depth.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The chosen move and its score (centipawns for the side to move; game ends near
    /// ±[`WIN`]). `None` if there are no legal moves.
    pub fn search(&mut self, pos: &Position) -> Option<(Move, i32)> {
        let moves = ordered_moves(pos, pos.legal_moves());
        let mut best = -INFINITY;
        let mut ties: Vec<Move> = Vec::new();
        for m in moves {
            let mut child = *pos;
            child.play_unchecked(m);
            // Search with the window (best - 1, inf) so that a move as good as the best so far
            // gets its exact score (scores are integers) and joins the ties.
            let alpha = if best == -INFINITY { -INFINITY } else { best - 1 };
            let score = -negamax(&child, self.depth - 1, 1, -INFINITY, -alpha);
            if score > best {
                best = score;
                ties.clear();
            }
            if score == best {
                ties.push(m);
            }
        }
        if ties.is_empty() {
            return None;
        }
        Some((ties[self.rng.below(ties.len())], best))
    }
}

impl Player for AlphaBetaPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move, PlayerError> {
        self.search(game.position()).map(|(m, _)| m).ok_or(PlayerError::NoMove)
    }
}

/// The score of `pos` for the side to move by a `depth`-ply search (with quiescence), without
/// a player: used to judge whether random openings are balanced.
pub fn evaluate(pos: &Position, depth: u32) -> i32 {
    negamax(pos, depth, 0, -INFINITY, INFINITY)
}

/// Captures first, each group best-first by the static score after the move.
fn ordered_moves(pos: &Position, moves: MoveList) -> Vec<Move> {
    let mut keyed: Vec<(bool, i32, Move)> =
        moves.iter().map(|&m| (pos.is_capture(m), material::after_move_score(pos, m), m)).collect();
    keyed.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    keyed.into_iter().map(|k| k.2).collect()
}

fn negamax(pos: &Position, depth: u32, ply: usize, mut alpha: i32, beta: i32) -> i32 {
    let (moves, outcome) = moves_and_outcome(pos);
    if let Some(outcome) = outcome {
        return outcome_score(outcome, pos.turn(), ply);
    }
    if depth == 0 {
        return quiescence(pos, moves, ply, 0, alpha, beta);
    }
    let mut best = -INFINITY;
    for m in ordered_moves(pos, moves) {
        let mut child = *pos;
        child.play_unchecked(m);
        let score = -negamax(&child, depth - 1, ply + 1, -beta, -alpha);
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
    best
}

/// Captures only (all moves when in check), with the static material as a stand-pat bound
/// when not in check. `moves` are the legal moves of `pos`, which is not a game end.
fn quiescence(
    pos: &Position,
    moves: MoveList,
    ply: usize,
    qply: usize,
    mut alpha: i32,
    beta: i32,
) -> i32 {
    let in_check = pos.is_check();
    let stand_pat = material::balance(pos.board(), pos.turn());
    let mut best = -INFINITY;
    if !in_check || qply >= MAX_QUIESCENCE_PLIES {
        best = stand_pat;
        if best >= beta || qply >= MAX_QUIESCENCE_PLIES {
            return best;
        }
        alpha = alpha.max(best);
    }
    let mut candidates = moves;
    if !in_check {
        candidates.retain(|&m| pos.is_capture(m));
    }
    for m in ordered_moves(pos, candidates) {
        let mut child = *pos;
        child.play_unchecked(m);
        let (child_moves, outcome) = moves_and_outcome(&child);
        let score = match outcome {
            Some(outcome) => -outcome_score(outcome, child.turn(), ply + 1),
            None => -quiescence(&child, child_moves, ply + 1, qply + 1, -beta, -alpha),
        };
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
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::Variant;

    fn best(fen: &str, depth: u32) -> (String, i32) {
        let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
        let (m, score) = AlphaBetaPlayer::new(depth, 7).search(&pos).unwrap();
        (pos.uci(m), score)
    }

    #[test]
    fn explodes_the_king_in_one() {
        let (m, score) = best("4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1", 2);
        assert_eq!(m, "d5f7");
        assert_eq!(score, WIN - 1);
    }

    #[test]
    fn mates_in_one() {
        let (m, score) = best("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 1);
        assert_eq!(m, "a1a8");
        assert_eq!(score, WIN - 1);
    }

    #[test]
    fn does_not_allow_an_explosion_in_one() {
        // Black threatens Bxf2, exploding the white king on g1 next to the f2 pawn.
        let fen = "4k3/8/8/2b5/8/8/5P2/6K1 w - - 0 1";
        let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
        for seed in 0..6 {
            let (m, score) = AlphaBetaPlayer::new(2, seed).search(&pos).unwrap();
            assert!(score > -WIN / 2, "seed {seed}: {} scores {score}", pos.uci(m));
            let after = pos.play(m).unwrap();
            for &reply in &after.legal_moves() {
                let end = after.play(reply).unwrap();
                assert!(end.board().king_of(atomzero_rules::Color::White).is_some());
            }
        }
    }

    #[test]
    fn evaluates_the_start_position_as_level() {
        assert_eq!(evaluate(&Position::new(Variant::Atomic), 2), 0);
    }
}
