//! Game analysis (`atomzero analyse`): every position of a game searched with the engine's
//! settings, every move judged as lichess judges it, and the game written back as PGN with
//! the evaluations, the engine's preferred moves and the judgements.
//!
//! - **Evaluations** are the engine's: the search's WDL turned into centipawns
//!   ([`crate::report::q_to_cp`]) or, for a position the MCTS-solver proves, the exact mate
//!   distance ([`crate::report::MateCache`]). In the PGN each move gets `[%eval E]`, the
//!   evaluation of the position after it from White's point of view, in pawns (`0.23`) or as
//!   a mate (`#3`: White mates in 3, `#-2`: Black does; `#0` after the move that ends the
//!   game, python-chess's reading: the side to move has lost), the format lichess exports and
//!   python-chess's `GameNode::eval` reads.
//! - **Judgements** follow lichess (lila's `Advice`): winning chances `2 / (1 + e^(−0.00368208
//!   · cp)) − 1` with `cp` clamped to ±1000, for the side that moved, before and after the
//!   move; a drop of at least 0.3 is a blunder (`??`, NAG `$4`), 0.2 a mistake (`?`, `$2`),
//!   0.1 an inaccuracy (`?!`, `$6`). Mates: allowing a forced mate where none was is a
//!   blunder (a mistake when the mover was already below −7 pawns, an inaccuracy below −10);
//!   letting a forced mate go is a blunder (a mistake when still above +7 pawns, an
//!   inaccuracy above +10). A move the engine also prefers is never judged.
//! - **The engine's move** where it differs from the one played: a variation in its place
//!   (the move and the principal variation after it, up to [`AnalysisConfig::pv_plies`]
//!   plies), and for a judged move the comment says which move was best, as lichess writes.
//!
//! Positions are searched independently (no tree carried from one to the next), so
//! [`AnalysisConfig::threads`] searches run at once, each on its own thread. The budget of a
//! search is a number of playouts, a time, or both (whichever ends first); a proven root ends
//! its search early.

use crate::report::{self, MateCache, Score};
use atomzero_mcts::{EvalRequest, Evaluator, Leaf, Proven, Search, SearchConfig};
use atomzero_rules::{Color, Game, Move, MoveNote, PgnGame, Position};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How each position is searched.
#[derive(Clone, Debug)]
pub struct AnalysisConfig {
    /// Playouts per position (0: no playout limit; then `movetime` must be set).
    pub nodes: u32,
    /// Time per position (`None`: no time limit).
    pub movetime: Option<Duration>,
    /// Positions searched at once, one thread each.
    pub threads: usize,
    /// Most leaves handed to the evaluator in one call.
    pub max_batch: usize,
    /// The search's settings (the engine's: see `Options::search_config`); root noise is
    /// switched off.
    pub search: SearchConfig,
    /// Seed of the searches' random numbers.
    pub seed: u64,
    /// Most plies of a variation written for the engine's move.
    pub pv_plies: usize,
}

impl Default for AnalysisConfig {
    fn default() -> AnalysisConfig {
        AnalysisConfig {
            nodes: 800,
            movetime: None,
            threads: 1,
            max_batch: 8,
            search: SearchConfig { instant_wins: true, ..SearchConfig::default() },
            seed: 0,
            pv_plies: 6,
        }
    }
}

/// The search's verdict on one position.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionEval {
    /// The evaluation for the side to move (`Mate(0)`: the game is over and it has lost;
    /// a finished draw is `Cp(0)`).
    pub score: Score,
    /// The move the engine would play (`None` when the game is over).
    pub best: Option<Move>,
    /// The principal variation, starting with `best`.
    pub pv: Vec<Move>,
    /// Playouts searched.
    pub nodes: u32,
}

/// How bad a move was (lichess's names and NAGs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Judgement {
    /// `?!`, NAG 6.
    Inaccuracy,
    /// `?`, NAG 2.
    Mistake,
    /// `??`, NAG 4.
    Blunder,
}

impl Judgement {
    /// The numeric annotation glyph.
    pub const fn nag(self) -> u8 {
        match self {
            Judgement::Inaccuracy => 6,
            Judgement::Mistake => 2,
            Judgement::Blunder => 4,
        }
    }

    /// The word lichess writes in its comment.
    pub const fn name(self) -> &'static str {
        match self {
            Judgement::Inaccuracy => "Inaccuracy",
            Judgement::Mistake => "Mistake",
            Judgement::Blunder => "Blunder",
        }
    }
}

