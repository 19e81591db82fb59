//! Information sets of the bomb variant: what one player knows of a game, and the worlds (full
//! states) consistent with it.
//!
//! A player sees every move but the opponent's bomb choice; a detonation is public (it
//! reveals where the opponent's bomb was, and that it is gone). The opponent's pieces are
//! identified by their **origin**, the square each stood on when the opponent chose its bomb
//! (the setup phase has no board moves, so it is the start square), and followed from one
//! public board to the next ([`Origins::observe`]: by board differences alone, so nothing
//! hidden can enter). A world is the game replayed with the opponent's choice set to one
//! origin: the rules carry the bomb with its piece (castling, promotion), drop it with a
//! captured piece, and the replay checks every move, so a world is exactly a full state the
//! player cannot tell from the truth.

use atomzero_rules::{
    Board, BombView, Color, Game, Move, OpponentBomb, Position, Role, Square, Variant,
};
use std::fmt;

/// One of the opponent's non-king pieces, followed from the opponent's bomb choice on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OriginRecord {
    /// Where it stood when the opponent chose its bomb (its identity).
    pub origin: Square,
    /// Its role then.
    pub first_role: Role,
    /// Where it stands now; `None` once it is lost (captured or blown up).
    pub square: Option<Square>,
    /// Its role now (a promoted pawn's new role).
    pub role: Role,
    /// Moves it has made.
    pub moves: u16,
    /// The ply of its last move, if it has moved.
    pub last_moved: Option<u16>,
    /// The ply at which it was lost.
    pub lost_at: Option<u16>,
}

/// The non-king pieces of one side, followed by origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origins {
    owner: Color,
    pieces: Vec<OriginRecord>,
    /// Index into `pieces` of the piece on each square (`NONE` if none is followed there).
    at: [u8; 64],
}

const NONE: u8 = u8::MAX;

impl Origins {
    /// `owner`'s non-king pieces on `board`, each its own origin.
    pub fn new(owner: Color, board: &Board) -> Origins {
        let mut origins = Origins { owner, pieces: Vec::new(), at: [NONE; 64] };
        for square in board.by_color(owner) & !board.kings() {
            let Some(role) = board.role_at(square) else { continue };
            origins.at[square.index()] = origins.pieces.len() as u8;
            origins.pieces.push(OriginRecord {
                origin: square,
                first_role: role,
                square: Some(square),
                role,
                moves: 0,
                last_moved: None,
                lost_at: None,
            });
        }
        origins
    }

    /// Whose pieces these are.
    pub fn owner(&self) -> Color {
        self.owner
    }

    /// Every piece followed, lost ones included, in origin order (a1 to h8).
    pub fn pieces(&self) -> &[OriginRecord] {
        &self.pieces
    }

    /// The piece on `square`, if one is followed there.
    pub fn on(&self, square: Square) -> Option<&OriginRecord> {
        self.pieces.get(self.at[square.index()] as usize)
    }

    /// The piece whose origin is `origin`.
    pub fn by_origin(&self, origin: Square) -> Option<&OriginRecord> {
        self.pieces.iter().find(|p| p.origin == origin)
    }

