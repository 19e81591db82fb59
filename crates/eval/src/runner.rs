//! The match runner: two players, `games` games in pairs (each opening once with either
//! colour), on `concurrency` threads, with an optional SPRT that stops the match early.
//!
//! Game `i` belongs to pair `i / 2`; the first player has White in even games. The opening
//! of a pair and every player's seed depend only on the match seed and the game index, so a
//! match with deterministic players gives the same games whatever the concurrency (only the
//! point where an SPRT stops may differ), and a match can be split or extended:
//! [`MatchConfig::first_game`] plays a later stretch of the games the same seed defines. Games
//! end by the rules (with threefold repetition), by adjudication as a draw after `max_plies`
//! half-moves, or by forfeit when a player fails (an illegal move, a crashed or hung engine):
//! the failing side loses and the match goes on.
//! Progress is reported on the calling thread through a callback after every game.
//!
//! On the Balanced start ([`MatchConfig::start`]) White's player chooses the removal (random
//! openings play their plies after it: [`crate::openings`]); [`MatchResult::colour_report`]
//! gives White's score with its interval and each player's removals.
//!
//! The bomb variant: every game starts in the setup phase, each player chooses its bomb
//! (random openings play their plies after both choices), and each player is handed only
//! its own information set ([`crate::Player::choose_in_view`]; `atomzero_belief`) unless it
//! declares that it sees everything (the cheating reference). The runner, which holds the
//! full game, keeps per game how often each side detonated and how well each player's belief
//! guessed the opponent's bomb at its moves ([`BombStats`]); [`MatchResult::bomb_report`]
//! sums them per player. The PGN reveals both bombs (`[WhiteBomb]`, `[BlackBomb]`).

use crate::openings::{OpeningPicker, Openings, mix};
use crate::player::{Player, PlayerError};
use crate::spec::PlayerSpec;
use crate::stats::{
    GameResult, Pentanomial, SprtConfig, SprtStatus, Wdl, elo_line, fixed, score_line,
};
use atomzero_belief::{Accuracy, BeliefModel, InformationSet};
use atomzero_rules::{Color, Game, Move, PgnGame, Position, Square, Start, Termination, Variant};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// Settings of a match.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Games to play (an odd count leaves the last pair with one game).
    pub games: usize,
    /// Index of the first game (0 = from the start): games `first_game..first_game + games`
    /// of the match the seed defines, numbered as there (openings, colours, player seeds,
    /// PGN rounds), so that a match of 100 games from 100 plays the second half of a
    /// 200-game match. An even index keeps pairs whole.
    pub first_game: usize,
    /// Where the games start.
    pub openings: Openings,
    /// The variant played.
    pub variant: Variant,
    /// How games start: the openings, or the Balanced start's setup position (White's player
    /// removes a pawn; a book cannot be used).
    pub start: Start,
    /// Games played at once (threads).
    pub concurrency: usize,
    /// Stop early when this test reaches a verdict (over complete pairs).
    pub sprt: Option<SprtConfig>,
    /// Half-moves after which a game is adjudicated a draw.
    pub max_plies: usize,
    /// Seeds the openings and the players.
    pub seed: u64,
    /// The PGN `[Event]`.
    pub event: String,
    /// Set from outside (e.g. on Ctrl-C) to stop the match: games in progress are abandoned and
    /// the result holds the finished ones, with [`MatchResult::interrupted`] set.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl Default for MatchConfig {
    fn default() -> MatchConfig {
        MatchConfig {
            games: 100,
            first_game: 0,
            openings: Openings::default(),
            variant: Variant::Atomic,
            start: Start::Standard,
            concurrency: 1,
            sprt: None,
            max_plies: 400,
            seed: 0,
            event: "atomzero match".to_string(),
            interrupt: None,
        }
    }
}