/// One move of an analysed game.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveAnalysis {
    /// The move played.
    pub mv: Move,
    /// The evaluation after it, for White (see [`white_score`]).
    pub eval_after: Score,
    /// The engine's move in the position before it, where it differs from the move played.
    pub better: Option<Move>,
    /// The engine's principal variation from the position before the move (starting with
    /// `better`), where it differs.
    pub better_line: Vec<Move>,
    /// The judgement, if the move lost enough.
    pub judgement: Option<Judgement>,
}

/// An analysed game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameAnalysis {
    /// The evaluation of every position, the start included (`moves.len() + 1` of them).
    pub positions: Vec<PositionEval>,
    /// One entry per move.
    pub moves: Vec<MoveAnalysis>,
}

impl GameAnalysis {
    /// How many moves of `color` got each judgement: (inaccuracies, mistakes, blunders).
    pub fn counts(&self, game: &PgnGame, color: Color) -> (usize, usize, usize) {
        let mut counts = (0, 0, 0);
        let mut pos = game.initial;
        for (m, analysis) in game.moves.iter().zip(&self.moves) {
            if pos.turn() == color {
                match analysis.judgement {
                    Some(Judgement::Inaccuracy) => counts.0 += 1,
                    Some(Judgement::Mistake) => counts.1 += 1,
                    Some(Judgement::Blunder) => counts.2 += 1,
                    None => {}
                }
            }
            pos.play_unchecked(*m);
        }
        counts
    }
}

/// Every position of `game` (the start and after each move), with the game before it (for
/// repetitions).
pub fn game_prefixes(game: &PgnGame) -> Vec<Game> {
    let mut prefixes = Vec::with_capacity(game.moves.len() + 1);
    let mut g = Game::new(game.initial);
    prefixes.push(g.clone());
    for &m in &game.moves {
        g.play_unchecked(m);
        prefixes.push(g.clone());
    }
    prefixes
}

/// Searches the last position of `game` within the budget of `config`.
pub fn evaluate_position(
    game: &Game,
    evaluator: &(dyn Evaluator + Sync),
    config: &AnalysisConfig,
) -> PositionEval {
    let pos = *game.position();
    if pos.legal_moves().is_empty() {
        let lost = pos.outcome().is_some_and(|o| o.winner.is_some());
        return PositionEval {
            score: if lost { Score::Mate(0) } else { Score::Cp(0) },
            best: None,
            pv: Vec::new(),
            nodes: 0,
        };
    }
    let started = Instant::now();
    let mut search = Search::new(game, config.search.without_noise(), config.seed);
    let out_of_time = || config.movetime.is_some_and(|t| started.elapsed() >= t);
    loop {
        let visits = search.root_visits();
        let proven = search.root_proven() != Proven::Unknown && visits > 0;
        let out_of_nodes = config.nodes > 0 && visits >= config.nodes;
        if visits > 0 && (proven || out_of_nodes || out_of_time()) {
            break;
        }
        let batch = if config.nodes > 0 {
            config.max_batch.max(1).min((config.nodes - visits) as usize).max(1)
        } else {
            config.max_batch.max(1)
        };
        let leaves = search.gather(batch);
        if leaves.is_empty() {
            if search.root_visits() == visits {
                break;
            }
            continue;
        }
        let requests: Vec<EvalRequest<'_>> = leaves.iter().map(Leaf::request).collect();
        let evaluations = evaluator.evaluate(&requests);
        drop(requests);
        search.apply(&evaluations);
    }
    let pv = search.pv(config.pv_plies.max(1));
    let score = report::root_score(&search, &pv, &mut MateCache::default());
    PositionEval { score, best: search.best_move(), pv, nodes: search.root_visits() }
}