    /// Follows the pieces through one move of `mover` at `ply`, from the board `before` to the
    /// board `after` (the boards alone: public information).
    pub fn observe(&mut self, before: &Board, after: &Board, mover: Color, ply: u16) {
        let owner = self.owner;
        let theirs = |board: &Board, sq: Square| {
            board.piece_at(sq).filter(|p| p.color == owner && p.role != Role::King)
        };
        if mover == owner {
            // Where one of the owner's (non-king) pieces left and where one arrived.
            let mut vacated: Vec<(Square, Role)> = Vec::new();
            let mut arrived: Vec<(Square, Role)> = Vec::new();
            for square in (0..64u8).filter_map(Square::new) {
                let (was, is) = (theirs(before, square), theirs(after, square));
                if was == is {
                    continue;
                }
                if let Some(p) = was {
                    vacated.push((square, p.role));
                }
                if let Some(p) = is {
                    arrived.push((square, p.role));
                }
            }
            // Each arrival pairs with a departure of its role (a move; castling's rook), a
            // lone arrival of another role with a lone pawn's departure (a promotion).
            let mut moved: Vec<(usize, Square, Role)> = Vec::new();
            let mut unmatched: Vec<(Square, Role)> = Vec::new();
            for &(to, role) in &arrived {
                match vacated.iter().position(|&(_, r)| r == role) {
                    Some(i) => {
                        let (from, _) = vacated.remove(i);
                        if self.at[from.index()] != NONE {
                            moved.push((self.at[from.index()] as usize, to, role));
                        }
                    }
                    None => unmatched.push((to, role)),
                }
            }
            if let ([(from, Role::Pawn)], [(to, role)]) = (vacated.as_slice(), unmatched.as_slice())
                && self.at[from.index()] != NONE
            {
                moved.push((self.at[from.index()] as usize, *to, *role));
            }
            for &(i, _, _) in &moved {
                if let Some(from) = self.pieces[i].square {
                    self.at[from.index()] = NONE;
                }
            }
            for (i, to, role) in moved {
                let piece = &mut self.pieces[i];
                piece.square = Some(to);
                piece.role = role;
                piece.moves = piece.moves.saturating_add(1);
                piece.last_moved = Some(ply);
                self.at[to.index()] = i as u8;
            }
        }
        // Whatever is no longer where it was followed to is lost: captured, taken en passant,
        // blown up (by either side's detonation).
        for square in (0..64u8).filter_map(Square::new) {
            let index = self.at[square.index()];
            if index != NONE
                && theirs(after, square).map(|p| p.role) != Some(self.pieces[index as usize].role)
            {
                self.lose(square, ply);
            }
        }
    }

    fn lose(&mut self, square: Square, ply: u16) {
        let index = std::mem::replace(&mut self.at[square.index()], NONE);
        if let Some(piece) = self.pieces.get_mut(index as usize) {
            piece.square = None;
            piece.lost_at = Some(ply);
        }
    }
}

/// A game that is not a legal game, or a world that the information set does not allow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InfoError {
    /// A move that is not legal where it was played (ply counted from 0).
    IllegalMove {
        /// The ply.
        ply: usize,
        /// The move in UCI.
        uci: String,
    },
    /// The position handed to [`InformationSet::push`] is not the one the player sees now.
    NotCurrent,
    /// A world asked for with an origin the player cannot hold possible.
    Origin(Option<Square>),
}

impl fmt::Display for InfoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InfoError::IllegalMove { ply, uci } => write!(f, "illegal move {uci} at ply {ply}"),
            InfoError::NotCurrent => {
                f.write_str("the position is not the current one of the information set")
            }
            InfoError::Origin(Some(square)) => {
                write!(f, "the opponent's bomb cannot have started on {square} here")
            }
            InfoError::Origin(None) => {
                f.write_str("a world needs the origin of the opponent's bomb")
            }
        }
    }
}

impl std::error::Error for InfoError {}

/// A full state consistent with an information set, with the game before it.
#[derive(Clone, Debug, PartialEq)]
pub struct World {
    /// The full state now (both bombs).
    pub position: Position,
    /// The game's positions before it, oldest first (full states of the same world).
    pub before: Vec<Position>,
}

/// What one player of a game knows (see the module docs). In a variant without hidden
/// information it is the whole game.
#[derive(Clone, Debug, PartialEq)]
pub struct InformationSet {
    viewer: Color,
    /// The start as the viewer sees it.
    initial: BombView,
    /// Every move; `None` for the opponent's hidden bomb choice.
    moves: Vec<Option<Move>>,
    /// The current view.
    current: BombView,
    /// The opponent's pieces from its choice on (`None` before it chose, or without bombs).
    origins: Option<Origins>,
    /// The origin of the opponent's bomb, once public (it detonated it).
    revealed: Option<Square>,
}

impl InformationSet {
    /// What `viewer` knows at the start `initial` (no move played yet).
    pub fn new(initial: &Position, viewer: Color) -> InformationSet {
        let view = initial.view(viewer);
        let chosen = initial.variant() == Variant::Bomb
            && matches!(view.opponent_bomb(), OpponentBomb::Hidden);
        InformationSet {
            viewer,
            initial: view,
            moves: Vec::new(),
            current: view,
            origins: chosen.then(|| Origins::new(!viewer, initial.board())),
            revealed: None,
        }
    }

    /// What `viewer` knows after the moves of `game`.
    pub fn from_game(game: &Game, viewer: Color) -> Result<InformationSet, InfoError> {
        InformationSet::from_moves(game.initial(), game.moves(), viewer)
    }

