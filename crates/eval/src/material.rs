//! Material counting for the baseline players: standard piece values (pawn 100, knight and
//! bishop 300, rook 500, queen 900; kings are not material), and game ends scored from the
//! side to move's view with the distance to the end, so that sooner wins and later losses
//! score higher.

use atomzero_rules::{Board, Color, Move, MoveList, Outcome, Position, Role, Termination};

/// Value of a won game (the end itself); a win `n` plies ahead scores `WIN - n`.
pub const WIN: i32 = 100_000;

/// Scores above this (in absolute value) are game ends, not material.
pub const WIN_THRESHOLD: i32 = WIN - 10_000;

/// The value of a piece of `role` in centipawns.
pub const fn piece_value(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight => 300,
        Role::Bishop => 300,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 0,
    }
}

/// Material of `color` on `board`.
pub fn material(board: &Board, color: Color) -> i32 {
    let ours = board.by_color(color);
    Role::ALL
        .iter()
        .map(|&role| (board.by_role(role) & ours).count() as i32 * piece_value(role))
        .sum()
}

/// Material of `color` minus the opponent's.
pub fn balance(board: &Board, color: Color) -> i32 {
    material(board, color) - material(board, !color)
}

/// The score of a finished game for `side`, `ply` half-moves from the search root.
pub fn outcome_score(outcome: Outcome, side: Color, ply: usize) -> i32 {
    match outcome.winner {
        Some(winner) if winner == side => WIN - ply as i32,
        Some(_) => -(WIN - ply as i32),
        None => 0,
    }
}

/// The legal moves and, if the position ends the game, its outcome: exactly
/// [`Position::outcome`] (variant end, no moves, insufficient material, 50 moves), but
/// generating the moves only once.
pub fn moves_and_outcome(pos: &Position) -> (MoveList, Option<Outcome>) {
    if let Some(outcome) = pos.variant_outcome() {
        return (MoveList::new(), Some(outcome));
    }
    let moves = pos.legal_moves();
    let outcome = if moves.is_empty() {
        Some(if pos.is_check() {
            Outcome::decisive(!pos.turn(), Termination::Checkmate)
        } else {
            Outcome::draw(Termination::Stalemate)
        })
    } else if pos.is_insufficient_material() {
        Some(Outcome::draw(Termination::InsufficientMaterial))
    } else if pos.halfmoves() >= 100 {
        Some(Outcome::draw(Termination::FiftyMoves))
    } else {
        None
    };
    (moves, outcome)
}

/// The static value of the position after `m` for the side that plays it: the game end if the
/// move ends the game (checked without generating the reply moves when the king rules decide),
/// otherwise the material balance after the blast.
pub fn after_move_score(pos: &Position, m: Move) -> i32 {
    let us = pos.turn();
    let mut after = *pos;
    after.play_unchecked(m);
    match after.outcome() {
        Some(outcome) => outcome_score(outcome, us, 1),
        None => balance(after.board(), us),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::Variant;

    #[test]
    fn start_position_is_balanced_and_counts_39_pawns_a_side() {
        let pos = Position::new(Variant::Atomic);
        assert_eq!(material(pos.board(), Color::White), 3900);
        assert_eq!(balance(pos.board(), Color::Black), 0);
    }

    #[test]
    fn moves_and_outcome_agrees_with_position_outcome() {
        for (fen, variant) in [
            ("4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1", Variant::Atomic),
            ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", Variant::Atomic),
            ("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", Variant::Atomic),
            ("8/8/8/8/8/5k2/8/7K w - - 0 1", Variant::NoCheckAtomic),
            ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", Variant::Atomic),
        ] {
            let pos = Position::from_fen(fen, variant).unwrap();
            let (moves, outcome) = moves_and_outcome(&pos);
            assert_eq!(outcome, pos.outcome(), "{fen}");
            if outcome.is_none() {
                assert_eq!(moves.len(), pos.legal_moves().len());
            }
        }
    }
}
