//! Mate distances: how many plies a forced win takes, for reporting a proven result as
//! `score mate N` (UCI) or `#N` (PGN).
//!
//! The MCTS-solver proves that a position is won or lost (`Search::root_proven`) but not how
//! fast: the proof is whatever subtree the search happened to complete, and its principal
//! variation follows visits, not the shortest line. [`mate_distance`] finds the exact
//! distance with a small depth-first search on the rules alone, by iterative deepening:
//!
//! - a position is **won within `p` plies** (`p` odd) if the side to move has a move that ends
//!   the game in its favour (an explosion of the enemy king, a checkmate, a variant's win) or,
//!   with `p ≥ 3`, a move after which the opponent is lost within `p − 1` plies;
//! - a position is **lost within `p` plies** (`p` even) if the game is over and lost for the
//!   side to move, or every move of the side to move leads to a position won by the opponent
//!   within `p − 1` plies.
//!
//! The winner's distance is the smallest `p` for which the position is won (Stockfish's and
//! Fairy-Stockfish's `mate N` with `N = (p + 1) / 2` moves); the loser's is the smallest `p`
//! for which it is lost (the longest defence, `mate −p/2`). Draws a game's history could claim
//! (repetitions) are not seen; the 50-move rule and the variant's other draws are.
//!
//! The search is exact but exponential, so it stops after a node budget ([`MateLimits`]) and
//! answers `None`: callers then fall back to what the search tree knows. It plays 5–10
//! million positions a second on one core; on the 36 positions of
//! `tests/data/fsf-mates.txt` a mate in one took at most 100 positions, a mate in two (or
//! being mated in two) at most 6,400, mates in three 3,200 to 204,800 (44 ms). Pure: no I/O,
//! no threads.

use atomzero_rules::{Color, MoveList, Outcome, Position};

/// Bounds of one mate-distance search.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MateLimits {
    /// The longest distance looked for, in plies.
    pub max_plies: u32,
    /// Positions played at most (summed over all the depths tried) before giving up.
    pub max_nodes: u64,
}

impl Default for MateLimits {
    /// Mates in up to five moves, within 500,000 positions (under 0.1 s).
    fn default() -> MateLimits {
        MateLimits { max_plies: 10, max_nodes: 500_000 }
    }
}

/// A forced result and its distance.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mate {
    /// The side to move wins in this many plies (odd, at least 1).
    Wins(u32),
    /// The side to move loses in this many plies (even; 0: the game is over and lost).
    Loses(u32),
}

impl Mate {
    /// The UCI convention (Stockfish's): moves of the side to move, positive when it mates,
    /// negative when it is mated (`mate 0` is not used by UCI engines: a finished game is
    /// `Loses(0)`, which gives 0).
    pub fn uci_moves(self) -> i32 {
        match self {
            Mate::Wins(plies) => i32::try_from(plies.div_ceil(2)).unwrap_or(i32::MAX),
            Mate::Loses(plies) => -i32::try_from(plies / 2).unwrap_or(i32::MAX),
        }
    }

    /// The distance in plies.
    pub fn plies(self) -> u32 {
        match self {
            Mate::Wins(p) | Mate::Loses(p) => p,
        }
    }

    /// The same result one ply earlier, seen by the side that moved into this position.
    pub fn before(self) -> Mate {
        match self {
            Mate::Wins(p) => Mate::Loses(p + 1),
            Mate::Loses(p) => Mate::Wins(p + 1),
        }
    }
}

/// The exact distance of the forced result of `pos`, looked for in the direction given:
/// `winning` true to ask how fast the side to move wins, false how long it can hold out
/// before it loses. `None` if the result was not found within `limits` (or the position is
/// not decided that way).
pub fn mate_distance(pos: &Position, winning: bool, limits: MateLimits) -> Option<Mate> {
    let mut solver = Solver { nodes: 0, max_nodes: limits.max_nodes };
    let mut moves = MoveList::new();
    if let Some(outcome) = status(pos, &mut moves) {
        let lost = outcome.winner == Some(!pos.turn());
        return (lost && !winning).then_some(Mate::Loses(0));
    }
    if winning {
        for plies in (1..=limits.max_plies).step_by(2) {
            if solver.wins_within(pos, &moves, plies)? {
                return Some(Mate::Wins(plies));
            }
        }
    } else {
        for plies in (2..=limits.max_plies).step_by(2) {
            if solver.loses_within(pos, &moves, plies)? {
                return Some(Mate::Loses(plies));
            }
        }
    }
    None
}

/// The game's end in `pos` (as [`Position::outcome`]), with the legal moves left in `moves`
/// for the caller (generated once).
fn status(pos: &Position, moves: &mut MoveList) -> Option<Outcome> {
    if let Some(outcome) = pos.variant_outcome() {
        moves.clear();
        return Some(outcome);
    }
    pos.legal_moves_into(moves);
    if moves.is_empty() || pos.is_insufficient_material() || pos.halfmoves() >= 100 {
        return pos.outcome();
    }
    None
}