    /// What `viewer` knows after `moves` from `initial` (the full game: the opponent's choice
    /// in it is read as a hidden move and forgotten).
    pub fn from_moves(
        initial: &Position,
        moves: &[Move],
        viewer: Color,
    ) -> Result<InformationSet, InfoError> {
        let mut info = InformationSet::new(initial, viewer);
        let mut pos = *initial;
        for &m in moves {
            pos = info.push(&pos, m)?;
        }
        Ok(info)
    }

    /// Records move `m` played in the full state `before`, which must be the position the
    /// player sees now; returns the full state after it. Only `before`'s board and the
    /// player's view of it are kept: the opponent's bomb choice becomes `None`.
    pub fn push(&mut self, before: &Position, m: Move) -> Result<Position, InfoError> {
        if before.view(self.viewer) != self.current {
            return Err(InfoError::NotCurrent);
        }
        let ply = self.moves.len();
        let after =
            before.play(m).map_err(|_| InfoError::IllegalMove { ply, uci: before.uci(m) })?;
        let mover = before.turn();
        let theirs = mover != self.viewer;
        if theirs && m.is_bomb_choice() {
            self.moves.push(None);
            self.origins = Some(Origins::new(mover, before.board()));
        } else {
            self.moves.push(Some(m));
        }
        if theirs
            && m.is_detonation()
            && let Some(piece) = self.origins.as_ref().and_then(|o| o.on(m.from()))
        {
            self.revealed = Some(piece.origin);
        }
        if let Some(origins) = self.origins.as_mut() {
            origins.observe(
                before.board(),
                after.board(),
                mover,
                ply.min(u16::MAX as usize) as u16,
            );
        }
        self.current = after.view(self.viewer);
        Ok(after)
    }

    /// The player.
    pub fn viewer(&self) -> Color {
        self.viewer
    }

    /// What the player sees now.
    pub fn view(&self) -> &BombView {
        &self.current
    }

    /// Plies played.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// The moves, `None` for the opponent's hidden choice.
    pub fn moves(&self) -> &[Option<Move>] {
        &self.moves
    }

    /// The opponent's pieces followed by origin (`None` before it chose its bomb).
    pub fn origins(&self) -> Option<&Origins> {
        self.origins.as_ref()
    }

    /// The origin of the opponent's bomb, if it detonated it (then it is public).
    pub fn revealed(&self) -> Option<Square> {
        self.revealed
    }

    /// The possible origins of the opponent's hidden bomb: every non-king piece it had when
    /// it chose (a lost one means it has no bomb any more). Empty when nothing is hidden
    /// (another variant, the opponent has not chosen yet, or it detonated).
    pub fn hidden_origins(&self) -> &[OriginRecord] {
        match (&self.origins, self.current.opponent_bomb()) {
            (Some(origins), OpponentBomb::Hidden) => origins.pieces(),
            _ => &[],
        }
    }

