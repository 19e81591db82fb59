//! Short forced lines, proved at a leaf before the network sees it.
//!
//! Atomic games turn on king explosions a few plies deep, and a small network misjudges many
//! of them. [`loses_in_two`] proves that the side to move loses at once whatever it plays
//! (every legal move leaves an explosion of its king, the position's threat parried by
//! nothing); [`wins_in_three`] finds a move after which that is the opponent's fate (a quiet
//! move creating a threat nothing parries). The search marks such a leaf proven without
//! evaluating it, so its solver (MCTS-solver) carries the result up the tree.
//!
//! Both are sound and incomplete: a win here is an explosion of the king by one capture
//! ([`Position::winning_move`]), not a checkmate; a line reaching a drawn position
//! (`drawn`: repetition, fifty moves, insufficient material, as the search scores them)
//! escapes. Both try the cheap refutation first and stop at it: in a quiet position the
//! first move tried parries, so the check costs about one move generation.

use atomzero_rules::{Color, Move, MoveList, Position};

/// Scores a position reached by a short line as drawn or not. Arguments: the position and the
/// hashes of the positions of the line before it, the leaf's first (for repetitions).
pub type Drawn<'a> = &'a dyn Fn(&Position, &[u64]) -> bool;

/// Buffers for the two plies a check looks ahead (a [`MoveList`] is large: no allocation or
/// initialisation per leaf).
#[derive(Clone)]
pub struct Scratch {
    replies: MoveList,
    answers: MoveList,
    line: Vec<u64>,
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch { replies: MoveList::new(), answers: MoveList::new(), line: Vec::with_capacity(4) }
    }
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch").finish_non_exhaustive()
    }
}

/// Whether the side to move at `pos` (legal moves `moves`) loses in two plies whatever it
/// plays: after each move the opponent explodes its king at once. False without moves (the
/// game is over: the tree scores it).
pub fn loses_in_two(
    pos: &Position,
    moves: &[Move],
    drawn: Drawn<'_>,
    scratch: &mut Scratch,
) -> bool {
    scratch.line.clear();
    scratch.line.push(pos.hash());
    every_move_loses(pos, moves, drawn, &scratch.line, &mut scratch.replies)
}

/// A move of the side to move at `pos` (legal moves `moves`) after which the opponent loses
/// in two plies ([`loses_in_two`]): a win in three plies. Moves that end the game at once are
/// not looked at (the tree's instant-win check sees those).
pub fn wins_in_three(
    pos: &Position,
    moves: &[Move],
    drawn: Drawn<'_>,
    scratch: &mut Scratch,
) -> Option<Move> {
    let Scratch { replies, answers, line } = scratch;
    line.clear();
    line.push(pos.hash());
    for &m in moves {
        let mut after = *pos;
        after.play_unchecked(m);
        if after.variant_outcome().is_some() {
            continue;
        }
        after.legal_moves_into(replies);
        if replies.is_empty() || drawn(&after, line) {
            continue;
        }
        line.push(after.hash());
        let lost = every_move_loses(&after, replies, drawn, line, answers);
        line.pop();
        if lost {
            return Some(m);
        }
    }
    None
}