/// A match that could not be played.
#[derive(Debug)]
pub enum MatchError {
    /// A player could not be created (checked once before the first game).
    Player {
        /// The player's name.
        name: String,
        /// Why.
        error: PlayerError,
    },
    /// The book's positions are of another variant than the match.
    BookVariant {
        /// The match variant.
        expected: Variant,
        /// The book's variant.
        found: Variant,
    },
    /// An opening book with the Balanced start (whose games start from its setup position).
    BookWithBalancedStart,
    /// The bomb variant cannot be played this way (a player, a book or a start).
    Bomb(String),
    /// A match of no games (its score would be 0 / 0).
    NoGames,
    /// Game numbers past [`MAX_GAME_NUMBER`] (`first_game + games`).
    TooManyGames {
        /// The number its last game would have.
        last: u128,
    },
}

/// The largest game number a match may reach (`first_game + games`): far beyond any match,
/// and small enough that game indices and PGN round numbers cannot overflow.
pub const MAX_GAME_NUMBER: usize = u32::MAX as usize;

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatchError::Player { name, error } => write!(f, "player {name}: {error}"),
            MatchError::BookVariant { expected, found } => {
                write!(f, "the opening book is for {found}, the match plays {expected}")
            }
            MatchError::BookWithBalancedStart => f.write_str(
                "an opening book cannot be used with the balanced start (its games start from \
                 the setup position, where White removes a pawn)",
            ),
            MatchError::Bomb(reason) => write!(f, "the bomb variant: {reason}"),
            MatchError::NoGames => f.write_str("a match needs at least one game (games = 0)"),
            MatchError::TooManyGames { last } => write!(
                f,
                "the match's last game would be number {last}, past the largest a match may reach \
                 ({MAX_GAME_NUMBER}): lower the first game or the number of games"
            ),
        }
    }
}

impl std::error::Error for MatchError {}

/// Why a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameEnd {
    /// By the rules of the variant.
    Rules(Termination),
    /// Adjudicated a draw after the configured number of half-moves.
    MaxPlies,
    /// `side` lost by failing to produce a legal move.
    Forfeit {
        /// The side that failed.
        side: Color,
        /// How.
        error: PlayerError,
    },
}

/// One finished game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// 0-based index in the match.
    pub index: usize,
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// True if the match's first player had White.
    pub first_is_white: bool,
    /// The start position.
    pub opening: Position,
    /// True if the opening came from a book.
    pub from_book: bool,
    /// The moves played.
    pub moves: Vec<Move>,
    /// The winner (`None`: a draw).
    pub winner: Option<Color>,
    /// Why the game ended.
    pub end: GameEnd,
    /// The bomb variant's figures (`None` in the other variants).
    pub bomb: Option<BombStats>,
}

/// What one game of the bomb variant showed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BombStats {
    /// Whether White and Black detonated their bombs.
    pub detonated: [bool; 2],
    /// The top-1 guesses of White's and Black's beliefs, one at each of its moves at which
    /// the opponent's bomb was hidden, scored against the truth (empty for a player without
    /// a belief).
    pub guesses: [Accuracy; 2],
}

impl GameRecord {
    /// The pair the game belongs to.
    pub fn pair(&self) -> usize {
        self.index / 2
    }

    /// The square of the pawn White removed, in a game from the Balanced start.
    pub fn removal(&self) -> Option<Square> {
        let first = self.moves.first().filter(|m| m.is_removal())?;
        self.opening.is_setup_phase().then(|| first.from())
    }

    /// The result from White's side.
    pub fn result_for_white(&self) -> GameResult {
        match self.winner {
            None => GameResult::Draw,
            Some(Color::White) => GameResult::Win,
            Some(Color::Black) => GameResult::Loss,
        }
    }

    /// The result for the match's first player.
    pub fn result_for_first(&self) -> GameResult {
        let first = if self.first_is_white { Color::White } else { Color::Black };
        match self.winner {
            None => GameResult::Draw,
            Some(c) if c == first => GameResult::Win,
            Some(_) => GameResult::Loss,
        }
    }

