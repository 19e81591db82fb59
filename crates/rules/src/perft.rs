//! Perft: counting the leaf nodes of the legal-move tree, with bulk counting at depth 1.

use crate::position::Position;

/// Number of move paths of length `depth` (bulk counting: the last ply counts the legal moves
/// without playing them).
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = pos.legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|&m| {
            let mut child = *pos;
            child.play_unchecked(m);
            perft(&child, depth - 1)
        })
        .sum()
}

/// Perft split by first move, in legal-move order: `(move, count)` pairs.
pub fn divide(pos: &Position, depth: u32) -> Vec<(crate::Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut child = *pos;
            child.play_unchecked(m);
            (m, perft(&child, depth - 1))
        })
        .collect()
}