/// Whether every move in `moves` of the side to move at `pos` lets the opponent explode its
/// king at once. `line`: the hashes of the line's positions up to `pos`.
fn every_move_loses(
    pos: &Position,
    moves: &[Move],
    drawn: Drawn<'_>,
    line: &[u64],
    replies: &mut MoveList,
) -> bool {
    if moves.is_empty() {
        return false;
    }
    let us: Color = pos.turn();
    for &m in moves {
        let mut after = *pos;
        after.play_unchecked(m);
        if let Some(outcome) = after.variant_outcome() {
            if outcome.winner == Some(!us) {
                continue;
            }
            return false;
        }
        after.legal_moves_into(replies);
        // Checkmate or stalemate of the opponent, or a draw: this move escapes.
        if replies.is_empty() || drawn(&after, line) {
            return false;
        }
        if after.winning_move(replies).is_none() {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::Variant;

    fn position(fen: &str) -> Position {
        Position::from_fen(fen, Variant::Atomic).unwrap_or_else(|e| panic!("{fen}: {e}"))
    }

    fn never(_: &Position, _: &[u64]) -> bool {
        false
    }

    fn moves(pos: &Position) -> MoveList {
        pos.legal_moves()
    }

    /// A reference by brute force: every move, then every reply, checked with the rules alone.
    fn reference_loses_in_two(pos: &Position) -> bool {
        let ours = pos.legal_moves();
        !ours.is_empty()
            && ours.iter().all(|&m| {
                let after = pos.play(m).unwrap();
                if let Some(o) = after.outcome() {
                    return o.winner == Some(!pos.turn());
                }
                after.legal_moves().iter().any(|&r| {
                    let end = after.play(r).unwrap();
                    end.variant_outcome().is_some_and(|o| o.winner == Some(after.turn()))
                })
            })
    }

    /// Found by the random games below, checked by hand: after 7... Qh4 (threatening Qxf2,
    /// whose blast takes the king on e1) White has nothing that parries; one move earlier,
    /// Black to move wins in three plies with that move.
    const THREAT: &str = "rnb1kb1r/1p1p1ppp/p1p5/4p3/1n2PNPq/P2B4/1PPP1P1P/RNBQKR2 w Qkq - 1 8";
    const BEFORE_THREAT: &str =
        "rnbqkb1r/1p1p1ppp/p1p5/4p3/1n2PNP1/P2B4/1PPP1P1P/RNBQKR2 b Qkq - 0 7";

    #[test]
    fn a_threat_nothing_parries_loses_in_two() {
        let pos = position(THREAT);
        let ms = moves(&pos);
        assert!(pos.winning_move(&ms).is_none());
        assert!(loses_in_two(&pos, &ms, &never, &mut Scratch::default()));
        assert!(reference_loses_in_two(&pos));
        let before = position(BEFORE_THREAT);
        let ms = moves(&before);
        let m =
            wins_in_three(&before, &ms, &never, &mut Scratch::default()).expect("a win in three");
        assert!(reference_loses_in_two(&before.play(m).unwrap()));
        // The start position: nothing either way.
        let start = Position::new(Variant::Atomic);
        let ms = moves(&start);
        assert!(!loses_in_two(&start, &ms, &never, &mut Scratch::default()));
        assert_eq!(wins_in_three(&start, &ms, &never, &mut Scratch::default()), None);
    }

    #[test]
    fn agrees_with_brute_force_on_random_games() {
        // Random playouts from the start: every position's answer equals the brute force one,
        // and some positions of the sample are proven (the check is not vacuous).
        let mut proven = 0;
        let mut checked = 0;
        let mut rng = crate::rng::Rng::new(7);
        for _ in 0..60 {
            let mut pos = Position::new(Variant::Atomic);
            for _ in 0..80 {
                let ms = pos.legal_moves();
                if ms.is_empty() || pos.outcome().is_some() {
                    break;
                }
                if pos.winning_move(&ms).is_none() {
                    let got = loses_in_two(&pos, &ms, &never, &mut Scratch::default());
                    assert_eq!(got, reference_loses_in_two(&pos), "{}", pos.fen());
                    proven += usize::from(got);
                    checked += 1;
                    if let Some(m) = wins_in_three(&pos, &ms, &never, &mut Scratch::default()) {
                        let after = pos.play(m).unwrap();
                        assert!(reference_loses_in_two(&after), "{} {m:?}", pos.fen());
                    }
                }
                let i = rng.below(ms.len());
                pos.play_unchecked(ms[i]);
            }
        }
        assert!(checked > 1000, "{checked}");
        assert!(proven > 0, "no position of the sample loses in two");
    }

    #[test]
    fn a_draw_on_the_way_escapes() {
        let pos = position(THREAT);
        let ms = moves(&pos);
        let always = |_: &Position, _: &[u64]| true;
        assert!(!loses_in_two(&pos, &ms, &always, &mut Scratch::default()));
        let before = position(BEFORE_THREAT);
        let ms = moves(&before);
        assert_eq!(wins_in_three(&before, &ms, &always, &mut Scratch::default()), None);
    }
}
