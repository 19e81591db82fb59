//! Atomic rule variants as data.
//!
//! Move generation and game-end detection read one [`Rules`] value; no variant has its own move
//! generator. Every variant has a stable name used on the command line, in configs, in UCI's
//! `UCI_Variant` and (capitalised) in PGN's `[Variant]` tag.
//!
//! | variant | what explodes on a capture | who may capture | check | what ends the game |
//! |---|---|---|---|---|
//! | `atomic` (lichess) | capturer, captured piece, every non-pawn on the 8 neighbours | everyone but kings | yes; adjacent kings nullify it; exploding the enemy king beats check | king exploded, checkmate, stalemate (draw), lichess insufficient material, 50 moves, threefold |
//! | `nocheckatomic` (ICC, Fairy-Stockfish) | as atomic | everyone, kings too (exploding themselves) | no: every move is legal, castling ignores attacks | your king gone: you lose; a move that removes both kings loses for the mover; no moves: draw; bare kings; 50 moves; threefold |
//! | `atomar` (Fairy-Stockfish) | as atomic, but kings are immune to blasts | everyone; a king may capture (it survives its own blast) but never the enemy king | no | king captured (by a non-king piece): you lose; no moves: draw; king vs king; 50 moves; threefold |
//! | `deathmatch` | as atomic | as `nocheckatomic` | no | as `nocheckatomic`, except that a move removing **both** kings does not end the game: play goes on without kings until a side has no pieces left (it loses) or the last explosion clears the board (draw); no moves: draw |
//! | `pawnblast` | capturer, captured piece and **every** piece (pawns too) on the 8 neighbours; a **pawn's** capture does not explode (ordinary capture, en passant included) | everyone but kings | as atomic | as atomic (lichess insufficient-material rules applied unchanged) |
//!
//! Details shared by all variants: the en-passant blast is centred on the square the capturing
//! pawn lands on; an exploded rook loses its castling right and an exploded king both rights;
//! capture-promotions are four distinct moves even when the promoted piece explodes at once.

use std::fmt;
use std::str::FromStr;

/// A rule set.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Variant {
    /// Lichess atomic: the default.
    #[default]
    Atomic,
    /// ICC atomic without check.
    NoCheckAtomic,
    /// Atomar: kings immune to blasts, kings may capture.
    Atomar,
    /// No-check atomic where play continues without kings after a double king explosion.
    Deathmatch,
    /// Atomic where blasts kill pawns and pawn captures do not explode.
    Pawnblast,
}

/// How insufficient material is judged.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum InsufficientMaterial {
    /// Lichess/scalachess atomic rules (see [`crate::Position::is_insufficient_material`]).
    Lichess,
    /// Only two bare kings are a draw.
    BareKings,
}

/// The rule switches that move generation and game-end detection read.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Rules {
    /// Kings are royal: a move may not leave the mover's king attacked (adjacent kings excepted)
    /// nor explode it, checkmate exists, and castling may not pass through attacked squares.
    pub royal_kings: bool,
    /// Kings may make capturing moves.
    pub king_captures: bool,
    /// A king may capture the enemy king.
    pub king_captures_king: bool,
    /// Kings survive blasts (but not being captured).
    pub kings_blast_immune: bool,
    /// Blasts destroy pawns on the 8 neighbouring squares too.
    pub blast_destroys_pawns: bool,
    /// Captures made by pawns explode.
    pub pawn_captures_explode: bool,
    /// A move that removes both kings lets the game go on without kings.
    pub kingless_play: bool,
    /// The insufficient-material rule.
    pub insufficient_material: InsufficientMaterial,
}

/// [`Variant::rules`] of every variant, indexed by the variant's discriminant.
const RULES: [Rules; 5] = [
    Variant::Atomic.rules_of(),
    Variant::NoCheckAtomic.rules_of(),
    Variant::Atomar.rules_of(),
    Variant::Deathmatch.rules_of(),
    Variant::Pawnblast.rules_of(),
];

