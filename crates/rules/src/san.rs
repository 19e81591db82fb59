//! Standard algebraic notation (SAN): writing with minimal disambiguation and `+`/`#` suffixes
//! (`#` when the move explodes or captures the enemy king, or mates), and lenient reading.
//! A removal in the Balanced start's setup phase is written `@e2`, as in UCI; so is a bomb
//! choice in the bomb variant's. A detonation is the bomb's piece letter, its square and `*`
//! (`Qd1*`, a pawn `e4*`), with the suffix of what it leaves (`#` if it blows up the enemy
//! king alone or mates; `d1*` without the letter is read too). See [`crate::bomb`].

use crate::mv::Move;
use crate::position::Position;
use crate::role::Role;
use crate::square::{File, Rank, Square};
use std::fmt;

/// A SAN string that is malformed, illegal or ambiguous in the position.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SanError {
    /// Not SAN syntax.
    Syntax(String),
    /// No legal move matches.
    Illegal(String),
    /// Several legal moves match.
    Ambiguous(String),
}

impl fmt::Display for SanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SanError::Syntax(s) => write!(f, "invalid san '{s}'"),
            SanError::Illegal(s) => write!(f, "illegal san move '{s}'"),
            SanError::Ambiguous(s) => write!(f, "ambiguous san move '{s}'"),
        }
    }
}

impl std::error::Error for SanError {}

impl Position {
    /// The SAN of legal move `m`, with its `+`/`#` suffix.
    pub fn san(&self, m: Move) -> String {
        if m.is_removal() || m.is_bomb_choice() {
            return self.san_without_suffix(m);
        }
        let mut san = self.san_without_suffix(m);
        let mut after = *self;
        after.play_unchecked(m);
        if after.variant_outcome().is_some_and(|o| o.winner == Some(self.turn))
            || after.is_checkmate()
        {
            san.push('#');
        } else if after.is_check() {
            san.push('+');
        }
        san
    }

    /// The SAN of legal move `m` without a check suffix.
    pub fn san_without_suffix(&self, m: Move) -> String {
        if m.is_removal() || m.is_bomb_choice() {
            return format!("@{}", m.from());
        }
        if m.is_detonation() {
            return match self.board.role_at(m.from()) {
                Some(Role::Pawn) | None => format!("{}*", m.from()),
                Some(role) => format!("{}{}*", role.upper_char(), m.from()),
            };
        }
        if m.is_castle() {
            return if m.to().file() > m.from().file() { "O-O".into() } else { "O-O-O".into() };
        }
        let role = self.board.role_at(m.from()).unwrap_or(Role::Pawn);
        let capture = self.is_capture(m);
        let mut san = String::with_capacity(8);
        if role == Role::Pawn {
            if capture {
                san.push(m.from().file().char());
                san.push('x');
            }
        } else {
            san.push(role.upper_char());
            // Disambiguate among other pieces of the same role reaching the same square.
            let others: Vec<Square> = self
                .legal_moves()
                .iter()
                .filter(|o| {
                    o.to() == m.to()
                        && o.from() != m.from()
                        && !o.is_castle()
                        && self.board.role_at(o.from()) == Some(role)
                })
                .map(|o| o.from())
                .collect();
            if !others.is_empty() {
                let same_file = others.iter().any(|s| s.file() == m.from().file());
                let same_rank = others.iter().any(|s| s.rank() == m.from().rank());
                if !same_file {
                    san.push(m.from().file().char());
                } else if !same_rank {
                    san.push(m.from().rank().char());
                } else {
                    san.push_str(&m.from().to_string());
                }
            }
            if capture {
                san.push('x');
            }
        }
        san.push_str(&m.to().to_string());
        if let Some(promo) = m.promotion() {
            san.push('=');
            san.push(promo.upper_char());
        }
        san
    }

