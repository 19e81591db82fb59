//! Features of a candidate for the opponent's bomb: one of its pieces, by origin, described
//! from what the player sees (the public history of the piece and the board now). Sparse:
//! `(index, value)` pairs over [`FEATURES`] indices, laid out as follows (squares and ranks
//! from the opponent's side, so both colours share weights):
//!
//! | index | feature |
//! |---|---|
//! | 0–63 | the origin square (one-hot) |
//! | 64–68 | the role at the choice: pawn, knight, bishop, rook, queen |
//! | 69–73 | the role now, if on the board |
//! | 74 | lost (captured or blown up): the opponent has no bomb if this was it |
//! | 75 | on the board and never moved |
//! | 76 | ln(1 + its moves) / 2 |
//! | 77–83 | on the board: king distance to the player's king, 1 to 7 (one-hot) |
//! | 84 | on the board: the player's pieces on the 8 squares around it, / 4 (what its blast would take) |
//! | 85 | on the board: the opponent's own pieces around it, / 4 |
//! | 86 | it made the opponent's last move |
//! | 87–94 | on the board: its rank (one-hot) |

use crate::info::{InformationSet, OriginRecord};
use atomzero_rules::{Role, attacks};

/// Number of feature indices.
pub const FEATURES: usize = 95;

const ORIGIN: usize = 0;
const FIRST_ROLE: usize = 64;
const ROLE_NOW: usize = 69;
const LOST: usize = 74;
const NEVER_MOVED: usize = 75;
const MOVES: usize = 76;
const KING_DISTANCE: usize = 77;
const PLAYER_NEIGHBOURS: usize = 84;
const OWN_NEIGHBOURS: usize = 85;
const MOVED_LAST: usize = 86;
const RANK: usize = 87;

fn role_index(role: Role) -> Option<usize> {
    match role {
        Role::Pawn => Some(0),
        Role::Knight => Some(1),
        Role::Bishop => Some(2),
        Role::Rook => Some(3),
        Role::Queen => Some(4),
        Role::King => None,
    }
}

/// The features of `piece`, one of the opponent's pieces in `info`, into `out` (cleared).
pub fn candidate_features(info: &InformationSet, piece: &OriginRecord, out: &mut Vec<(u16, f32)>) {
    out.clear();
    let viewer = info.viewer();
    let opponent = !viewer;
    let mut push = |index: usize, value: f32| {
        if value != 0.0 && index < FEATURES {
            out.push((index as u16, value));
        }
    };
    push(ORIGIN + piece.origin.relative_to(opponent).index(), 1.0);
    if let Some(r) = role_index(piece.first_role) {
        push(FIRST_ROLE + r, 1.0);
    }
    push(MOVES, (1.0 + f32::from(piece.moves)).ln() / 2.0);
    let last_ply = info.ply().checked_sub(1);
    if piece.last_moved.is_some() && piece.last_moved.map(usize::from) == last_ply {
        push(MOVED_LAST, 1.0);
    }
    let Some(square) = piece.square else {
        push(LOST, 1.0);
        return;
    };
    if let Some(r) = role_index(piece.role) {
        push(ROLE_NOW + r, 1.0);
    }
    if piece.moves == 0 {
        push(NEVER_MOVED, 1.0);
    }
    let board = info.view().board();
    if let Some(king) = board.king_of(viewer) {
        let distance = square.distance(king).clamp(1, 7) as usize;
        push(KING_DISTANCE + distance - 1, 1.0);
    }
    let ring = attacks::king_attacks(square);
    push(PLAYER_NEIGHBOURS, (ring & board.by_color(viewer)).count() as f32 / 4.0);
    push(OWN_NEIGHBOURS, (ring & board.by_color(opponent)).count() as f32 / 4.0);
    push(RANK + square.relative_to(opponent).rank().index() as usize, 1.0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::{Color, Position, Square, Variant};

    #[test]
    fn features_are_in_range_and_mirror_between_colours() {
        let setup = Position::new(Variant::Bomb);
        let mut pos = setup;
        let mut moves = Vec::new();
        for uci in ["@d1", "@d8", "e2e4", "e7e5"] {
            let m = pos.parse_uci(uci).unwrap();
            moves.push(m);
            pos = pos.play(m).unwrap();
        }
        let white = InformationSet::from_moves(&setup, &moves, Color::White).unwrap();
        moves.push(pos.parse_uci("g1f3").unwrap());
        let black = InformationSet::from_moves(&setup, &moves, Color::Black).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        // White looks at Black's queen, Black at White's: the same features but for the
        // distance to the (unmoved) kings, equal too, and who moved last.
        let queen_w = white.origins().unwrap().by_origin(Square::D8).unwrap();
        let queen_b = black.origins().unwrap().by_origin(Square::D1).unwrap();
        candidate_features(&white, queen_w, &mut a);
        candidate_features(&black, queen_b, &mut b);
        assert_eq!(a, b);
        assert!(a.iter().all(|&(i, v)| (i as usize) < FEATURES && v.is_finite()));
        assert!(a.contains(&((ORIGIN + Square::D1.index()) as u16, 1.0)));
        // The pawn that moved last (e7-e5, seen by White).
        let pawn = white.origins().unwrap().by_origin(Square::E7).unwrap();
        candidate_features(&white, pawn, &mut a);
        assert!(a.contains(&(MOVED_LAST as u16, 1.0)));
        assert!(!a.contains(&(NEVER_MOVED as u16, 1.0)));
    }
}
