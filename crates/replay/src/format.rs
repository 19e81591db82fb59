//! Records and the on-disk layout of a shard (format version 5; versions 1 to 4 are still
//! read). All integers little-endian.
//!
//! ```text
//! offset size  field
//! 0      8     magic "AZREPLAY"
//! 8      4     format_version (u32) = 5
//! 12     4     n_games (u32)
//! 16     4     n_targets (u32): moves recorded as training targets, over all games
//! 20     4     meta_len (u32): length of the JSON metadata that follows
//! 24     8     payload_len (u64): length of the compressed payload
//! 32     4     payload_crc32 (u32): CRC-32 (IEEE) of the compressed payload bytes
//! 36     n     meta: UTF-8 JSON, [`ShardMeta`]
//! 36+n   4     header_crc32 (u32): CRC-32 of bytes 0 .. 36+n
//! 40+n   p     payload: zlib (deflate) stream of n_games game records
//! ```
//!
//! A game record (inside the payload):
//!
//! ```text
//! variant      u8   index into Variant::EVERY (atomic 0, nocheckatomic 1, atomar 2, deathmatch 3,
//!                   pawnblast 4, bomb 5; bomb from format 4)
//! flags        u8   bit 0: Chess960 castling; bit 1: resignation was disabled (played out);
//!                   bit 2: a resignation point is recorded
//! fen_len      u16  then fen_len bytes: the start position's FEN (UTF-8), or `balanced` for
//!                   the Balanced start's setup position (format 3); its first move is then
//!                   White's removal (a move with from == to, see atomzero_rules::Move::removal)
//! winner       u8   0 White, 1 Black, 2 draw
//! reason       u8   see EndReason::code
//! resign_ply   u16  ply at which resignation first triggered (only if flags bit 2)
//! resign_side  u8   0 White, 1 Black: the side that would have resigned (only if flags bit 2)
//! n_moves      u16
//! n_moves move records:
//!   move       u16  atomzero_rules::Move::to_u16
//!   has_target u8   0 or 1
//!   if has_target:
//!     root_wdl 3×f32  the search's root value (win, draw, loss) for the side to move
//!     surprise f32    (format 5) the policy surprise: KL(policy target ‖ the priors the
//!                     search started from), in nats, ≥ 0; −1 where it was not measured
//!     n_policy u16    then n_policy × (move u16, weight f32): the search's policy target,
//!                     moves with a positive weight (weights need not sum to 1; the trainer
//!                     normalises them)
//! ```
//!
//! A game of the bomb variant (format 4) is stored whole: its start FEN has the bombs field
//! (`... bombs:?,?` for the setup phase), and its moves include both sides' bomb choices
//! (plies 1 and 2), which are known once the game is over. What a training input may see is
//! decided when it is built, not stored: the trainer encodes each target from its side to
//! move's view only (`atomzero_encoding`'s bomb planes read the mover's own bomb and what is
//! public of the other; the repetition count is the one the mover sees,
//! `atomzero_rules::view_repetitions`, which [`crate::window::ReplayWindow::get`] gives), and
//! the opponent's choice serves only as the label of the belief over it
//! (`atomzero_belief::samples_from_game`). The policy target of a bomb-variant move is the
//! determinized search's aggregate (`atomzero_pimc::Pimc::policy`), computed from the mover's
//! information set alone.
//!
//! Version 1 stored `(move u16, visits u32)` pairs, the root's visit counts, in place of the
//! weights; a version-1 shard reads as weights equal to those counts. Version 2 is version 3
//! without the `balanced` start (its FEN field is always a FEN). Version 3 is version 4
//! without the bomb variant (its variant byte is at most 4). Version 4 is version 5 without
//! the policy surprise (its targets read as not measured).

use atomzero_rules::{Color, Move, Termination, Variant};
use serde::{Deserialize, Serialize};

/// Shard file magic.
pub const MAGIC: &[u8; 8] = b"AZREPLAY";
/// Current shard format version (written).
pub const FORMAT_VERSION: u32 = 5;
/// The oldest version still read.
pub const OLDEST_FORMAT_VERSION: u32 = 1;
/// Bytes of the fixed header before the metadata.
pub const FIXED_HEADER: usize = 36;

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// A rule ended it (explosion, mate, draw rules...).
    Rules(Termination),
    /// A side resigned (its value fell below the resignation threshold).
    Resignation,
    /// The maximum game length was reached (adjudicated draw).
    MaxLength,
}

impl EndReason {
    /// The byte stored in a record.
    pub fn code(self) -> u8 {
        match self {
            EndReason::Rules(t) => Termination::ALL.iter().position(|&x| x == t).unwrap_or(0) as u8,
            EndReason::Resignation => 100,
            EndReason::MaxLength => 101,
        }
    }

    /// Parses [`EndReason::code`].
    pub fn from_code(code: u8) -> Option<EndReason> {
        match code {
            100 => Some(EndReason::Resignation),
            101 => Some(EndReason::MaxLength),
            c => Termination::ALL.get(c as usize).map(|&t| EndReason::Rules(t)),
        }
    }

    /// Lower-case description (also for PGN `[Termination]`).
    pub fn description(self) -> &'static str {
        match self {
            EndReason::Rules(t) => t.description(),
            EndReason::Resignation => "resignation",
            EndReason::MaxLength => "adjudication (maximum game length)",
        }
    }
}

/// The search's training target for one move.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchTarget {
    /// The policy target: a weight per legal move (moves absent have weight 0), e.g. the
    /// root's visit counts (PUCT) or the improved policy (Gumbel). Finite and non-negative;
    /// need not sum to 1.
    pub policy: Vec<(Move, f32)>,
    /// Root WDL for the side to move.
    pub root_wdl: [f32; 3],
    /// How much the search changed the network's mind here: the Kullback–Leibler divergence
    /// of the policy target from the priors the search started from, in nats (KataGo's
    /// policy surprise; `train.policy_surprise_weight` samples surprising positions more).
    /// `None` where it was not measured (shards before format 5, the bomb variant's
    /// determinized search). Finite and non-negative.
    pub surprise: Option<f32>,
}

/// One move of a recorded game.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveRecord {
    /// The move played.
    pub mv: Move,
    /// Present if the move's position is a training target (a full search).
    pub target: Option<SearchTarget>,
}

/// One self-play game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// Rules.
    pub variant: Variant,
    /// Start position: its FEN, or `balanced` (the Balanced start's setup position).
    pub start_fen: String,
    /// Chess960 castling.
    pub chess960: bool,
    /// Moves in order.
    pub moves: Vec<MoveRecord>,
    /// Winner (`None`: draw).
    pub winner: Option<Color>,
    /// Why it ended.
    pub reason: EndReason,
    /// Resignation was disabled for this game (to measure false resignations).
    pub resign_disabled: bool,
    /// First ply where resignation triggered, and the side that would have resigned.
    pub resign_point: Option<(u16, Color)>,
}

impl GameRecord {
    /// Number of moves that are training targets.
    pub fn n_targets(&self) -> usize {
        self.moves.iter().filter(|m| m.target.is_some()).count()
    }
}

/// Shard-level metadata, stored as JSON in the header.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardMeta {
    /// The network that played (path or name; "random" for generation 0).
    pub model: String,
    /// Generation of the run that produced the shard.
    #[serde(default)]
    pub generation: u64,
    /// Seconds since the Unix epoch when written.
    #[serde(default)]
    pub created_unix: u64,
    /// Free-form note (e.g. the self-play config summary).
    #[serde(default)]
    pub note: String,
}
