//! Training on games of the bomb variant: a network needs the bomb planes; the inputs of a
//! player's targets do not change when the opponent's hidden choice does (the trainer sees
//! the side to move's view only); the belief is fitted on the window and beats uniform when
//! the players' choices are predictable.

use atomzero_backprop::SparseBatch;
use atomzero_encoding::{Encoder, EncoderConfig};
use atomzero_mcts::RandomEvaluator;
use atomzero_nn::NetConfig;
use atomzero_nn::burn::tensor::Device;
use atomzero_replay::{GameRecord, ReplayWindow, ShardMeta, window::shard_file_name, write_shard};
use atomzero_rules::{Color, Move, Position, Variant};
use atomzero_selfplay::{Openings, SelfplayConfig, SelfplayEvent};
use atomzero_train::data::build_batch;
use atomzero_train::{TrainOptions, TrainerConfig, train};
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("atomzero-train-bomb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Bomb self-play with a random evaluator (every move a target).
fn bomb_games(games: usize, seed: u64) -> Vec<GameRecord> {
    let config = SelfplayConfig {
        threads: 1,
        games_per_worker: 8,
        visits: 16,
        cheap_visits: 4,
        full_search_fraction: 1.0,
        max_plies: 60,
        determinizations: 2,
        ..SelfplayConfig::default()
    };
    let mut records = Vec::new();
    atomzero_selfplay::run(
        &RandomEvaluator { seed: 3 },
        &config,
        Variant::Bomb,
        &Openings::RandomPlies(2),
        games,
        0,
        seed,
        |e| {
            if let SelfplayEvent::Game(r, _) = e {
                records.push(*r);
            }
            true
        },
    );
    records
}

fn net(bomb: bool) -> NetConfig {
    NetConfig {
        blocks: 1,
        filters: 16,
        value_hidden: 16,
        value_channels: 4,
        encoder: EncoderConfig { history: 1, bomb },
        ..NetConfig::tiny()
    }
}

#[test]
fn a_players_training_inputs_do_not_depend_on_the_opponents_hidden_choice() {
    let encoder = Encoder::new(EncoderConfig { history: 2, bomb: true });
    let (mut compared, mut rows) = (0, 0);
    for game in bomb_games(12, 4) {
        // Black's choice (ply 1) swapped for another of its pieces, where the game stays
        // legal: every one of White's targets must encode identically.
        let setup = Position::from_fen(&game.start_fen, Variant::Bomb).unwrap();
        let others = setup.board().by_color(Color::Black) & !setup.board().kings();
        for other in others.into_iter().filter(|&sq| sq != game.moves[1].mv.from()) {
            let mut swapped = game.clone();
            swapped.moves[1].mv = Move::bomb_choice(other);
            let legal = swapped.moves.iter().try_fold(setup, |p, m| p.play(m.mv).ok()).is_some();
            if !legal {
                continue;
            }
            let (a, b) = (
                ReplayWindow::from_games(vec![game.clone()]),
                ReplayWindow::from_games(vec![swapped]),
            );
            let white: Vec<usize> = (0..a.len())
                .filter(|&i| a.get(i, 0).unwrap().position.turn() == Color::White)
                .collect();
            let (mut batch_a, mut batch_b) = (SparseBatch::new(1), SparseBatch::new(1));
            build_batch(&a, &white, &encoder, 0.5, 0.0, &mut batch_a);
            build_batch(&b, &white, &encoder, 0.5, 0.0, &mut batch_b);
            assert_eq!(batch_a.len, white.len());
            assert_eq!(batch_a.inputs, batch_b.inputs, "White's inputs saw Black's bomb");
            compared += 1;
            rows += white.len();
        }
    }
    assert!(compared > 60 && rows > 2_000, "{compared} {rows}");
}

fn options<'a>(data: &'a Path, ckpt: &'a Path, net: NetConfig) -> TrainOptions<'a> {
    TrainOptions {
        data: atomzero_train::Data::Dir(data),
        checkpoint_dir: ckpt,
        tensorboard_dir: None,
        target_step: 5,
        init: None,
        net,
        config: TrainerConfig {
            batch_size: 16,
            checkpoint_every: 1000,
            max_samples_per_position: 1000.0,
            ..TrainerConfig::default()
        },
        variant: "bomb".into(),
        device: Device::default(),
        seed: 3,
        interrupted: None,
    }
}

#[test]
fn bomb_games_train_a_bomb_network_and_fit_the_belief() {
    let dir = temp_dir("train");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    write_shard(&data.join(shard_file_name(0, 0)), &ShardMeta::default(), &bomb_games(16, 2))
        .unwrap();
    let (ckpt_a, ckpt_b) = (dir.join("a"), dir.join("b"));
    let err = train(options(&data, &ckpt_a, net(false)), |_| {}).unwrap_err().to_string();
    assert!(err.contains("net.encoder.bomb = true"), "{err}");
    let summary = train(options(&data, &ckpt_b, net(true)), |_| {}).unwrap();
    assert_eq!(summary.end_step, 5);
    let belief = summary.belief.expect("a belief for bomb games");
    let report = belief.report.unwrap();
    assert_eq!(report.train_games + report.heldout_games, 16);
    assert!(report.heldout.positions > 50, "{}", report.heldout);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn positions_of_games_cut_by_the_ply_limit_can_take_the_search_value() {
    use atomzero_replay::{EndReason, MoveRecord, SearchTarget};
    use atomzero_train::MaxLengthTarget;
    use atomzero_train::data::{ValueTarget, build_batch_with};
    // Two moves of a game adjudicated at the ply limit, each a target with root WDL
    // (0.6, 0.3, 0.1) for its side to move; and the same game ended by the rules (a draw).
    let setup = Position::new(Variant::Bomb);
    let choice = Move::bomb_choice(atomzero_rules::Square::D1);
    let reply = Move::bomb_choice(atomzero_rules::Square::D8);
    let target =
        SearchTarget { policy: vec![(choice, 1.0)], root_wdl: [0.6, 0.3, 0.1], surprise: None };
    let reply_target =
        SearchTarget { policy: vec![(reply, 1.0)], root_wdl: [0.6, 0.3, 0.1], surprise: None };
    let game = |reason| GameRecord {
        variant: Variant::Bomb,
        start_fen: setup.fen(),
        chess960: false,
        moves: vec![
            MoveRecord { mv: choice, target: Some(target.clone()) },
            MoveRecord { mv: reply, target: Some(reply_target.clone()) },
        ],
        winner: None,
        reason,
        resign_disabled: false,
        resign_point: None,
    };
    let encoder = Encoder::new(EncoderConfig { history: 0, bomb: true });
    let wdl = |reason, max_length| {
        let window = ReplayWindow::from_games(vec![game(reason)]);
        let mut batch = SparseBatch::new(1);
        let value = ValueTarget { root_mix: 0.0, lambda: 0.0, greedy: false, max_length };
        build_batch_with(&window, &[0, 1], &encoder, &value, 0.0, &mut batch);
        batch.wdl
    };
    let cut = EndReason::MaxLength;
    let ended = EndReason::Rules(atomzero_rules::Termination::ThreefoldRepetition);
    assert_eq!(wdl(cut, MaxLengthTarget::Search), [0.6, 0.3, 0.1, 0.6, 0.3, 0.1]);
    assert_eq!(wdl(cut, MaxLengthTarget::Draw), [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
    // A game the rules ended keeps its result either way.
    assert_eq!(wdl(ended, MaxLengthTarget::Search), [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
}

#[test]
fn games_cut_by_the_ply_limit_can_be_adjudicated_by_material() {
    use atomzero_replay::{EndReason, MoveRecord, SearchTarget};
    use atomzero_train::MaxLengthTarget;
    use atomzero_train::data::{ValueTarget, build_batch_with};
    // Two quiet moves from a start where Black lacks `missing`, both targets, the game cut
    // by the ply limit (or ended by the rules).
    let game = |missing: &str, reason| {
        let fen = match missing {
            "q" => "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            _ => "rnbqkbnr/ppppppp1/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        };
        let mut pos = Position::from_fen(fen, Variant::Atomic).unwrap();
        let start_fen = pos.fen();
        let mut moves = Vec::new();
        for uci in ["g1f3", "g8f6"] {
            let mv = pos.parse_uci(uci).unwrap();
            let target =
                SearchTarget { policy: vec![(mv, 1.0)], root_wdl: [0.2, 0.3, 0.5], surprise: None };
            moves.push(MoveRecord { mv, target: Some(target) });
            pos.play_unchecked(mv);
        }
        GameRecord {
            variant: Variant::Atomic,
            start_fen,
            chess960: false,
            moves,
            winner: None,
            reason,
            resign_disabled: false,
            resign_point: None,
        }
    };
    let encoder = Encoder::new(EncoderConfig::default());
    let wdl = |record, max_length, mix| {
        let window = ReplayWindow::from_games(vec![record]);
        let mut batch = SparseBatch::new(1);
        let value = ValueTarget { root_mix: mix, lambda: 0.0, greedy: false, max_length };
        build_batch_with(&window, &[0, 1], &encoder, &value, 0.0, &mut batch);
        batch.wdl
    };
    let cut = EndReason::MaxLength;
    let material = MaxLengthTarget::Material;
    // A queen down: White (to move at ply 0) wins, Black (ply 1) loses.
    assert_eq!(wdl(game("q", cut), material, 0.0), [1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    // Mixed with the root value like any result.
    let mixed = wdl(game("q", cut), material, 0.5);
    let expected = [0.6, 0.15, 0.25, 0.1, 0.15, 0.75];
    assert!(mixed.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-6), "{mixed:?}");
    // A pawn down is below the margin: a draw.
    assert_eq!(wdl(game("p", cut), material, 0.0), [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
    // Games the rules ended, and the other settings, are unchanged.
    let ended = EndReason::Rules(atomzero_rules::Termination::ThreefoldRepetition);
    assert_eq!(wdl(game("q", ended), material, 0.0), [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
    assert_eq!(wdl(game("q", cut), MaxLengthTarget::Draw, 0.0), [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
}

/// `train.value_target_lambda`: the searched part of the value target is the λ-return over
/// the game's searched positions from this one on, each root WDL seen from this side to move
/// (flipped on the opponent's plies), the rest of the weight on the result; λ = 0 is the
/// position's own root WDL, and a game cut by the ply limit under `max_length_target =
/// "search"` spreads the result's weight over the searched positions.
#[test]
fn the_lambda_return_looks_ahead_over_the_searched_positions() {
    use atomzero_replay::{EndReason, MoveRecord, SearchTarget};
    use atomzero_train::MaxLengthTarget;
    use atomzero_train::data::{ValueTarget, build_batch_with};
    // Four quiet plies; plies 0, 1 and 3 searched (ply 2 a cheap search without a target).
    let mut pos = Position::new(Variant::Atomic);
    let start_fen = pos.fen();
    let roots = [Some([0.5, 0.5, 0.0]), Some([0.1, 0.2, 0.7]), None, Some([0.0, 0.0, 1.0])];
    let mut moves = Vec::new();
    for (uci, root) in ["g1f3", "g8f6", "b1c3", "b8c6"].into_iter().zip(roots) {
        let mv = pos.parse_uci(uci).unwrap();
        let target =
            root.map(|root_wdl| SearchTarget { policy: vec![(mv, 1.0)], root_wdl, surprise: None });
        moves.push(MoveRecord { mv, target });
        pos.play_unchecked(mv);
    }
    let game = |winner, reason| GameRecord {
        variant: Variant::Atomic,
        start_fen: start_fen.clone(),
        chess960: false,
        moves: moves.clone(),
        winner,
        reason,
        resign_disabled: false,
        resign_point: None,
    };
    let encoder = Encoder::new(EncoderConfig::default());
    let wdl = |record, value: ValueTarget| {
        let window = ReplayWindow::from_games(vec![record]);
        assert_eq!(window.len(), 3);
        let mut batch = SparseBatch::new(1);
        build_batch_with(&window, &[0, 1, 2], &encoder, &value, 0.0, &mut batch);
        batch.wdl
    };
    let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6);
    let won = || game(Some(Color::White), EndReason::Resignation);
    let draw = MaxLengthTarget::Draw;
    let value =
        |root_mix, lambda, max_length| ValueTarget { root_mix, lambda, greedy: false, max_length };
    // λ = 0: each position's own root WDL.
    let own = wdl(won(), value(1.0, 0.0, draw));
    assert!(close(&own, &[0.5, 0.5, 0.0, 0.1, 0.2, 0.7, 0.0, 0.0, 1.0]), "{own:?}");
    // λ = 0.5, White won. Ply 0 (White): 0.5·v0 + 0.25·flip(v1) + 0.125·flip(v3) + 0.125·win.
    // Ply 1 (Black): 0.5·v1 + 0.25·v3 + 0.25·loss. Ply 3 (Black): 0.5·v3 + 0.5·loss.
    let ahead = wdl(won(), value(1.0, 0.5, draw));
    let expected = [
        0.25 + 0.175 + 0.125 + 0.125,
        0.25 + 0.05,
        0.025,
        0.05,
        0.1,
        0.35 + 0.25 + 0.25,
        0.0,
        0.0,
        1.0,
    ];
    assert!(close(&ahead, &expected), "{ahead:?} against {expected:?}");
    // Mixed with the result by root_mix as before: half of each.
    let mixed = wdl(won(), value(0.5, 0.5, draw));
    let result = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
    let half: Vec<f32> = expected.iter().zip(result).map(|(e, z)| 0.5 * e + 0.5 * z).collect();
    assert!(close(&mixed, &half), "{mixed:?} against {half:?}");
    // Cut by the ply limit with the search's value: the result's weight spread over the
    // searched positions (ply 3: its own root WDL; ply 1: (0.5·v1 + 0.25·v3) / 0.75).
    let cut = wdl(game(None, EndReason::MaxLength), value(0.5, 0.5, MaxLengthTarget::Search));
    let spread = [0.1 * 2.0 / 3.0, 0.2 * 2.0 / 3.0, (0.35 + 0.25) / 0.75];
    assert!(close(&cut[3..6], &spread), "{cut:?}");
    assert!(close(&cut[6..], &[0.0, 0.0, 1.0]), "{cut:?}");
    // With `greedy` and every move the search's choice, nothing changes.
    let chosen = |record| wdl(record, ValueTarget { greedy: true, ..value(1.0, 0.5, draw) });
    assert!(close(&chosen(won()), &expected), "{:?}", chosen(won()));
    // Ply 1's move sampled for exploration (its target preferred another move): ply 0's
    // return stops there, 0.5·v0 + 0.5·flip(v1), and ply 1's target is its own root WDL;
    // ply 3 is as before.
    let sampled = {
        let mut record = won();
        let mut at = Position::new(Variant::Atomic);
        at.play_unchecked(record.moves[0].mv);
        let played = record.moves[1].mv;
        let other = at.legal_moves().iter().copied().find(|&m| m != played).unwrap();
        let target = record.moves[1].target.as_mut().unwrap();
        target.policy = vec![(other, 0.6), (played, 0.4)];
        record
    };
    let stopped = chosen(sampled);
    let expected = [0.25 + 0.35, 0.25 + 0.1, 0.05, 0.1, 0.2, 0.7, 0.0, 0.0, 1.0];
    assert!(close(&stopped, &expected), "{stopped:?} against {expected:?}");
}