struct Solver {
    nodes: u64,
    max_nodes: u64,
}

impl Solver {
    /// Counts one position; `None` once the budget is spent.
    fn visit(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= self.max_nodes).then_some(())
    }

    /// Whether the side to move in `pos` (whose legal `moves` are given; the game is not
    /// over) can force a win within `plies` plies (odd).
    fn wins_within(&mut self, pos: &Position, moves: &MoveList, plies: u32) -> Option<bool> {
        let us: Color = pos.turn();
        // Captures first: in atomic they are the moves that end games.
        let ordered = moves
            .iter()
            .filter(|&&m| pos.is_capture(m))
            .chain(moves.iter().filter(|&&m| !pos.is_capture(m)));
        let mut replies = MoveList::new();
        for &m in ordered {
            self.visit()?;
            let mut after = *pos;
            after.play_unchecked(m);
            if plies == 1 {
                // Only a move that ends the game can win at once: an exploded or captured
                // king (no legal moves needed to see it) or a checkmate.
                if let Some(o) = after.variant_outcome() {
                    if o.winner == Some(us) {
                        return Some(true);
                    }
                    continue;
                }
                if after.is_check() && after.is_checkmate() {
                    return Some(true);
                }
                continue;
            }
            match status(&after, &mut replies) {
                Some(o) if o.winner == Some(us) => return Some(true),
                Some(_) => {}
                None => {
                    if self.loses_within(&after, &replies, plies - 1)? {
                        return Some(true);
                    }
                }
            }
        }
        Some(false)
    }

    /// Whether the side to move in `pos` (whose legal `moves` are given; the game is not
    /// over) loses within `plies` plies (even, at least 2) whatever it plays.
    fn loses_within(&mut self, pos: &Position, moves: &MoveList, plies: u32) -> Option<bool> {
        let them = !pos.turn();
        let mut replies = MoveList::new();
        for &m in moves.iter() {
            self.visit()?;
            let mut after = *pos;
            after.play_unchecked(m);
            match status(&after, &mut replies) {
                Some(o) if o.winner == Some(them) => {}
                // A win or a draw for the side to move: not lost.
                Some(_) => return Some(false),
                None => {
                    if !self.wins_within(&after, &replies, plies - 1)? {
                        return Some(false);
                    }
                }
            }
        }
        Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::Variant;

    fn atomic(fen: &str) -> Position {
        Position::from_fen(fen, Variant::Atomic).unwrap()
    }

    #[test]
    fn uci_moves_follow_stockfish() {
        assert_eq!(Mate::Wins(1).uci_moves(), 1);
        assert_eq!(Mate::Wins(3).uci_moves(), 2);
        assert_eq!(Mate::Loses(2).uci_moves(), -1);
        assert_eq!(Mate::Loses(4).uci_moves(), -2);
        assert_eq!(Mate::Loses(0).uci_moves(), 0);
        assert_eq!(Mate::Wins(3).before(), Mate::Loses(4));
        assert_eq!(Mate::Loses(2).before(), Mate::Wins(3));
    }

    #[test]
    fn a_capture_next_to_the_king_is_mate_in_one() {
        // Qxd7 explodes the king on e8.
        let pos = atomic("4k3/3p4/8/8/8/8/8/3QK3 w - - 0 1");
        assert_eq!(mate_distance(&pos, true, MateLimits::default()), Some(Mate::Wins(1)));
        // Black to move in the same position is not winning: no answer that way.
        let flipped = atomic("4k3/3p4/8/8/8/8/8/3QK3 b - - 0 1");
        assert_eq!(mate_distance(&flipped, true, MateLimits::default()), None);
    }

    #[test]
    fn the_loser_counts_its_longest_defence() {
        // White to move is blown up next move whatever it plays (Fairy-Stockfish: mate -1).
        let pos = atomic("1rb1kb2/p1p2r2/Bn4p1/2P3Pp/3p3P/PP2P3/1R1PKP2/2BQ4 w - - 0 22");
        assert_eq!(mate_distance(&pos, false, MateLimits::default()), Some(Mate::Loses(2)));
        assert_eq!(mate_distance(&pos, true, MateLimits::default()), None);
        // A finished game (the white king has exploded) is lost in zero plies.
        let over = atomic("rnbqkbnr/ppp2ppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w kq - 0 5");
        assert_eq!(mate_distance(&over, false, MateLimits::default()), Some(Mate::Loses(0)));
        assert_eq!(mate_distance(&over, true, MateLimits::default()), None);
    }

    #[test]
    fn the_budget_gives_up_instead_of_running_on() {
        let pos = Position::new(Variant::Atomic);
        let limits = MateLimits { max_plies: 10, max_nodes: 5_000 };
        assert_eq!(mate_distance(&pos, true, limits), None);
    }
}