/// Searches every position of every game, `config.threads` at a time; `progress` is called
/// once per position searched (from the searching threads). The result has one entry per
/// game, with one [`PositionEval`] per position of [`game_prefixes`].
pub fn evaluate_games(
    games: &[PgnGame],
    evaluator: &(dyn Evaluator + Sync),
    config: &AnalysisConfig,
    progress: &(dyn Fn() + Sync),
) -> Vec<Vec<PositionEval>> {
    let prefixes: Vec<Vec<Game>> = games.iter().map(game_prefixes).collect();
    let jobs: Vec<(usize, usize)> =
        prefixes.iter().enumerate().flat_map(|(g, p)| (0..p.len()).map(move |i| (g, i))).collect();
    let results: Vec<Mutex<Option<PositionEval>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let j = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(g, i)) = jobs.get(j) else { break };
            let eval = evaluate_position(&prefixes[g][i], evaluator, config);
            *results[j].lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(eval);
            progress();
        }
    };
    let threads = config.threads.clamp(1, jobs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(work);
        }
        work();
    });
    let mut out: Vec<Vec<PositionEval>> =
        prefixes.iter().map(|p| Vec::with_capacity(p.len())).collect();
    for ((g, _), slot) in jobs.into_iter().zip(results) {
        let eval = slot.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Every job ran (the scope joined all threads); a panicking evaluator propagates.
        out[g].push(eval.unwrap_or(PositionEval {
            score: Score::Cp(0),
            best: None,
            pv: Vec::new(),
            nodes: 0,
        }));
    }
    out
}

/// lichess's winning chances in [−1, 1] of centipawns for the side they are counted for.
pub fn winning_chances(cp: i32) -> f64 {
    let cp = f64::from(cp.clamp(-1000, 1000));
    2.0 / (1.0 + (-0.003_682_08 * cp).exp()) - 1.0
}

/// `score` (for the side to move in `pos`) from White's point of view.
pub fn white_score(pos: &Position, score: Score) -> Score {
    if pos.turn() == Color::White {
        return score;
    }
    match score {
        Score::Cp(cp) => Score::Cp(-cp),
        // Mate(0) (the side to move has lost) keeps its 0: see `eval_comment`.
        Score::Mate(n) => Score::Mate(-n),
    }
}

/// The judgement of a move from its evaluations for the side that played it: `before` (the
/// position it was played in) and `after` (the position it leads to), lichess's rules (see
/// the module documentation).
pub fn judge(before: Score, after: Score) -> Option<Judgement> {
    match (before, after) {
        (Score::Cp(b), Score::Cp(a)) => {
            let drop = winning_chances(b) - winning_chances(a);
            if drop >= 0.3 {
                Some(Judgement::Blunder)
            } else if drop >= 0.2 {
                Some(Judgement::Mistake)
            } else if drop >= 0.1 {
                Some(Judgement::Inaccuracy)
            } else {
                None
            }
        }
        // A mate allowed where there was none.
        (Score::Cp(b), Score::Mate(a)) if a < 0 => Some(if b < -999 {
            Judgement::Inaccuracy
        } else if b < -700 {
            Judgement::Mistake
        } else {
            Judgement::Blunder
        }),
        // A forced mate let go (or turned into being mated).
        (Score::Mate(b), after) if b > 0 && !matches!(after, Score::Mate(a) if a > 0) => {
            let a = match after {
                Score::Cp(a) => a,
                Score::Mate(_) => -report::MAX_CP,
            };
            Some(if a > 999 {
                Judgement::Inaccuracy
            } else if a > 700 {
                Judgement::Mistake
            } else {
                Judgement::Blunder
            })
        }
        _ => None,
    }
}

/// `score` for the side that moved into a position, from the score for the side to move
/// there (`Mate(0)`, that side has lost, becomes a mate given: `Mate(1)`'s sign with no
/// distance left, counted as a won mate).
fn for_mover(after: Score) -> Score {
    match after {
        Score::Cp(cp) => Score::Cp(-cp),
        Score::Mate(0) => Score::Mate(1),
        Score::Mate(n) => Score::Mate(-n),
    }
}

/// The analysis of `game` from the evaluations of its positions (`evals`, one per position
/// of [`game_prefixes`]).
pub fn judge_game(game: &PgnGame, evals: Vec<PositionEval>) -> GameAnalysis {
    let mut moves = Vec::with_capacity(game.moves.len());
    let mut pos = game.initial;
    for (i, &m) in game.moves.iter().enumerate() {
        let (before, after) = (&evals[i], &evals[i + 1]);
        let differs = before.best.is_some_and(|b| b != m);
        let judgement = if differs { judge(before.score, for_mover(after.score)) } else { None };
        let mut next = pos;
        next.play_unchecked(m);
        moves.push(MoveAnalysis {
            mv: m,
            eval_after: white_score(&next, after.score),
            better: if differs { before.best } else { None },
            better_line: if differs { before.pv.clone() } else { Vec::new() },
            judgement,
        });
        pos = next;
    }
    GameAnalysis { positions: evals, moves }
}