impl Variant {
    /// Every variant, the default first.
    pub const ALL: [Variant; 5] = [
        Variant::Atomic,
        Variant::NoCheckAtomic,
        Variant::Atomar,
        Variant::Deathmatch,
        Variant::Pawnblast,
    ];

    /// The stable command-line / config / UCI name.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Atomic => "atomic",
            Variant::NoCheckAtomic => "nocheckatomic",
            Variant::Atomar => "atomar",
            Variant::Deathmatch => "deathmatch",
            Variant::Pawnblast => "pawnblast",
        }
    }

    /// The name written in PGN's `[Variant]` tag (lichess writes `Atomic`).
    pub const fn pgn_name(self) -> &'static str {
        match self {
            Variant::Atomic => "Atomic",
            Variant::NoCheckAtomic => "Nocheckatomic",
            Variant::Atomar => "Atomar",
            Variant::Deathmatch => "Deathmatch",
            Variant::Pawnblast => "Pawnblast",
        }
    }

    /// Parses a name in any case, also the PGN spellings (`Atomic960` counts as atomic).
    pub fn from_name(name: &str) -> Option<Variant> {
        let lower = name.trim().to_ascii_lowercase().replace([' ', '-', '_'], "");
        let lower = lower.strip_suffix("960").unwrap_or(&lower);
        match lower {
            "atomic" | "atomicchess" => Some(Variant::Atomic),
            "nocheckatomic" => Some(Variant::NoCheckAtomic),
            "atomar" => Some(Variant::Atomar),
            "deathmatch" | "deathmatchatomic" => Some(Variant::Deathmatch),
            "pawnblast" | "pawnblastatomic" => Some(Variant::Pawnblast),
            _ => None,
        }
    }

    /// The rule switches of this variant (one load from a table: move generation asks for
    /// them several times per position).
    #[inline]
    pub const fn rules(self) -> Rules {
        RULES[self as usize]
    }

    /// The rule switches of this variant, spelled out.
    const fn rules_of(self) -> Rules {
        let atomic = Rules {
            royal_kings: true,
            king_captures: false,
            king_captures_king: false,
            kings_blast_immune: false,
            blast_destroys_pawns: false,
            pawn_captures_explode: true,
            kingless_play: false,
            insufficient_material: InsufficientMaterial::Lichess,
        };
        let nocheck = Rules {
            royal_kings: false,
            king_captures: true,
            king_captures_king: true,
            insufficient_material: InsufficientMaterial::BareKings,
            ..atomic
        };
        match self {
            Variant::Atomic => atomic,
            Variant::NoCheckAtomic => nocheck,
            Variant::Atomar => {
                Rules { kings_blast_immune: true, king_captures_king: false, ..nocheck }
            }
            Variant::Deathmatch => Rules { kingless_play: true, ..nocheck },
            Variant::Pawnblast => {
                Rules { blast_destroys_pawns: true, pawn_captures_explode: false, ..atomic }
            }
        }
    }

    /// A comma-separated list of all variant names, for error messages.
    pub fn names() -> String {
        Variant::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown variant name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownVariant(pub String);

impl fmt::Display for UnknownVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown variant '{}' (valid: {})", self.0, Variant::names())
    }
}

impl std::error::Error for UnknownVariant {}

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        Variant::from_name(s).ok_or_else(|| UnknownVariant(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_table_matches_the_spelled_out_rules() {
        for v in Variant::ALL {
            assert_eq!(v.rules(), v.rules_of(), "{v}");
        }
        // The table is not the same entry five times.
        assert!(Variant::Atomic.rules().royal_kings && !Variant::Atomar.rules().royal_kings);
        assert!(Variant::Atomar.rules().kings_blast_immune);
        assert!(Variant::Pawnblast.rules().blast_destroys_pawns);
        assert!(Variant::Deathmatch.rules().kingless_play);
    }
}
