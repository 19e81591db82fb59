//! The trainer on real replay data: the loss falls, a resumed run equals an uninterrupted one,
//! TensorBoard files parse, and bad inputs fail cleanly without overwriting anything.

use atomzero_mcts::RandomEvaluator;
use atomzero_nn::burn::tensor::Device;
use atomzero_nn::{NetConfig, NetEvaluator, Provenance};
use atomzero_replay::{ShardMeta, window::shard_file_name, write_shard};
use atomzero_rules::{Position, Variant};
use atomzero_selfplay::{Openings, SelfplayConfig, SelfplayEvent};
use atomzero_train::tensorboard::read_scalars;
use atomzero_train::{Backend, TrainOptions, TrainerConfig, train};
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atomzero-train-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A few self-play games with a random evaluator, written as one shard.
fn make_data(dir: &Path, games: usize) {
    let config = SelfplayConfig {
        threads: 1,
        games_per_worker: 8,
        visits: 16,
        cheap_visits: 4,
        full_search_fraction: 1.0,
        max_plies: 60,
        ..SelfplayConfig::default()
    };
    let mut records = Vec::new();
    atomzero_selfplay::run(
        &RandomEvaluator { seed: 3 },
        &config,
        Variant::Atomic,
        &Openings::RandomPlies(2),
        games,
        0,
        5,
        |e| {
            if let SelfplayEvent::Game(r, _) = e {
                records.push(*r);
            }
            true
        },
    );
    write_shard(&dir.join(shard_file_name(0, 0)), &ShardMeta::default(), &records).unwrap();
}

fn tiny() -> NetConfig {
    NetConfig { blocks: 1, filters: 16, value_hidden: 16, value_channels: 4, ..NetConfig::tiny() }
}

fn config() -> TrainerConfig {
    TrainerConfig {
        batch_size: 32,
        learning_rate: 3e-3,
        warmup_steps: 5,
        checkpoint_every: 1000,
        log_every: 5,
        max_samples_per_position: 1000.0,
        ..TrainerConfig::default()
    }
}

fn options<'a>(
    data: &'a Path,
    ckpt: &'a Path,
    tb: Option<&'a Path>,
    init: Option<&'a Path>,
    target: u64,
) -> TrainOptions<'a> {
    TrainOptions {
        data: atomzero_train::Data::Dir(data),
        checkpoint_dir: ckpt,
        tensorboard_dir: tb,
        target_step: target,
        init,
        net: tiny(),
        config: config(),
        variant: "atomic".into(),
        device: Device::default(),
        seed: 11,
        interrupted: None,
    }
}