    /// `1-0`, `0-1` or `1/2-1/2`.
    pub fn result_str(&self) -> &'static str {
        match self.winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }

    /// The PGN `[Termination]` value: the rules' reason (`king exploded`, `checkmate`, ...),
    /// `adjudication`, or for a forfeit `illegal move`, `time forfeit` or `abandoned`.
    pub fn termination(&self) -> String {
        match &self.end {
            GameEnd::Rules(t) => t.description().to_string(),
            GameEnd::MaxPlies => "adjudication".to_string(),
            GameEnd::Forfeit { error, .. } => error.termination().to_string(),
        }
    }

    /// A sentence on how the game ended, e.g. `White makes an illegal move: 'a1a1'`.
    pub fn details(&self) -> String {
        match &self.end {
            GameEnd::Rules(t) => match self.winner {
                Some(c) => format!("{} wins by {t}", color_name(c)),
                None => format!("draw by {t}"),
            },
            GameEnd::MaxPlies => format!("draw by adjudication after {} plies", self.moves.len()),
            GameEnd::Forfeit { side, error } => format!("{} loses: {error}", color_name(*side)),
        }
    }

    /// cutechess-cli's line: `Finished game 3 (A vs B): 1-0 {White wins by king exploded}`.
    pub fn finished_line(&self) -> String {
        format!(
            "Finished game {} ({} vs {}): {} {{{}}}",
            self.index + 1,
            self.white,
            self.black,
            self.result_str(),
            self.details()
        )
    }

    /// The game as PGN: players, `[Variant]`, `[FEN]` unless it starts from the standard
    /// position, `[Result]`, `[Termination]` and `[TerminationDetails]`.
    pub fn to_pgn(&self, event: &str) -> PgnGame {
        let mut pgn = PgnGame::new(self.opening);
        pgn.set_tag("Event", event);
        pgn.set_tag("Site", "atomzero");
        pgn.set_tag("Round", (self.index + 1).to_string());
        pgn.set_tag("White", self.white.clone());
        pgn.set_tag("Black", self.black.clone());
        pgn.set_tag("Termination", self.termination());
        pgn.set_tag("TerminationDetails", self.details());
        pgn.set_tag("PlyCount", self.moves.len().to_string());
        if self.from_book {
            pgn.set_tag("Opening", "book");
        }
        pgn.moves = self.moves.clone();
        pgn.result = self.result_str().to_string();
        pgn
    }
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// The state of a match after a game, handed to the progress callback.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// The game just finished.
    pub game: &'a GameRecord,
    /// Games finished so far (this one included).
    pub finished: usize,
    /// Games planned.
    pub planned: usize,
    /// The first player's record so far.
    pub wdl: Wdl,
    /// Complete pairs so far, for the first player.
    pub pentanomial: Pentanomial,
    /// The SPRT after this game, if one runs.
    pub sprt: Option<SprtStatus>,
}

/// A finished (or SPRT-stopped) match.
#[derive(Clone, Debug)]
pub struct MatchResult {
    /// The first player's name.
    pub first: String,
    /// The second player's name.
    pub second: String,
    /// The variant.
    pub variant: Variant,
    /// The PGN event.
    pub event: String,
    /// The finished games, by index.
    pub games: Vec<GameRecord>,
    /// The first player's record.
    pub wdl: Wdl,
    /// Complete pairs, for the first player.
    pub pentanomial: Pentanomial,
    /// The SPRT's final state, if one ran.
    pub sprt: Option<SprtStatus>,
    /// The match was stopped by [`MatchConfig::interrupt`] before it finished.
    pub interrupted: bool,
}

impl MatchResult {
    /// The SPRT's verdict, if it reached one.
    pub fn sprt_verdict(&self) -> Option<crate::stats::Hypothesis> {
        self.sprt.and_then(|s| s.verdict)
    }

    /// cutechess-cli's summary: the score line, the Elo line and (with an SPRT) the SPRT line.
    pub fn summary(&self) -> String {
        let mut out = score_line(&self.first, &self.second, &self.wdl);
        out.push('\n');
        out.push_str(&elo_line(&self.wdl));
        if let Some(sprt) = &self.sprt {
            out.push('\n');
            out.push_str(&sprt.to_string());
        }
        out
    }