    /// The world in which the opponent's bomb started on `origin` (ignored when nothing is
    /// hidden: the one world there is). Checked: every move replays legally and the player's
    /// view of the result is the current one.
    pub fn world(&self, origin: Option<Square>) -> Result<World, InfoError> {
        let hidden = !self.hidden_origins().is_empty();
        let origin = if hidden {
            if !self.hidden_origins().iter().any(|p| Some(p.origin) == origin) {
                return Err(InfoError::Origin(origin));
            }
            origin
        } else {
            self.revealed
        };
        let initial_hidden = self.initial.opponent_bomb() == OpponentBomb::Hidden;
        let start = if initial_hidden { origin } else { None };
        let mut pos = self.initial.determinize(start).map_err(|_| InfoError::Origin(origin))?;
        let mut before = Vec::with_capacity(self.moves.len());
        for (ply, m) in self.moves.iter().enumerate() {
            let m = match (m, origin) {
                (Some(m), _) => *m,
                (None, Some(origin)) => Move::bomb_choice(origin),
                (None, None) => return Err(InfoError::Origin(None)),
            };
            let next = pos.play(m).map_err(|_| InfoError::IllegalMove { ply, uci: pos.uci(m) })?;
            before.push(pos);
            pos = next;
        }
        if pos.view(self.viewer) != self.current {
            return Err(InfoError::Origin(origin));
        }
        Ok(World { position: pos, before })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(pos: &Position, uci: &str) -> Position {
        pos.play(pos.parse_uci(uci).unwrap()).unwrap()
    }

    #[test]
    fn origins_follow_moves_castling_promotion_and_losses() {
        let start =
            Position::from_fen("r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1 bombs:a1,h8", Variant::Bomb)
                .unwrap();
        let mut white = Origins::new(Color::White, start.board());
        assert_eq!(white.pieces().len(), 3, "a1, h1, b7");
        let mut pos = start;
        for (ply, uci) in ["e1h1", "h8h7", "b7b8q", "a8b8"].iter().enumerate() {
            let next = play(&pos, uci);
            white.observe(pos.board(), next.board(), pos.turn(), ply as u16);
            pos = next;
        }
        let h1 = white.by_origin(Square::H1).unwrap();
        assert_eq!((h1.square, h1.moves), (Some(Square::F1), 1), "castled rook");
        let b7 = white.by_origin(Square::B7).unwrap();
        assert_eq!(
            (b7.square, b7.role, b7.lost_at),
            (None, Role::Queen, Some(3)),
            "promoted, captured"
        );
        assert_eq!(white.on(Square::F1).unwrap().origin, Square::H1);
        assert!(white.on(Square::B8).is_none());
    }

    #[test]
    fn the_opponents_choice_never_enters_the_information_set() {
        let setup = Position::new(Variant::Bomb);
        let game = |black_bomb: &str| {
            let mut moves = Vec::new();
            let mut pos = setup;
            for uci in ["@d1", black_bomb, "e2e4", "e7e5", "g1f3", "b8c6", "f1b5"] {
                let m = pos.parse_uci(uci).unwrap();
                moves.push(m);
                pos = pos.play(m).unwrap();
            }
            (moves, pos)
        };
        let (a, truth_a) = game("@g8");
        let (b, truth_b) = game("@a7");
        assert_ne!(truth_a, truth_b);
        let white_a = InformationSet::from_moves(&setup, &a, Color::White).unwrap();
        let white_b = InformationSet::from_moves(&setup, &b, Color::White).unwrap();
        assert_eq!(white_a, white_b, "White cannot tell the two games apart");
        assert_eq!(white_a.moves()[1], None);
        let black_a = InformationSet::from_moves(&setup, &a, Color::Black).unwrap();
        let black_b = InformationSet::from_moves(&setup, &b, Color::Black).unwrap();
        assert_ne!(black_a, black_b, "Black knows its own bomb");
        assert_eq!(white_a.hidden_origins().len(), 15);
        // Every world replays; the true one is the truth.
        for origin in white_a.hidden_origins() {
            let world = white_a.world(Some(origin.origin)).unwrap();
            assert_eq!(world.before.len(), 7);
            assert_eq!(world.position.view(Color::White), *white_a.view());
        }
        assert_eq!(white_a.world(Some(Square::G8)).unwrap().position, truth_a);
        assert_eq!(white_a.world(Some(Square::A7)).unwrap().position, truth_b);
        assert!(white_a.world(Some(Square::E8)).is_err(), "the king is no bomb");
        assert!(white_a.world(None).is_err());
    }

    #[test]
    fn a_detonation_reveals_the_origin_and_lost_pieces_stay_candidates() {
        let setup = Position::new(Variant::Bomb);
        let mut pos = setup;
        let mut moves = Vec::new();
        for uci in ["@b1", "@b7", "e2e4", "d7d5", "e4d5", "g8f6", "d1f3", "b7b6", "a2a3"] {
            let m = pos.parse_uci(uci).unwrap();
            moves.push(m);
            pos = pos.play(m).unwrap();
        }
        let white = InformationSet::from_moves(&setup, &moves, Color::White).unwrap();
        let d7 = white.origins().unwrap().by_origin(Square::D7).unwrap();
        assert_eq!((d7.square, d7.lost_at), (None, Some(4)), "captured on d5");
        assert_eq!(white.hidden_origins().len(), 15, "the lost pawn may have been the bomb");
        assert!(white.world(Some(Square::D7)).is_ok());
        let b7 = white.origins().unwrap().by_origin(Square::B7).unwrap();
        assert_eq!(b7.square, Some(Square::B6));
        // Black detonates its bomb on b6: revealed, nothing hidden any more (White does not
        // look at its own move's position here: it is Black's turn).
        let boom = Move::detonation(Square::B6);
        moves.push(boom);
        let white = InformationSet::from_moves(&setup, &moves, Color::White).unwrap();
        assert_eq!(white.revealed(), Some(Square::B7));
        assert!(white.hidden_origins().is_empty());
        assert_eq!(white.world(None).unwrap().position, pos.play(boom).unwrap());
    }
}
