//! Attack tables, all computed at compile time: steppers (pawn, knight, king) by table,
//! bishops by fancy magic bitboards (a 42 KB table), rooks by hyperbola quintessence on the
//! file and a 512-byte table for the rank, and `between` rays.
//!
//! Rooks had fancy magics too, but their 800 KB table does not stay in the cache next to a
//! search's trees: its misses were the largest single stall of move generation in the search
//! (perf sampling). Without it the tree bench had 14% fewer simulated cache misses for 2.8%
//! more instructions, and ran 0–7% faster in interleaved runs (more when the machine was
//! busy). Perft, whose tables stay in the cache, lost ~5% (3.9x shakmaty's speed before,
//! 3.7x after).

use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::magics::BISHOP_MAGICS;
use crate::role::Role;
use crate::square::Square;

#[cfg(test)]
const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
/// Along the rank only (each direction twice: `slide` takes four).
const RANK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (1, 0), (-1, 0)];
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

/// Ray-walking slider attacks: the slow reference that fills the tables.
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

static BISHOP_MAGIC: [Magic; 64] = magic_entries(&BISHOP_DIRS, &BISHOP_MAGICS, 0);
const BISHOP_TABLE_LEN: usize = table_len(&BISHOP_MAGIC);

const fn fill(table: &mut [u64; BISHOP_TABLE_LEN], magics: &[Magic; 64], dirs: &[(i32, i32); 4]) {
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
static BISHOP_ATTACKS: [u64; BISHOP_TABLE_LEN] = {
    let mut table = [0u64; BISHOP_TABLE_LEN];
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

/// Squares attacked by pawns of `color` standing on `pawns`, all at once.
#[inline]
pub fn pawn_attacks_set(color: Color, pawns: Bitboard) -> Bitboard {
    const NOT_A: u64 = !0x0101_0101_0101_0101;
    const NOT_H: u64 = !0x8080_8080_8080_8080;
    let b = pawns.0;
    Bitboard(match color {
        Color::White => ((b & NOT_A) << 7) | ((b & NOT_H) << 9),
        Color::Black => ((b & NOT_A) >> 9) | ((b & NOT_H) >> 7),
    })
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
    Bitboard(BISHOP_ATTACKS[index])
}

/// Attacks along a rank from each file, for each occupancy of the six inner squares.
static RANK_ATTACKS: [[u8; 64]; 8] = {
    let mut t = [[0u8; 64]; 8];
    let mut file = 0;
    while file < 8 {
        let mut occ = 0;
        while occ < 64 {
            t[file][occ] = slide(file, (occ as u64) << 1, &RANK_DIRS) as u8;
            occ += 1;
        }
        file += 1;
    }
    t
};

/// Squares a rook on `sq` attacks, given the occupied squares: the file by hyperbola
/// quintessence (the blockers above by subtraction, those below by the same on the
/// byte-swapped board, which flips the ranks), the rank from a 512-byte table indexed by the
/// rank's six inner squares.
#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    let i = sq.index();
    let s = 1u64 << i;
    // The file without the rook's own square.
    let mask = (0x0101_0101_0101_0101u64 << (i & 7)) ^ s;
    let o = occupied.0 & mask;
    let up = o.wrapping_sub(s.wrapping_mul(2));
    let down = o.swap_bytes().wrapping_sub(s.swap_bytes().wrapping_mul(2)).swap_bytes();
    let file = (up ^ down) & mask;
    let rank_shift = i & !7;
    let inner = ((occupied.0 >> (rank_shift + 1)) & 63) as usize;
    let rank = u64::from(RANK_ATTACKS[i & 7][inner]) << rank_shift;
    Bitboard(file | rank)
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
    fn set_pawn_attacks_are_the_union_of_each_pawns() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for k in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Sparse and dense sets, edge files included.
            let pawns = Bitboard(if k % 2 == 0 { x & (x >> 11) } else { x });
            for color in Color::ALL {
                let each = pawns
                    .into_iter()
                    .fold(Bitboard::EMPTY, |acc, sq| acc | pawn_attacks(color, sq));
                assert_eq!(pawn_attacks_set(color, pawns), each, "{color:?} {:#x}", pawns.0);
            }
        }
    }

    #[test]
    fn slider_attacks_match_ray_walking() {
        // Pseudo-random occupancies of two densities for every square, and the empty and
        // full boards.
        let mut state = 0x1234_5678_9ABC_DEF1u64;
        for sq in Square::ALL {
            for k in 0..402 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let occ = match k {
                    0 => 0,
                    1 => u64::MAX,
                    _ if k % 2 == 0 => state & (state >> 3),
                    _ => state,
                };
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