#[test]
fn loss_falls_and_tensorboard_parses() {
    let dir = temp_dir("loss");
    make_data(&dir.join("data"), 24);
    let (data, ckpt, tb) = (dir.join("data"), dir.join("ckpt"), dir.join("tb"));
    let mut reports = 0;
    let summary = train(options(&data, &ckpt, Some(&tb), None, 60), |_| reports += 1).unwrap();
    assert_eq!((summary.start_step, summary.end_step, reports), (0, 60, 60));
    assert!(
        summary.last_loss < summary.first_loss * 0.9,
        "loss {} -> {}",
        summary.first_loss,
        summary.last_loss
    );
    let file = std::fs::read_dir(&tb).unwrap().next().unwrap().unwrap().path();
    let scalars = read_scalars(&file).unwrap();
    for tag in [
        "loss/total",
        "loss/policy",
        "loss/value",
        "policy/entropy",
        "value/accuracy",
        "train/learning_rate",
        "train/samples_per_sec",
        "train/grad_norm",
    ] {
        assert_eq!(scalars.iter().filter(|s| s.0 == tag).count(), 12, "{tag}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Outputs of a net on fixed positions, for comparing weights.
fn outputs(net: &atomzero_nn::Net) -> Vec<f32> {
    let eval = NetEvaluator::new(net, &Device::default(), 16);
    let mut pos = Position::new(Variant::Atomic);
    let mut out = Vec::new();
    for uci in ["e2e4", "d7d5", "e4d5", "g8f6"] {
        let moves = pos.legal_moves();
        let req = atomzero_mcts::EvalRequest {
            position: &pos,
            history: &[],
            repetitions: 0,
            moves: &moves,
        };
        let evals = atomzero_mcts::Evaluator::evaluate(&eval, &[req]);
        let e = evals.get(0).unwrap();
        out.extend_from_slice(e.priors);
        out.extend_from_slice(&e.wdl);
        pos = pos.play(pos.parse_uci(uci).unwrap()).unwrap();
    }
    out
}

/// A randomly initialised [`tiny`] net saved as `dir/init.safetensors`: a shared starting point.
fn save_random_net(dir: &Path) -> PathBuf {
    let init = dir.join("init.safetensors");
    let provenance =
        Provenance { variant: "atomic".into(), training_step: 0, parent: None, belief: None };
    tiny().init(&Device::default()).unwrap().save(&init, &provenance).unwrap();
    init
}

/// [`options`] without TensorBoard or an initial net.
fn super_options<'a>(data: &'a Path, ckpt: &'a Path, target: u64) -> TrainOptions<'a> {
    options(data, ckpt, None, None, target)
}

/// `options` for one engine.
fn with_backend(mut options: TrainOptions<'_>, backend: Backend) -> TrainOptions<'_> {
    options.config.backend = backend;
    options
}

#[test]
fn resumed_training_equals_uninterrupted_training() {
    for backend in [Backend::Burn, Backend::Atomzero] {
        resumed_training_equals_uninterrupted_training_on(backend);
    }
}

fn resumed_training_equals_uninterrupted_training_on(backend: Backend) {
    let dir = temp_dir(&format!("resume-{backend:?}"));
    make_data(&dir.join("data"), 12);
    let data = dir.join("data");
    let options =
        |ckpt, init, target| with_backend(options(&data, ckpt, None, init, target), backend);
    // A shared starting point.
    let init = save_random_net(&dir);
    let device = Device::default();

    let (a_dir, b_dir) = (dir.join("a"), dir.join("b"));
    let one_go = train(options(&a_dir, Some(&init), 20), |_| {}).unwrap();
    let first_half = train(options(&b_dir, Some(&init), 10), |_| {}).unwrap();
    assert_eq!(first_half.end_step, 10);
    // "Kill" here: only the checkpoint directory carries over.
    let second_half = train(options(&b_dir, Some(&init), 20), |_| {}).unwrap();
    assert_eq!((second_half.start_step, second_half.end_step), (10, 20));
    assert!(second_half.resumed_from.is_some() && !second_half.optimizer_restarted);
    let (a, b) = (outputs(&one_go.net), outputs(&second_half.net));
    let max_diff = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    assert!(max_diff < 1e-4, "{backend:?}: resumed run differs by {max_diff}");
    // And training did change the net.
    let (init_net, _) = atomzero_nn::load(&init, &device).unwrap();
    let c = outputs(&init_net);
    assert!(a.iter().zip(&c).any(|(x, y)| (x - y).abs() > 1e-3));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_inputs_fail_cleanly_without_overwriting() {
    for (backend, model) in [(Backend::Burn, "model.bpk"), (Backend::Atomzero, "model.safetensors")]
    {
        bad_inputs_fail_cleanly_without_overwriting_on(backend, model);
    }
}

fn bad_inputs_fail_cleanly_without_overwriting_on(backend: Backend, model: &str) {
    let dir = temp_dir(&format!("bad-{backend:?}"));
    let ckpt = dir.join("ckpt");
    fn options<'a>(
        data: &'a Path,
        ckpt: &'a Path,
        target: u64,
        backend: Backend,
    ) -> TrainOptions<'a> {
        with_backend(super_options(data, ckpt, target), backend)
    }
    // No data directory.
    let err = train(options(&dir.join("nope"), &ckpt, 5, backend), |_| {}).unwrap_err().to_string();
    assert!(err.contains("nope"), "{err}");
    // An empty data directory.
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let err =
        train(options(&dir.join("empty"), &ckpt, 5, backend), |_| {}).unwrap_err().to_string();
    assert!(err.contains("no training data"), "{err}");
    // A checkpoint of another architecture.
    make_data(&dir.join("data"), 4);
    let data = dir.join("data");
    train(options(&data, &ckpt, 3, backend), |_| {}).unwrap();
    let saved = ckpt.join("step-00000003").join(model);
    let before = std::fs::read(&saved).unwrap();
    let mut opts = options(&data, &ckpt, 6, backend);
    opts.net.filters = 24;
    let err = train(opts, |_| {}).unwrap_err().to_string();
    assert!(err.contains("filters"), "{err}");
    // A corrupt checkpoint.
    std::fs::write(&saved, b"garbage").unwrap();
    let err = train(options(&data, &ckpt, 6, backend), |_| {}).unwrap_err().to_string();
    assert!(err.contains(model), "{err}");
    std::fs::write(&saved, &before).unwrap();
    std::fs::write(ckpt.join("step-00000003/state.json"), b"{").unwrap();
    let err = train(options(&data, &ckpt, 6, backend), |_| {}).unwrap_err().to_string();
    assert!(err.contains("state.json"), "{err}");
    // Nothing was overwritten by the failed runs.
    assert_eq!(std::fs::read(&saved).unwrap(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_checkpoint_of_either_engine_resumes_on_the_other() {
    let dir = temp_dir("cross");
    make_data(&dir.join("data"), 8);
    let data = dir.join("data");
    for (first, second) in [(Backend::Burn, Backend::Atomzero), (Backend::Atomzero, Backend::Burn)]
    {
        let ckpt = dir.join(format!("{first:?}"));
        let opts =
            |backend, target| with_backend(options(&data, &ckpt, None, None, target), backend);
        let a = train(opts(first, 4), |_| {}).unwrap();
        // The other engine takes the weights and starts its optimizer afresh...
        let b = train(opts(second, 8), |_| {}).unwrap();
        assert_eq!((b.start_step, b.end_step), (4, 8));
        assert!(b.optimizer_restarted, "{first:?} -> {second:?}");
        assert_ne!(a.engine, b.engine);
        // ...from exactly the weights the first one saved: no step taken, same outputs.
        let c = train(opts(second, 8), |_| {}).unwrap();
        assert_eq!((c.start_step, c.end_step, c.optimizer_restarted), (8, 8, false));
        let (x, y) = (outputs(&b.net), outputs(&c.net));
        assert!(x.iter().zip(&y).all(|(p, q)| (p - q).abs() < 1e-5));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn regression_every_batch_row_is_its_own_position() {
    // The batch builder reused one input buffer without zeroing it, so every position carried
    // the pieces of those encoded before it (both engines then learned from garbage).
    let dir = temp_dir("rows");
    make_data(&dir.join("data"), 6);
    let window = atomzero_replay::ReplayWindow::load(&dir.join("data"), 10_000).unwrap();
    let encoder = atomzero_encoding::Encoder::new(Default::default());
    let mut batch = atomzero_backprop::SparseBatch::new(encoder.planes());
    let indices: Vec<usize> = (0..window.len()).step_by(3).collect();
    atomzero_train::data::build_batch(&window, &indices, &encoder, 0.0, 0.0, &mut batch);
    assert_eq!(batch.len, indices.len());
    let per = encoder.planes() * 64;
    for (row, &i) in indices.iter().enumerate() {
        let sample = window.get(i, 0).unwrap();
        let mut expected = vec![0.0f32; per];
        let pos = &sample.position;
        encoder.encode_flat(pos, pos.turn(), &sample.history, sample.repetitions, &mut expected);
        assert_eq!(&batch.inputs[row * per..(row + 1) * per], &expected[..], "row {row}");
        // Every legal move is listed once and the targets sum to 1.
        let (legal, targets) = batch.policy(row);
        assert_eq!(legal.len(), pos.legal_moves().len());
        let total: f32 = targets.iter().sum();
        assert!((total - 1.0).abs() < 1e-5, "row {row}: targets sum to {total}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn opponent_replies_are_the_next_search_target_or_the_move_played() {
    let dir = temp_dir("replies");
    make_data(&dir.join("data"), 4);
    let loaded = atomzero_replay::ReplayWindow::load(&dir.join("data"), 10_000).unwrap();
    // Every ply was searched in full; strip the targets of odd plies so that even plies'
    // replies have only the move played.
    let games: Vec<_> = loaded
        .games()
        .iter()
        .cloned()
        .map(|mut g| {
            g.moves.iter_mut().skip(1).step_by(2).for_each(|m| m.target = None);
            g
        })
        .collect();
    let window = atomzero_replay::ReplayWindow::from_games(games);
    let encoder = atomzero_encoding::Encoder::new(Default::default());
    let mut batch = atomzero_backprop::SparseBatch::new(encoder.planes());
    let indices: Vec<usize> = (0..window.len()).collect();
    atomzero_train::data::build_batch(&window, &indices, &encoder, 0.0, 0.15, &mut batch);
    let (mut with_reply, mut last_plies) = (0, 0);
    for (row, &i) in indices.iter().enumerate() {
        let sample = window.get(i, 0).unwrap();
        let (legal, targets) = batch.reply(row);
        let Some(reply) = sample.reply else {
            assert!(legal.is_empty(), "row {row}: the game ended, no reply");
            last_plies += 1;
            continue;
        };
        let after = sample.position.play(sample.played).unwrap();
        let expected: Vec<u16> = after
            .legal_moves()
            .iter()
            .map(|&m| atomzero_encoding::reply_index(&after, m) as u16)
            .collect();
        assert_eq!(legal, &expected[..], "row {row}");
        let total: f32 = targets.iter().sum();
        assert!((total - 0.15).abs() < 1e-6, "row {row}: targets sum to {total}");
        // The reply was not searched in full: all the weight is on the move played.
        assert!(reply.target.is_none());
        let played = atomzero_encoding::reply_index(&after, reply.mv) as u16;
        for (&index, &t) in legal.iter().zip(targets) {
            assert_eq!(t > 0.0, index == played, "row {row}");
        }
        with_reply += 1;
    }
    assert!(with_reply > 20 && last_plies <= 4, "{with_reply} replies, {last_plies} last plies");
    // With the full targets the reply's weights follow the next ply's search target.
    let mut batch = atomzero_backprop::SparseBatch::new(encoder.planes());
    let indices: Vec<usize> = (0..loaded.len()).collect();
    atomzero_train::data::build_batch(&loaded, &indices, &encoder, 0.0, 0.15, &mut batch);
    let spread =
        (0..batch.len).filter(|&r| batch.reply(r).1.iter().filter(|&&t| t > 0.0).count() > 1);
    assert!(spread.count() > indices.len() / 2);
    // No weight: no replies.
    atomzero_train::data::build_batch(&loaded, &indices, &encoder, 0.0, 0.0, &mut batch);
    assert!(!batch.has_replies());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_net_with_an_opponent_policy_head_trains_on_both_engines() {
    let dir = temp_dir("reply-train");
    make_data(&dir.join("data"), 12);
    let data = dir.join("data");
    for backend in [Backend::Burn, Backend::Atomzero] {
        let (ckpt, tb) =
            (dir.join(format!("ckpt-{backend:?}")), dir.join(format!("tb-{backend:?}")));
        let mut opts = with_backend(options(&data, &ckpt, Some(&tb), None, 20), backend);
        opts.net.opponent_policy = true;
        let summary = train(opts, |_| {}).unwrap();
        assert!(summary.net.config().opponent_policy);
        assert!(summary.last_loss < summary.first_loss, "{backend:?}");
        let file = std::fs::read_dir(&tb).unwrap().next().unwrap().unwrap().path();
        let scalars = read_scalars(&file).unwrap();
        let reply: Vec<f32> =
            scalars.iter().filter(|s| s.0 == "loss/opponent_policy").map(|s| s.2).collect();
        assert_eq!(reply.len(), 4, "{backend:?}");
        // Weighted by 0.15: a cross-entropy over ~20-40 replies of a few nats, times 0.15.
        assert!(reply.iter().all(|&r| r > 0.05 && r < 1.5), "{backend:?}: {reply:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn regression_checkpoint_keeps_batchnorm_running_statistics() {
    // The training module's running statistics lag one step; a checkpoint must hold the
    // folded values or a reloaded net answers differently.
    // (Found while writing the resume-equivalence test.)
    let dir = temp_dir("reload");
    make_data(&dir.join("data"), 12);
    let data = dir.join("data");
    let a = train(options(&data, &dir.join("a"), None, None, 10), |_| {}).unwrap();
    let b = train(options(&data, &dir.join("a"), None, None, 10), |_| {}).unwrap();
    assert_eq!(b.start_step, 10);
    let (x, y) = (outputs(&a.net), outputs(&b.net));
    let max_diff = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).fold(0.0f32, f32::max);
    assert!(max_diff < 1e-6, "reload differs by {max_diff}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tensorboard_gets_the_final_step_between_two_cadence_steps() {
    // log_every = 5: a call ending at step 7 logs steps 5 and 7; resumed to 12, steps 10 and 12.
    let dir = temp_dir("tb-final");
    make_data(&dir.join("data"), 4);
    let (data, ckpt, tb) = (dir.join("data"), dir.join("ckpt"), dir.join("tb"));
    train(options(&data, &ckpt, Some(&tb), None, 7), |_| {}).unwrap();
    train(options(&data, &ckpt, Some(&tb), None, 12), |_| {}).unwrap();
    let mut steps: Vec<i64> = Vec::new();
    for file in std::fs::read_dir(&tb).unwrap() {
        let scalars = read_scalars(&file.unwrap().path()).unwrap();
        steps.extend(scalars.iter().filter(|s| s.0 == "loss/total").map(|s| s.1));
    }
    steps.sort_unstable();
    assert_eq!(steps, [5, 7, 10, 12]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn checkpoints_of_encoding_version_1_resume_and_unknown_versions_are_refused() {
    // Version 2 only added the Balanced start's setup position: a version-1 checkpoint resumes.
    let dir = temp_dir("encoding");
    make_data(&dir.join("data"), 4);
    let (data, ckpt) = (dir.join("data"), dir.join("ckpt"));
    train(options(&data, &ckpt, None, None, 3), |_| {}).unwrap();
    let state = ckpt.join("step-00000003/state.json");
    let set_version = |version: u32| {
        let mut value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
        value["encoding_version"] = version.into();
        std::fs::write(&state, serde_json::to_vec(&value).unwrap()).unwrap();
    };
    set_version(99);
    let err = train(options(&data, &ckpt, None, None, 5), |_| {}).unwrap_err().to_string();
    assert!(err.contains("encoding version 99"), "{err}");
    set_version(1);
    let resumed = train(options(&data, &ckpt, None, None, 5), |_| {}).unwrap();
    assert_eq!((resumed.start_step, resumed.end_step), (3, 5));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A window of one game whose targets have the policy surprises `surprises`, in order.
fn window_with_surprises(surprises: &[Option<f32>]) -> atomzero_replay::ReplayWindow {
    use atomzero_replay::{EndReason, GameRecord, MoveRecord, SearchTarget};
    let mut pos = Position::new(Variant::Atomic);
    let mut moves = Vec::new();
    for &surprise in surprises {
        // Knights out and back: never a capture, never the end of the game.
        let uci = ["g1f3", "g8f6", "f3g1", "f6g8"][moves.len() % 4];
        let mv = pos.parse_uci(uci).unwrap();
        let target = SearchTarget { policy: vec![(mv, 1.0)], root_wdl: [0.4, 0.2, 0.4], surprise };
        moves.push(MoveRecord { mv, target: Some(target) });
        pos = pos.play(mv).unwrap();
    }
    atomzero_replay::ReplayWindow::from_games(vec![GameRecord {
        variant: Variant::Atomic,
        start_fen: Position::new(Variant::Atomic).fen(),
        chess960: false,
        moves,
        winner: None,
        reason: EndReason::MaxLength,
        resign_disabled: false,
        resign_point: None,
    }])
}

#[test]
fn policy_surprise_weights_are_half_uniform_half_proportional_and_picked_by_weight() {
    use atomzero_train::{pick_weighted, surprise_table};
    // Surprises 0, 1, 3 and one not measured (counted as the mean, 4/3).
    let window = window_with_surprises(&[Some(0.0), Some(1.0), Some(3.0), None]);
    assert!(surprise_table(&window, 0.0).is_none(), "share 0 samples uniformly");
    let (table, measured) = surprise_table(&window, 0.5).unwrap();
    assert_eq!(measured, 3);
    let weights: Vec<f64> =
        table.iter().scan(0.0, |prev, &c| Some(c - std::mem::replace(prev, c))).collect();
    let mean = 4.0 / 3.0;
    let expected = [0.5, 0.5 + 0.5 / mean, 0.5 + 0.5 * 3.0 / mean, 1.0];
    for (w, e) in weights.iter().zip(expected) {
        assert!((w - e).abs() < 1e-9, "{weights:?} against {expected:?}");
    }
    // Share 1: a target without surprise is never drawn.
    let (table, _) = surprise_table(&window, 1.0).unwrap();
    // A fine grid of uniform draws lands on each target in proportion to its weight.
    let n = 100_000;
    let mut counts = [0usize; 4];
    for k in 0..n {
        counts[pick_weighted(&table, (k as f64 + 0.5) / n as f64)] += 1;
    }
    let total = table[3];
    let shares: Vec<f64> =
        table.iter().scan(0.0, |prev, &c| Some((c - std::mem::replace(prev, c)) / total)).collect();
    assert_eq!(counts[0], 0, "{counts:?}");
    for (count, share) in counts.iter().zip(&shares) {
        assert!((*count as f64 / n as f64 - share).abs() < 1e-3, "{counts:?} against {shares:?}");
    }
    // The ends of [0, 1) stay inside the window.
    assert_eq!(pick_weighted(&table, 0.0), 1);
    assert_eq!(pick_weighted(&table, 1.0 - 1e-12), 3);
    // Nothing measured, or no surprise anywhere: uniform.
    assert!(surprise_table(&window_with_surprises(&[None, None]), 0.5).is_none());
    assert!(surprise_table(&window_with_surprises(&[Some(0.0), Some(0.0)]), 0.5).is_none());
}

#[test]
fn policy_surprise_weighting_changes_the_samples_and_resumes_exactly() {
    let dir = temp_dir("surprise");
    make_data(&dir.join("data"), 12);
    let data = dir.join("data");
    let init = save_random_net(&dir);
    let (u_dir, a_dir, b_dir, c_dir) = (dir.join("u"), dir.join("a"), dir.join("b"), dir.join("c"));
    let options = |ckpt, share, target| {
        let mut options = options(&data, ckpt, None, Some(&init), target);
        options.config.policy_surprise_weight = share;
        options
    };
    let uniform = train(options(&u_dir, 0.0, 20), |_| {}).unwrap();
    assert_eq!(uniform.surprise_measured, None);
    let one_go = train(options(&a_dir, 0.5, 20), |_| {}).unwrap();
    // Self-play measured the surprise of every target.
    assert_eq!(one_go.surprise_measured, Some(one_go.window_len));
    train(options(&b_dir, 0.5, 10), |_| {}).unwrap();
    let resumed = train(options(&b_dir, 0.5, 20), |_| {}).unwrap();
    assert_eq!((resumed.start_step, resumed.end_step), (10, 20));
    let (a, b, u) = (outputs(&one_go.net), outputs(&resumed.net), outputs(&uniform.net));
    let diff =
        |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| (p - q).abs()).fold(0.0, f32::max);
    assert!(diff(&a, &b) < 1e-4, "the resumed weighted run differs by {}", diff(&a, &b));
    assert!(diff(&a, &u) > 1e-3, "weighting changed nothing: {}", diff(&a, &u));
    // Out of range is refused, naming the key.
    let err = train(options(&c_dir, 1.5, 1), |_| {}).unwrap_err().to_string();
    assert!(err.contains("train.policy_surprise_weight"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The trainer's loss, computed again through the search's inference path (`NetEvaluator`:
/// running batch-norm statistics, softmax over the legal moves) and the window's raw targets.
fn losses_by_hand(
    net: &atomzero_nn::Net,
    window: &atomzero_replay::ReplayWindow,
    root_mix: f32,
) -> (f64, f64) {
    let eval = NetEvaluator::new(net, &Device::default(), 1);
    let (mut policy, mut value) = (0.0f64, 0.0f64);
    for i in 0..window.len() {
        let s = window.get(i, net.config().encoder.history).unwrap();
        let moves = s.position.legal_moves();
        let req = atomzero_mcts::EvalRequest {
            position: &s.position,
            history: &s.history,
            repetitions: s.repetitions,
            moves: &moves,
        };
        let evals = atomzero_mcts::Evaluator::evaluate(&eval, &[req]);
        let e = evals.get(0).unwrap();
        let total: f32 = s.target.policy.iter().map(|&(_, w)| w).sum();
        for (k, &m) in moves.iter().enumerate() {
            let w: f32 = s.target.policy.iter().filter(|&&(t, _)| t == m).map(|&(_, w)| w).sum();
            if w > 0.0 {
                policy -= f64::from(w / total) * f64::from(e.priors[k]).ln();
            }
        }
        for k in 0..3 {
            let t = (1.0 - root_mix) * s.result_wdl[k] + root_mix * s.target.root_wdl[k];
            if t > 0.0 {
                value -= f64::from(t) * f64::from(e.wdl[k]).ln();
            }
        }
    }
    (policy / window.len() as f64, value / window.len() as f64)
}

/// Validation runs the network as play does (running statistics, not the batch's) over every
/// target, chunk by chunk, weighting each chunk by its size: its losses are the cross-entropies
/// of the inference path's outputs against the targets, and a trained net scores lower on the
/// data it trained on than the net it started from (measured with `--steps 0`).
#[test]
fn validation_losses_are_the_inference_nets_cross_entropies_over_every_target() {
    let dir = temp_dir("validation");
    let data = dir.join("data");
    make_data(&data, 24);
    let window = atomzero_replay::ReplayWindow::load(&data, usize::MAX).unwrap();
    assert!(window.len() > 300 && !window.len().is_multiple_of(256), "{} targets", window.len());
    let mut config = config();
    config.value_target_root_mix = 0.5;
    let init = save_random_net(&dir);
    let mut results = Vec::new();
    for (name, steps) in [("before", 0), ("after", 40)] {
        let ckpt = dir.join(name);
        let mut o = options(&data, &ckpt, None, Some(&init), steps);
        o.config = config.clone();
        let summary = train(o, |_| {}).unwrap();
        assert_eq!(summary.end_step, steps);
        let v =
            atomzero_train::validation_losses(&summary.net, &window, &config, &Device::default())
                .unwrap();
        assert_eq!(v.positions, window.len());
        let (policy, value) = losses_by_hand(&summary.net, &window, 0.5);
        assert!(
            (v.policy - policy).abs() < 1e-3 * policy,
            "{name}: policy {} vs {policy}",
            v.policy
        );
        assert!((v.value - value).abs() < 1e-3 * value, "{name}: value {} vs {value}", v.value);
        assert!((v.total - (v.policy + v.value)).abs() < 1e-6, "{name}: {v:?}");
        results.push(v);
    }
    assert!(results[1].total < results[0].total - 0.1, "{results:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