    /// Reads a SAN move (lenient: accepts `0-0`, missing or superfluous `x`, `e8Q` without
    /// `=`, annotations `+#!?`) and finds the legal move it denotes.
    pub fn parse_san(&self, text: &str) -> Result<Move, SanError> {
        let syntax = || SanError::Syntax(text.chars().take(32).collect());
        let s = text.trim_end_matches(['+', '#', '!', '?']);
        if s.is_empty() || s.len() > 10 || !s.is_ascii() {
            return Err(syntax());
        }
        let legal = self.legal_moves();
        let special = if let Some(square) = s.strip_prefix('@') {
            let square: Square = square.parse().map_err(|_| syntax())?;
            Some(if self.variant.rules().hidden_bombs {
                Move::bomb_choice(square)
            } else {
                Move::removal(square)
            })
        } else if let Some(body) = s.strip_suffix('*') {
            // `Qd1*` or `d1*`: the letter, when given, must be the bomb's piece.
            let (letter, square) = match body.len() {
                2 => (None, body),
                3 => (
                    Role::from_char(body.as_bytes()[0] as char)
                        .filter(|_| body.as_bytes()[0].is_ascii_uppercase())
                        .map(Some)
                        .ok_or_else(syntax)?,
                    &body[1..],
                ),
                _ => return Err(syntax()),
            };
            let square: Square = square.parse().map_err(|_| syntax())?;
            if letter.is_some_and(|role| self.board.role_at(square) != Some(role)) {
                return Err(SanError::Illegal(text.chars().take(32).collect()));
            }
            Some(Move::detonation(square))
        } else {
            None
        };
        if let Some(m) = special {
            return if legal.contains(&m) {
                Ok(m)
            } else {
                Err(SanError::Illegal(text.chars().take(32).collect()))
            };
        }
        let pick = |mut matches: Vec<Move>| -> Result<Move, SanError> {
            match matches.len() {
                1 => Ok(matches.remove(0)),
                0 => Err(SanError::Illegal(text.chars().take(32).collect())),
                _ => Err(SanError::Ambiguous(text.chars().take(32).collect())),
            }
        };
        let castle_side = match s {
            "O-O" | "0-0" => Some(true),
            "O-O-O" | "0-0-0" => Some(false),
            _ => None,
        };
        if let Some(king_side) = castle_side {
            let matches = legal
                .iter()
                .copied()
                .filter(|m| m.is_castle() && (m.to().file() > m.from().file()) == king_side)
                .collect();
            return pick(matches);
        }

        let bytes = s.as_bytes();
        let (role, mut rest) = match bytes[0] {
            b'N' | b'B' | b'R' | b'Q' | b'K' => {
                (Role::from_char(bytes[0] as char).ok_or_else(syntax)?, &s[1..])
            }
            _ => (Role::Pawn, s),
        };
        // Promotion suffix: "=Q" or "Q".
        let mut promotion = None;
        if let Some(last) = rest.chars().last()
            && matches!(last, 'N' | 'B' | 'R' | 'Q' | 'n' | 'b' | 'r' | 'q')
            && role == Role::Pawn
        {
            promotion = Role::from_char(last);
            rest = &rest[..rest.len() - 1];
            rest = rest.strip_suffix('=').unwrap_or(rest);
        }
        if rest.len() < 2 {
            return Err(syntax());
        }
        let to: Square = rest[rest.len() - 2..].parse().map_err(|_| syntax())?;
        let mut prefix = &rest[..rest.len() - 2];
        prefix = prefix.strip_suffix('x').unwrap_or(prefix);
        prefix = prefix.strip_suffix('-').unwrap_or(prefix);
        let (mut from_file, mut from_rank) = (None::<File>, None::<Rank>);
        for ch in prefix.chars() {
            if let Some(f) = File::from_char(ch).filter(|_| ch.is_ascii_lowercase()) {
                if from_file.is_some() {
                    return Err(syntax());
                }
                from_file = Some(f);
            } else if let Some(r) = Rank::from_char(ch) {
                if from_rank.is_some() {
                    return Err(syntax());
                }
                from_rank = Some(r);
            } else {
                return Err(syntax());
            }
        }
        let matches = legal
            .iter()
            .copied()
            .filter(|m| {
                !m.is_castle()
                    && !m.is_on_one_square()
                    && m.to() == to
                    && m.promotion() == promotion
                    && self.board.role_at(m.from()) == Some(role)
                    && from_file.is_none_or(|f| m.from().file() == f)
                    && from_rank.is_none_or(|r| m.from().rank() == r)
            })
            .collect();
        pick(matches)
    }
}