/// The `[%eval ...]` command of a score for White (lichess's format).
pub fn eval_command(white: Score) -> String {
    match white {
        Score::Cp(cp) => format!("[%eval {:.2}]", f64::from(cp) / 100.0),
        Score::Mate(n) => format!("[%eval #{n}]"),
    }
}

/// The game as PGN with the analysis: `[%eval]` on every move, NAGs and lichess's comment on
/// judged moves, the engine's line where it differs. `annotator` goes into the `[Annotator]`
/// tag.
pub fn annotated_pgn(game: &PgnGame, analysis: &GameAnalysis, annotator: &str) -> String {
    let mut notes = Vec::with_capacity(analysis.moves.len());
    let mut pos = game.initial;
    for m in &analysis.moves {
        let mut comment = eval_command(m.eval_after);
        if let (Some(j), Some(better)) = (m.judgement, m.better) {
            comment.push_str(&format!(" {}. {} was best.", j.name(), pos.san(better)));
        }
        notes.push(MoveNote {
            nags: m.judgement.map(|j| vec![j.nag()]).unwrap_or_default(),
            comment,
            variation: m.better_line.clone(),
        });
        pos.play_unchecked(m.mv);
    }
    let mut annotated = game.clone();
    annotated.set_tag("Annotator", annotator);
    annotated.write_annotated(&notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn winning_chances_follow_lichess() {
        assert_eq!(winning_chances(0), 0.0);
        assert!((winning_chances(100) - 0.1820).abs() < 1e-3, "{}", winning_chances(100));
        assert!((winning_chances(-300) + 0.5023).abs() < 1e-3);
        assert_eq!(winning_chances(5000), winning_chances(1000));
    }

    #[test]
    fn judgements_follow_lichess_thresholds() {
        // +1.00 to -0.50: chances 0.182 -> -0.091, a drop of 0.27: a mistake.
        assert_eq!(judge(Score::Cp(100), Score::Cp(-50)), Some(Judgement::Mistake));
        assert_eq!(judge(Score::Cp(100), Score::Cp(-200)), Some(Judgement::Blunder));
        assert_eq!(judge(Score::Cp(100), Score::Cp(60)), None);
        assert_eq!(judge(Score::Cp(100), Score::Cp(30)), Some(Judgement::Inaccuracy));
        assert_eq!(judge(Score::Cp(50), Score::Cp(-20)), Some(Judgement::Inaccuracy));
        // Equal chances when both are far beyond 1000 cp: nothing lost.
        assert_eq!(judge(Score::Cp(3000), Score::Cp(1500)), None);
        // Mates allowed and let go.
        assert_eq!(judge(Score::Cp(0), Score::Mate(-2)), Some(Judgement::Blunder));
        assert_eq!(judge(Score::Cp(-800), Score::Mate(-2)), Some(Judgement::Mistake));
        assert_eq!(judge(Score::Cp(-1200), Score::Mate(-2)), Some(Judgement::Inaccuracy));
        assert_eq!(judge(Score::Mate(2), Score::Cp(300)), Some(Judgement::Blunder));
        assert_eq!(judge(Score::Mate(2), Score::Cp(1500)), Some(Judgement::Inaccuracy));
        assert_eq!(judge(Score::Mate(2), Score::Mate(-1)), Some(Judgement::Blunder));
        assert_eq!(judge(Score::Mate(2), Score::Mate(3)), None);
        assert_eq!(judge(Score::Mate(-2), Score::Mate(-1)), None);
    }

    #[test]
    fn eval_commands_are_lichess_format_for_white() {
        assert_eq!(eval_command(Score::Cp(23)), "[%eval 0.23]");
        assert_eq!(eval_command(Score::Cp(-150)), "[%eval -1.50]");
        assert_eq!(eval_command(Score::Mate(3)), "[%eval #3]");
        assert_eq!(eval_command(Score::Mate(-2)), "[%eval #-2]");
        let black = Position::from_fen(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            atomzero_rules::Variant::Atomic,
        )
        .unwrap();
        assert_eq!(white_score(&black, Score::Cp(40)), Score::Cp(-40));
        assert_eq!(white_score(&black, Score::Mate(2)), Score::Mate(-2));
        assert_eq!(for_mover(Score::Mate(0)), Score::Mate(1));
        assert_eq!(for_mover(Score::Mate(-2)), Score::Mate(2));
    }
}
