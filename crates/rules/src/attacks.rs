//! Attack tables, all computed at compile time: steppers (pawn, knight, king) by table,
//! sliders (bishop, rook, queen) by fancy magic bitboards, and `between` rays.

use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::magics::{BISHOP_MAGICS, ROOK_MAGICS};
use crate::role::Role;
use crate::square::Square;

const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
const KNIGHT_DELTAS: [(i32, i32); 8] =
    [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)];
const KING_DELTAS: [(i32, i32); 8] =
    [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)];

const fn on_board(file: i32, rank: i32) -> bool {
    file >= 0 && file < 8 && rank >= 0 && rank < 8
}

const fn step_table(deltas: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (file, rank) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut i = 0;
        while i < deltas.len() {
            let (f, r) = (file + deltas[i].0, rank + deltas[i].1);
            if on_board(f, r) {
                table[sq] |= 1 << (r * 8 + f);
            }
            i += 1;
        }
        sq += 1;
    }
    table
}

/// Ray-walking slider attacks: the slow reference used to fill the magic tables.
const fn slide(sq: usize, occupied: u64, dirs: &[(i32, i32); 4]) -> u64 {
    let mut attacks = 0;
    let mut d = 0;
    while d < 4 {
        let (mut f, mut r) = ((sq % 8) as i32 + dirs[d].0, (sq / 8) as i32 + dirs[d].1);
        while on_board(f, r) {
            let bit = 1u64 << (r * 8 + f);
            attacks |= bit;
            if occupied & bit != 0 {
                break;
            }
            f += dirs[d].0;
            r += dirs[d].1;
        }
        d += 1;
    }
    attacks
}

/// Relevant occupancy mask: the rays without their last square.
const fn relevant_mask(sq: usize, dirs: &[(i32, i32); 4]) -> u64 {
    let mut mask = 0;
    let mut d = 0;
    while d < 4 {
        let (mut f, mut r) = ((sq % 8) as i32 + dirs[d].0, (sq / 8) as i32 + dirs[d].1);
        while on_board(f + dirs[d].0, r + dirs[d].1) {
            mask |= 1u64 << (r * 8 + f);
            f += dirs[d].0;
            r += dirs[d].1;
        }
        d += 1;
    }
    mask
}

#[derive(Copy, Clone)]
struct Magic {
    mask: u64,
    factor: u64,
    shift: u32,
    offset: usize,
}

const fn magic_entries(dirs: &[(i32, i32); 4], factors: &[u64; 64], base: usize) -> [Magic; 64] {
    let mut magics = [Magic { mask: 0, factor: 0, shift: 0, offset: 0 }; 64];
    let mut offset = base;
    let mut sq = 0;
    while sq < 64 {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        magics[sq] = Magic { mask, factor: factors[sq], shift: 64 - bits, offset };
        offset += 1 << bits;
        sq += 1;
    }
    magics
}

const fn table_len(magics: &[Magic; 64]) -> usize {
    magics[63].offset + (1 << (64 - magics[63].shift)) - magics[0].offset
}

static ROOK_MAGIC: [Magic; 64] = magic_entries(&ROOK_DIRS, &ROOK_MAGICS, 0);
const ROOK_TABLE_LEN: usize = table_len(&magic_entries(&ROOK_DIRS, &ROOK_MAGICS, 0));
static BISHOP_MAGIC: [Magic; 64] = magic_entries(&BISHOP_DIRS, &BISHOP_MAGICS, ROOK_TABLE_LEN);
const SLIDER_TABLE_LEN: usize =
    ROOK_TABLE_LEN + table_len(&magic_entries(&BISHOP_DIRS, &BISHOP_MAGICS, 0));

const fn fill(table: &mut [u64; SLIDER_TABLE_LEN], magics: &[Magic; 64], dirs: &[(i32, i32); 4]) {
    let mut sq = 0;
    while sq < 64 {
        let m = magics[sq];
        // Enumerate every subset of the mask (carry-rippler), starting from the empty set.
        let mut subset: u64 = 0;
        loop {
            let index = m.offset + (subset.wrapping_mul(m.factor) >> m.shift) as usize;
            let attacks = slide(sq, subset, dirs);
            // A collision with different attacks would mean a bad magic: fail the build.
            assert!(table[index] == 0 || table[index] == attacks, "bad magic");
            table[index] = attacks;
            subset = subset.wrapping_sub(m.mask) & m.mask;
            if subset == 0 {
                break;
            }
        }
        sq += 1;
    }
}

