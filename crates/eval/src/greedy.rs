//! The one-ply greedy baseline: a move that wins at once (exploding the enemy king, or
//! mating) if there is one; otherwise the move with the best material balance after its blast.
//! It never plays a move that loses at once (a self-destruction, in the variants that allow
//! one) unless nothing else is legal. Ties are broken by a seeded generator.
//!
//! In the bomb variant it sees only its information set: it detonates its bomb when that wins
//! the enemy king or the most material (captures take one piece, a detonation everything
//! around the bomb), and it scores each move by its worst result over the worlds it cannot
//! rule out (only a mate can depend on the opponent's bomb, whose detonation may answer a
//! check). Its bomb is a random piece (every choice scores the same).

use crate::material::after_move_score;
use crate::player::{Player, PlayerError};
use atomzero_belief::InformationSet;
use atomzero_mcts::Rng;
use atomzero_rules::{Game, Move, Position};

/// The greedy player.
#[derive(Clone, Debug)]
pub struct GreedyPlayer {
    rng: Rng,
}

impl GreedyPlayer {
    /// A greedy player whose ties are broken by `seed`.
    pub fn new(seed: u64) -> GreedyPlayer {
        GreedyPlayer { rng: Rng::new(seed) }
    }

    /// The move greedy plays in `pos` (`None` if there are no legal moves).
    pub fn best_move(&mut self, pos: &Position) -> Option<Move> {
        let moves = pos.legal_moves();
        let scored: Vec<(Move, i32)> =
            moves.iter().map(|&m| (m, after_move_score(pos, m))).collect();
        let best = scored.iter().map(|s| s.1).max()?;
        let ties: Vec<Move> = scored.iter().filter(|s| s.1 == best).map(|s| s.0).collect();
        Some(ties[self.rng.below(ties.len())])
    }
}

impl GreedyPlayer {
    /// The bomb variant: the move greedy plays from what it sees (`None` without a legal
    /// move): the best worst-case score over the worlds of `info`.
    pub fn best_move_in_view(&mut self, info: &InformationSet) -> Option<Move> {
        let origins: Vec<_> = info.hidden_origins().iter().map(|p| Some(p.origin)).collect();
        let worlds: Vec<Position> = if origins.is_empty() { vec![None] } else { origins }
            .into_iter()
            .filter_map(|origin| info.world(origin).ok())
            .map(|world| world.position)
            .collect();
        let moves = info.view().legal_moves()?;
        let scored: Vec<(Move, i32)> = moves
            .iter()
            .map(|&m| (m, worlds.iter().map(|w| after_move_score(w, m)).min().unwrap_or(0)))
            .collect();
        let best = scored.iter().map(|s| s.1).max()?;
        let ties: Vec<Move> = scored.iter().filter(|s| s.1 == best).map(|s| s.0).collect();
        Some(ties[self.rng.below(ties.len())])
    }
}

impl Player for GreedyPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move, PlayerError> {
        self.best_move(game.position()).ok_or(PlayerError::NoMove)
    }

    fn choose_in_view(&mut self, info: &InformationSet) -> Result<Move, PlayerError> {
        self.best_move_in_view(info).ok_or(PlayerError::NoMove)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::{Color, Variant};

    #[test]
    fn explodes_the_king_when_it_can() {
        // Qxf7 explodes the g8 king.
        let pos =
            Position::from_fen("4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1", Variant::Atomic).unwrap();
        for seed in 0..8 {
            let m = GreedyPlayer::new(seed).best_move(&pos).unwrap();
            assert_eq!(pos.uci(m), "d5f7");
        }
    }

    #[test]
    fn prefers_the_capture_that_wins_most_material() {
        // Rxd5 destroys the queen on d5 and the knight on e5 (and the capturing rook);
        // Rxa5 only trades the rook for a pawn.
        let pos =
            Position::from_fen("6k1/8/8/p2qn3/8/8/8/R2R2K1 w - - 0 1", Variant::Atomic).unwrap();
        let m = GreedyPlayer::new(1).best_move(&pos).unwrap();
        assert_eq!(pos.uci(m), "d1d5");
    }

    #[test]
    fn detonates_when_that_wins_material_or_the_king_in_the_bomb_variant() {
        // White's bomb, the knight on d5, stands among Black's queen, rook and a pawn; a
        // capture takes at most one of them (Nxc7 the pawn, exposing nothing).
        let pos =
            Position::from_fen("4k3/2p5/2qr4/3N4/8/8/8/4K3 w - - 0 1 bombs:d5,c7", Variant::Bomb)
                .unwrap();
        let info = InformationSet::new(&pos, Color::White);
        for seed in 0..4 {
            let m = GreedyPlayer::new(seed).best_move_in_view(&info).unwrap();
            assert_eq!(m, Move::detonation(atomzero_rules::Square::D5));
        }
        // Next to the enemy king it blows it up.
        let pos = Position::from_fen("4k3/3N4/8/8/8/8/p7/4K3 w - - 0 1 bombs:d7,a2", Variant::Bomb)
            .unwrap();
        let info = InformationSet::new(&pos, Color::White);
        let m = GreedyPlayer::new(1).best_move_in_view(&info).unwrap();
        assert_eq!(m, Move::detonation(atomzero_rules::Square::D7));
        // Nothing to win: it keeps its bomb (never the detonation that only costs its own
        // knight).
        let pos = Position::from_fen("4k3/8/8/8/1N6/8/p7/4K3 w - - 0 1 bombs:b4,a2", Variant::Bomb)
            .unwrap();
        let info = InformationSet::new(&pos, Color::White);
        for seed in 0..8 {
            let m = GreedyPlayer::new(seed).best_move_in_view(&info).unwrap();
            assert!(!m.is_detonation(), "seed {seed}");
        }
    }

    #[test]
    fn never_self_destructs_in_nocheck_atomic() {
        // White's only capture, Qxe2, explodes the white king on e1 (a loss in nocheckatomic);
        // greedy must play a quiet move even though the capture wins material.
        let pos =
            Position::from_fen("4k3/8/8/8/8/8/4r3/3QK3 w - - 0 1", Variant::NoCheckAtomic).unwrap();
        for seed in 0..8 {
            let m = GreedyPlayer::new(seed).best_move(&pos).unwrap();
            let mut after = pos;
            after.play_unchecked(m);
            assert!(after.board().king_of(Color::White).is_some(), "{}", pos.uci(m));
        }
    }
}
