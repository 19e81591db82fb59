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
//! | `bomb` (hidden information, see [`crate::bomb`]) | nothing: captures are standard chess; only a **detonation** (a move) explodes the mover's secret bomb: it and **every** piece (pawns and kings too) on the 8 neighbours | everyone, kings as in chess | standard chess (kings attack, adjacent kings impossible) | your king blown up by your own detonation: you lose; the enemy king alone: you win; both: draw; checkmate; stalemate (draw); bare kings; 50 moves; threefold (the bombs are part of the position) |
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
    /// Standard chess plus a secret bomb per side, detonated as a move (hidden information:
    /// see [`crate::bomb`]). Not in [`Variant::ALL`]: only the rules crate plays it so far.
    Bomb,
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
    /// Captures explode at all (false: standard chess captures, for the bomb variant).
    pub captures_explode: bool,
    /// Kings attack the squares around them as in standard chess (a king may not step next to
    /// the enemy king, touching kings do not nullify check). False in atomic, where kings
    /// never attack.
    pub kings_attack: bool,
    /// Each side has a secret bomb ([`crate::bomb`]): a setup phase in which each side chooses
    /// it, detonation moves, and the bombs in the position's state.
    pub hidden_bombs: bool,
}

/// [`Variant::rules`] of every variant, indexed by the variant's discriminant.
const RULES: [Rules; 6] = [
    Variant::Atomic.rules_of(),
    Variant::NoCheckAtomic.rules_of(),
    Variant::Atomar.rules_of(),
    Variant::Deathmatch.rules_of(),
    Variant::Pawnblast.rules_of(),
    Variant::Bomb.rules_of(),
];

impl Variant {
    /// Every perfect-information variant, the default first: the variants the whole workspace
    /// plays (self-play, training, matches, UCI). Its order is stable: the network encoding's
    /// variant planes and the replay format index it. [`Variant::Bomb`] is not in it (see
    /// [`Variant::EVERY`]).
    pub const ALL: [Variant; 5] = [
        Variant::Atomic,
        Variant::NoCheckAtomic,
        Variant::Atomar,
        Variant::Deathmatch,
        Variant::Pawnblast,
    ];

    /// Every variant the rules crate knows: [`Variant::ALL`], then the hidden-information
    /// [`Variant::Bomb`].
    pub const EVERY: [Variant; 6] = [
        Variant::Atomic,
        Variant::NoCheckAtomic,
        Variant::Atomar,
        Variant::Deathmatch,
        Variant::Pawnblast,
        Variant::Bomb,
    ];

    /// True for the variants of hidden information ([`Variant::Bomb`]): a [`crate::Position`]
    /// of such a variant is the full state, which no player sees (see [`crate::bomb`]).
    #[inline]
    pub const fn has_hidden_information(self) -> bool {
        matches!(self, Variant::Bomb)
    }

    /// `Ok(self)` for a variant of [`Variant::ALL`]; for the bomb variant, an error saying that
    /// `by` (a command or component, e.g. `atomzero selfplay`) does not support it yet. Every
    /// part of the workspace but the rules crate (and `atomzero perft`) calls this where it
    /// reads a variant, so that the bomb variant is refused rather than played as
    /// perfect-information chess.
    pub fn require_perfect_information(self, by: &str) -> Result<Variant, UnsupportedVariant> {
        if self.has_hidden_information() {
            Err(UnsupportedVariant { variant: self, by: by.to_string() })
        } else {
            Ok(self)
        }
    }

    /// The stable command-line / config / UCI name.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Atomic => "atomic",
            Variant::NoCheckAtomic => "nocheckatomic",
            Variant::Atomar => "atomar",
            Variant::Deathmatch => "deathmatch",
            Variant::Pawnblast => "pawnblast",
            Variant::Bomb => "bomb",
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
            Variant::Bomb => "Bomb",
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
            "bomb" | "bombchess" => Some(Variant::Bomb),
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
            captures_explode: true,
            kings_attack: false,
            hidden_bombs: false,
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
            // Standard chess captures and check; the detonation's blast takes pawns and kings.
            Variant::Bomb => Rules {
                king_captures: true,
                blast_destroys_pawns: true,
                insufficient_material: InsufficientMaterial::BareKings,
                captures_explode: false,
                kings_attack: true,
                hidden_bombs: true,
                ..atomic
            },
        }
    }

    /// A comma-separated list of all variant names ([`Variant::EVERY`]), for error messages.
    pub fn names() -> String {
        Variant::EVERY.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ")
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

/// A variant that a part of the workspace does not play (yet): see
/// [`Variant::require_perfect_information`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedVariant {
    /// The variant refused.
    pub variant: Variant,
    /// What refused it (a command or component).
    pub by: String,
}

impl fmt::Display for UnsupportedVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} variant is not supported by {} yet: it is a game of hidden information \
             (each side's bomb is secret) and would be played as perfect-information chess; \
             only the rules (`atomzero perft --variant {}`) know it so far (issue 26)",
            self.variant, self.by, self.variant
        )
    }
}

impl std::error::Error for UnsupportedVariant {}

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
        for v in Variant::EVERY {
            assert_eq!(v.rules(), v.rules_of(), "{v}");
        }
        assert!(!Variant::Bomb.rules().captures_explode && Variant::Bomb.rules().hidden_bombs);
        // The table is not the same entry five times.
        assert!(Variant::Atomic.rules().royal_kings && !Variant::Atomar.rules().royal_kings);
        assert!(Variant::Atomar.rules().kings_blast_immune);
        assert!(Variant::Pawnblast.rules().blast_destroys_pawns);
        assert!(Variant::Deathmatch.rules().kingless_play);
    }
}

#[cfg(test)]
mod bomb_tests {
    use super::*;

    #[test]
    fn bomb_parses_and_is_refused_by_perfect_information_callers() {
        assert_eq!("bomb".parse::<Variant>(), Ok(Variant::Bomb));
        assert_eq!(Variant::from_name("Bomb"), Some(Variant::Bomb));
        assert!(!Variant::ALL.contains(&Variant::Bomb));
        assert_eq!(Variant::EVERY[..5], Variant::ALL[..]);
        assert!(Variant::names().ends_with("pawnblast, bomb"));
        let e = Variant::Bomb.require_perfect_information("atomzero selfplay").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("the bomb variant is not supported by atomzero selfplay yet: "),
            "{text}"
        );
        for v in Variant::ALL {
            assert_eq!(v.require_perfect_information("x"), Ok(v));
        }
    }
}