#[allow(long_running_const_eval)]
static SLIDER_ATTACKS: [u64; SLIDER_TABLE_LEN] = {
    let mut table = [0u64; SLIDER_TABLE_LEN];
    fill(&mut table, &ROOK_MAGIC, &ROOK_DIRS);
    fill(&mut table, &BISHOP_MAGIC, &BISHOP_DIRS);
    table
};

static KNIGHT_ATTACKS: [u64; 64] = step_table(&KNIGHT_DELTAS);
static KING_ATTACKS: [u64; 64] = step_table(&KING_DELTAS);
static PAWN_ATTACKS: [[u64; 64]; 2] =
    [step_table(&[(1, 1), (-1, 1)]), step_table(&[(1, -1), (-1, -1)])];

/// `BETWEEN[a][b]`: squares strictly between `a` and `b` if they share a line, else empty.
static BETWEEN: [[u64; 64]; 64] = {
    let mut table = [[0u64; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let dirs = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)];
        let mut d = 0;
        while d < 8 {
            let (df, dr): (i32, i32) = dirs[d];
            let (mut f, mut r) = ((a % 8) as i32 + df, (a / 8) as i32 + dr);
            let mut between = 0u64;
            while on_board(f, r) {
                let b = (r * 8 + f) as usize;
                table[a][b] = between;
                between |= 1 << b;
                f += df;
                r += dr;
            }
            d += 1;
        }
        a += 1;
    }
    table
};

/// Squares a knight on `sq` attacks.
#[inline]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT_ATTACKS[sq.index()])
}

/// Squares a king on `sq` attacks: the 8 neighbours, which is also the blast ring of a capture on `sq`.
#[inline]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING_ATTACKS[sq.index()])
}

/// Squares a pawn of `color` on `sq` attacks.
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN_ATTACKS[color.index()][sq.index()])
}

#[inline]
fn magic_lookup(magic: &Magic, occupied: Bitboard) -> Bitboard {
    let index = magic.offset
        + ((occupied.0 & magic.mask).wrapping_mul(magic.factor) >> magic.shift) as usize;
    Bitboard(SLIDER_ATTACKS[index])
}

/// Squares a rook on `sq` attacks, given the occupied squares.
#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&ROOK_MAGIC[sq.index()], occupied)
}

/// Squares a bishop on `sq` attacks, given the occupied squares.
#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&BISHOP_MAGIC[sq.index()], occupied)
}

/// Squares a queen on `sq` attacks, given the occupied squares.
#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Squares a piece of `role` and `color` on `sq` attacks.
pub fn attacks(role: Role, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => pawn_attacks(color, sq),
        Role::Knight => knight_attacks(sq),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => queen_attacks(sq, occupied),
        Role::King => king_attacks(sq),
    }
}

/// Squares strictly between `a` and `b` on a rank, file or diagonal; empty if not aligned.
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN[a.index()][b.index()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_lookups_match_ray_walking() {
        // Pseudo-random occupancies for every square.
        let mut state = 0x1234_5678_9ABC_DEF1u64;
        for sq in Square::ALL {
            for _ in 0..200 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let occ = state & (state >> 3);
                assert_eq!(rook_attacks(sq, Bitboard(occ)).0, slide(sq.index(), occ, &ROOK_DIRS));
                assert_eq!(
                    bishop_attacks(sq, Bitboard(occ)).0,
                    slide(sq.index(), occ, &BISHOP_DIRS)
                );
            }
        }
    }

    #[test]
    fn stepper_tables() {
        assert_eq!(knight_attacks(Square::A1).count(), 2);
        assert_eq!(knight_attacks(Square::D4).count(), 8);
        assert_eq!(king_attacks(Square::A1).count(), 3);
        assert_eq!(king_attacks(Square::E4).count(), 8);
        assert_eq!(pawn_attacks(Color::White, Square::E2), Bitboard::from(Square::D3) | Square::F3);
        assert_eq!(pawn_attacks(Color::Black, Square::A7), Bitboard::from(Square::B6));
        assert_eq!(between(Square::A1, Square::D4), Bitboard::from(Square::B2) | Square::C3);
        assert_eq!(between(Square::A1, Square::B3), Bitboard::EMPTY);
        assert_eq!(between(Square::E1, Square::H1), Bitboard::from(Square::F1) | Square::G1);
    }
}