    /// White's record over every game (colour balance: 50% if neither colour has the edge).
    pub fn white_wdl(&self) -> Wdl {
        let mut wdl = Wdl::default();
        for game in &self.games {
            wdl.add(game.result_for_white());
        }
        wdl
    }

    /// How often `player` (the match's first player if `first`) removed each pawn when it had
    /// White on the Balanced start, most often first (ties a1 to h8).
    pub fn removals(&self, first: bool) -> Vec<(Square, usize)> {
        let mut counts = [0usize; 64];
        for game in self.games.iter().filter(|g| g.first_is_white == first) {
            if let Some(square) = game.removal() {
                counts[square.index()] += 1;
            }
        }
        let mut out: Vec<(Square, usize)> = (0..64u8)
            .filter_map(|i| Some((Square::new(i)?, counts[i as usize])))
            .filter(|&(_, n)| n > 0)
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.index().cmp(&b.0.index())));
        out
    }

    /// White's score per game and the half-width of its 95% interval. The two games of a pair
    /// share their opening (and between equal deterministic players are the same game), so
    /// they are not independent: the interval comes from the spread of White's mean score
    /// per pair over the pairs (normal approximation), not from the games as if independent.
    /// NaN without games; 0 half-width with one pair.
    pub fn white_score_interval(&self) -> (f64, f64) {
        let mut pairs: std::collections::BTreeMap<usize, (f64, f64)> = Default::default();
        for game in &self.games {
            let entry = pairs.entry(game.pair()).or_default();
            entry.0 += f64::from(game.result_for_white().half_points()) / 2.0;
            entry.1 += 1.0;
        }
        let means: Vec<f64> = pairs.values().map(|(points, n)| points / n).collect();
        let n = means.len() as f64;
        let score = self.white_wdl().score();
        let mean_of_pairs = means.iter().sum::<f64>() / n;
        let variance = if means.len() > 1 {
            means.iter().map(|m| (m - mean_of_pairs).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        (score, crate::stats::phi_inv(0.975) * (variance / n).sqrt())
    }

    /// The colour balance: White's score with its 95% interval (over pairs: see
    /// [`MatchResult::white_score_interval`]), and on the Balanced start each player's
    /// removals, e.g.
    /// `White: 58.5% +/- 6.1% (+50 =17 -33), Black: 41.5% over 100 games` and
    /// `Removals by A as White (50 games): e7 21, d7 17, f2 12`.
    pub fn colour_report(&self) -> String {
        let white = self.white_wdl();
        let (score, half_width) = self.white_score_interval();
        let mut out = format!(
            "White: {}% +/- {}% (+{} ={} -{}), Black: {}% over {} games",
            fixed(score * 100.0, 1),
            fixed(half_width * 100.0, 1),
            white.wins,
            white.draws,
            white.losses,
            fixed((1.0 - score) * 100.0, 1),
            white.games()
        );
        // The Balanced start's removals (the bomb variant's setup phase has none).
        if self.games.iter().any(|g| g.opening.is_setup_phase() && g.bomb.is_none()) {
            for (first, name) in [(true, &self.first), (false, &self.second)] {
                let games = self.games.iter().filter(|g| g.first_is_white == first).count();
                let counts: Vec<String> =
                    self.removals(first).iter().map(|(sq, n)| format!("{sq} {n}")).collect();
                out.push_str(&format!(
                    "\nRemovals by {name} as White ({games} games): {}",
                    if counts.is_empty() { "none".to_string() } else { counts.join(", ") }
                ));
            }
        }
        out
    }

    /// The bomb variant's figures per player (`None` in the other variants): how often each
    /// detonated its bomb, and how its belief guessed the opponent's bomb against a uniform
    /// guess, e.g. `Detonations: A in 41 of 100 games (as White 23, as Black 18), B in 12 ...`
    /// and `Belief of A: top-1 38.5% vs uniform 9.1% over 2210 positions`.
    pub fn bomb_report(&self) -> Option<String> {
        if !self.games.iter().any(|g| g.bomb.is_some()) {
            return None;
        }
        let mut detonations = Vec::new();
        let mut beliefs = Vec::new();
        for (first, name) in [(true, &self.first), (false, &self.second)] {
            let (mut white, mut black, mut games) = (0, 0, 0);
            let mut guesses = Accuracy::default();
            for game in &self.games {
                let Some(stats) = &game.bomb else { continue };
                games += 1;
                let colour = if game.first_is_white == first { Color::White } else { Color::Black };
                if stats.detonated[colour.index()] {
                    match colour {
                        Color::White => white += 1,
                        Color::Black => black += 1,
                    }
                }
                guesses.merge(&stats.guesses[colour.index()]);
            }
            detonations.push(format!(
                "{name} in {} of {games} games (as White {white}, as Black {black})",
                white + black
            ));
            if guesses.positions > 0 {
                beliefs.push(format!("Belief of {name}: {guesses}"));
            }
        }
        let mut out = format!("Detonations: {}", detonations.join(", "));
        for line in beliefs {
            out.push('\n');
            out.push_str(&line);
        }
        Some(out)
    }

    /// The guesses of the first (`first`) or second player's belief over the match.
    pub fn belief_accuracy(&self, first: bool) -> Accuracy {
        let mut total = Accuracy::default();
        for game in &self.games {
            let Some(stats) = &game.bomb else { continue };
            let colour = if game.first_is_white == first { Color::White } else { Color::Black };
            total.merge(&stats.guesses[colour.index()]);
        }
        total
    }

    /// Every game as PGN, in index order.
    pub fn pgn(&self) -> String {
        self.games.iter().map(|g| g.to_pgn(&self.event).write()).collect()
    }
}

/// Plays a match between `first` and `second`. `on_game` is called on the calling thread after
/// every finished game. Returns an error only if a player cannot be created at all (checked
/// once before the first game); failures during games are forfeits.
pub fn run_match(
    first: &PlayerSpec,
    second: &PlayerSpec,
    config: &MatchConfig,
    on_game: &mut dyn FnMut(&Progress<'_>),
) -> Result<MatchResult, MatchError> {
    if config.games == 0 {
        return Err(MatchError::NoGames);
    }
    let last = config.first_game as u128 + config.games as u128;
    if last > MAX_GAME_NUMBER as u128 {
        return Err(MatchError::TooManyGames { last });
    }
    if let Some(found) = config.openings.book_variant()
        && found != config.variant
    {
        return Err(MatchError::BookVariant { expected: config.variant, found });
    }
    if config.start == Start::Balanced && config.openings.is_book() {
        return Err(MatchError::BookWithBalancedStart);
    }
    if config.variant == Variant::Bomb {
        if config.start == Start::Balanced {
            return Err(MatchError::Bomb(
                "it has its own setup phase, not the balanced start".into(),
            ));
        }
        if config.openings.is_book() {
            return Err(MatchError::Bomb(
                "an opening book cannot be used (games start from the setup phase, where each \
                 player chooses its hidden bomb)"
                    .into(),
            ));
        }
        for spec in [first, second] {
            if !spec.plays_hidden_information() {
                return Err(MatchError::Bomb(format!(
                    "{} cannot play it (hidden information: only random, greedy, net and policy \
                     players are handed their own view)",
                    spec.name()
                )));
            }
        }
    }
    let picker = config.openings.picker(config.variant, config.start, config.seed);
    if config.games > 0 {
        let start = picker.opening(config.first_game / 2);
        for spec in [first, second] {
            spec.create(&start, 0)
                .map_err(|error| MatchError::Player { name: spec.name().to_string(), error })?;
        }
    }

    let next_game = AtomicUsize::new(config.first_game);
    let end = config.first_game + config.games;
    let stop = AtomicBool::new(false);
    let workers = config.concurrency.clamp(1, config.games.max(1));
    let (tx, rx) = mpsc::channel::<GameRecord>();
    let mut result = MatchResult {
        first: first.name().to_string(),
        second: second.name().to_string(),
        variant: config.variant,
        event: config.event.clone(),
        games: Vec::with_capacity(config.games),
        wdl: Wdl::default(),
        pentanomial: Pentanomial::default(),
        sprt: config.sprt.map(|s| s.status(&Pentanomial::default())),
        interrupted: false,
    };
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next_game, stop, picker) = (&next_game, &stop, &picker);
            scope.spawn(move || {
                loop {
                    let index = next_game.fetch_add(1, Ordering::SeqCst);
                    if index >= end || stopped(config, stop) {
                        break;
                    }
                    let Some(record) = play_game(index, first, second, picker, config, stop) else {
                        break;
                    };
                    if tx.send(record).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Results of the pair's other game, until the pair is complete.
        let mut pending: std::collections::HashMap<usize, GameResult> = Default::default();
        for record in rx {
            let r = record.result_for_first();
            result.wdl.add(r);
            if let Some(other) = pending.remove(&record.pair()) {
                result.pentanomial.add_pair(other, r);
            } else {
                pending.insert(record.pair(), r);
            }
            if let Some(sprt) = &config.sprt {
                let status = sprt.status(&result.pentanomial);
                if status.verdict.is_some() {
                    stop.store(true, Ordering::SeqCst);
                }
                result.sprt = Some(status);
            }
            result.games.push(record);
            let progress = Progress {
                game: result.games.last().expect("just pushed"),
                finished: result.games.len(),
                planned: config.games,
                wdl: result.wdl,
                pentanomial: result.pentanomial,
                sprt: result.sprt,
            };
            on_game(&progress);
        }
    });
    result.games.sort_by_key(|g| g.index);
    result.interrupted = config.interrupt.as_ref().is_some_and(|f| f.load(Ordering::SeqCst))
        && result.games.len() < config.games
        && result.sprt_verdict().is_none();
    Ok(result)
}

/// The match's own stop (SPRT verdict) or the caller's interrupt.
fn stopped(config: &MatchConfig, stop: &AtomicBool) -> bool {
    stop.load(Ordering::SeqCst)
        || config.interrupt.as_ref().is_some_and(|f| f.load(Ordering::SeqCst))
}

/// Plays game `index`; `None` if the match was stopped before it finished.
fn play_game(
    index: usize,
    first: &PlayerSpec,
    second: &PlayerSpec,
    picker: &OpeningPicker<'_>,
    config: &MatchConfig,
    stop: &AtomicBool,
) -> Option<GameRecord> {
    let opening = picker.opening(index / 2);
    let first_is_white = index.is_multiple_of(2);
    let (white, black) = if first_is_white { (first, second) } else { (second, first) };
    let bomb = config.variant == Variant::Bomb;
    let mut record = GameRecord {
        index,
        white: white.name().to_string(),
        black: black.name().to_string(),
        first_is_white,
        opening,
        from_book: config.openings.is_book(),
        moves: Vec::new(),
        winner: None,
        end: GameEnd::MaxPlies,
        bomb: bomb.then(BombStats::default),
    };
    let game_seed = mix(config.seed, index as u64 + 1);
    let forfeit = |record: &mut GameRecord, side: Color, error: PlayerError| {
        record.winner = Some(!side);
        record.end = GameEnd::Forfeit { side, error };
    };
    let mut players = Vec::with_capacity(2);
    for (side, spec) in [(Color::White, white), (Color::Black, black)] {
        match spec.create(&opening, mix(game_seed, side.index() as u64)) {
            Ok(player) => players.push(player),
            Err(error) => {
                forfeit(&mut record, side, error);
                return Some(record);
            }
        }
    }
    let mut game = Game::new(opening);
    // The bomb variant: what each player knows (White's, Black's), and the random plies still
    // to play once both bombs are chosen.
    let mut infos = [Color::White, Color::Black].map(|c| InformationSet::new(&opening, c));
    let mut bomb_plies_pending = bomb;
    // The squares each side chose for its bomb (the truth, for scoring beliefs).
    let mut choices = [Color::White, Color::Black].map(|c| opening.bomb(c));
    loop {
        if let Some(outcome) = game.outcome() {
            record.winner = outcome.winner;
            record.end = GameEnd::Rules(outcome.termination);
            break;
        }
        if game.ply() >= config.max_plies {
            record.end = GameEnd::MaxPlies;
            break;
        }
        if stopped(config, stop) {
            return None;
        }
        let side = game.position().turn();
        let player = &mut players[side.index()];
        let choice = if !bomb || player.sees_hidden_information() {
            player.choose_move(&game)
        } else {
            let info = &infos[side.index()];
            if let Some(stats) = record.bomb.as_mut() {
                let origin = choices[(!side).index()];
                let accuracy = &mut stats.guesses[side.index()];
                score_guess(&**player, info, game.position(), origin, accuracy);
            }
            player.choose_in_view(info)
        };
        match choice {
            Ok(m) if game.position().is_legal(m) => {
                if m.is_bomb_choice() {
                    choices[side.index()] = Some(m.from());
                }
                if bomb {
                    play_bomb_move(&mut game, &mut infos, m, record.bomb.as_mut());
                    if bomb_plies_pending && !game.position().is_setup_phase() {
                        // Both bombs are chosen: the opening's random plies follow.
                        bomb_plies_pending = false;
                        let after = *game.position();
                        for random in picker.plies_after_bomb_choices(index / 2, &after) {
                            play_bomb_move(&mut game, &mut infos, random, record.bomb.as_mut());
                        }
                    }
                    continue;
                }
                game.play_unchecked(m);
                if m.is_removal() {
                    // The Balanced start: the opening's random plies follow the removal.
                    let after = *game.position();
                    for random in picker.plies_after_removal(index / 2, &after, m) {
                        game.play_unchecked(random);
                    }
                }
            }
            Ok(m) => {
                let text = game.position().uci(m);
                forfeit(&mut record, side, PlayerError::IllegalMove(text));
                break;
            }
            Err(error) => {
                forfeit(&mut record, side, error);
                break;
            }
        }
    }
    record.moves = game.moves().to_vec();
    Some(record)
}

/// Plays `m` (legal) in a bomb-variant game and in both players' information sets, and
/// counts a detonation.
fn play_bomb_move(
    game: &mut Game,
    infos: &mut [InformationSet; 2],
    m: Move,
    stats: Option<&mut BombStats>,
) {
    let before = *game.position();
    for info in infos.iter_mut() {
        // Legal moves of the game the sets follow: cannot fail.
        let _ = info.push(&before, m);
    }
    if let Some(stats) = stats
        && m.is_detonation()
    {
        stats.detonated[before.turn().index()] = true;
    }
    game.play_unchecked(m);
}

/// Scores the top-1 guess of `player`'s belief (if it has one) about the opponent's bomb
/// into `accuracy`: the guess sees only `info`; the runner knows the truth (`truth`, the full
/// state, and `origin`, the square the opponent chose).
fn score_guess(
    player: &dyn Player,
    info: &InformationSet,
    truth: &Position,
    origin: Option<Square>,
    accuracy: &mut Accuracy,
) {
    let Some(belief) = player.belief() else { return };
    if info.hidden_origins().is_empty() {
        return;
    }
    let Some(guess) = belief.guess(info) else { return };
    let view = info.view().candidates();
    let candidates = view.squares.count() as usize + usize::from(view.may_be_gone);
    let truth_square = truth.bomb(!info.viewer());
    let hit = guess.square == truth_square;
    let prior = BeliefModel::uniform().guess(info).is_some_and(|g| g.square == truth_square);
    let p = belief
        .origin_probabilities(info)
        .iter()
        .find(|(o, _)| Some(*o) == origin)
        .map_or(0.0, |&(_, p)| f64::from(p));
    accuracy.merge(&Accuracy {
        positions: 1,
        hits: usize::from(hit),
        uniform_hits: 1.0 / candidates.max(1) as f64,
        prior_hits: usize::from(prior),
        log_loss: -p.max(1e-12).ln(),
    });
}
