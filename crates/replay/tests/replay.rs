//! Shards round-trip exactly; corrupt and truncated shards are reported by name and skipped;
//! the window keeps the newest targets and rebuilds positions by replaying games.

use atomzero_replay::window::shard_file_name;
use atomzero_replay::{
    EndReason, GameRecord, MoveRecord, ReplayWindow, SearchTarget, ShardError, ShardMeta,
    read_shard, write_shard,
};
use atomzero_rules::{Color, Game, Position, Start, Termination, Variant};

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("atomzero-replay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Plays `n` pseudo-random games (deterministic; every third from the Balanced start) and
/// records every other move as a target.
fn games(n: usize, seed: u64) -> Vec<GameRecord> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    (0..n)
        .map(|i| {
            let variant = Variant::ALL[i % Variant::ALL.len()];
            let start = if i % 3 == 2 { Start::Balanced } else { Start::Standard };
            let mut game = Game::new(Position::start(variant, start));
            let mut moves = Vec::new();
            while game.outcome().is_none() && game.ply() < 120 {
                let legal = game.position().legal_moves();
                let mv = legal[next() % legal.len()];
                let target = game.ply().is_multiple_of(2).then(|| SearchTarget {
                    policy: legal
                        .iter()
                        .take(5)
                        .enumerate()
                        .map(|(k, &m)| (m, (k * 3 + 1) as f32 * 0.125))
                        .collect(),
                    root_wdl: [0.25, 0.5, 0.25],
                    // Measured at some targets only (written as -1 where not).
                    surprise: game.ply().is_multiple_of(4).then_some(game.ply() as f32 * 0.0625),
                });
                moves.push(MoveRecord { mv, target });
                game.play(mv).unwrap();
            }
            let outcome = game.outcome();
            GameRecord {
                variant,
                start_fen: Position::start(variant, start).fen(),
                chess960: false,
                moves,
                winner: outcome.and_then(|o| o.winner),
                reason: outcome.map_or(EndReason::MaxLength, |o| EndReason::Rules(o.termination)),
                resign_disabled: i % 3 == 0,
                resign_point: (i % 4 == 1).then_some((7, Color::Black)),
            }
        })
        .collect()
}

#[test]
fn shards_round_trip() {
    let dir = temp_dir("roundtrip");
    let path = dir.join(shard_file_name(3, 1));
    let meta =
        ShardMeta { model: "random".into(), generation: 3, created_unix: 1, note: "test".into() };
    let written = games(20, 1);
    write_shard(&path, &meta, &written).unwrap();
    let (meta_back, read) = read_shard(&path).unwrap();
    assert_eq!(meta_back, meta);
    assert_eq!(read, written);
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    assert_eq!(
        EndReason::from_code(EndReason::Rules(Termination::BoardCleared).code()),
        Some(EndReason::Rules(Termination::BoardCleared))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn corrupt_and_truncated_shards_are_reported_and_skipped() {
    let dir = temp_dir("corrupt");
    let meta = ShardMeta::default();
    write_shard(&dir.join(shard_file_name(0, 0)), &meta, &games(5, 2)).unwrap();
    write_shard(&dir.join(shard_file_name(0, 1)), &meta, &games(5, 3)).unwrap();
    write_shard(&dir.join(shard_file_name(0, 2)), &meta, &games(5, 4)).unwrap();
    let good = std::fs::read(dir.join(shard_file_name(0, 1))).unwrap();
    // Truncate one, flip a payload byte in another.
    std::fs::write(dir.join(shard_file_name(0, 1)), &good[..good.len() / 2]).unwrap();
    let mut flipped = std::fs::read(dir.join(shard_file_name(0, 2))).unwrap();
    let last = flipped.len() - 10;
    flipped[last] ^= 0x40;
    std::fs::write(dir.join(shard_file_name(0, 2)), &flipped).unwrap();
    std::fs::write(dir.join(shard_file_name(0, 3)), b"not a shard at all").unwrap();
    for (seq, needle) in [(1, "payload is"), (2, "payload checksum"), (3, "bad magic")] {
        let err = read_shard(&dir.join(shard_file_name(0, seq))).unwrap_err();
        assert!(matches!(err, ShardError::Corrupt { .. }));
        let msg = err.to_string();
        assert!(msg.contains(&shard_file_name(0, seq)) && msg.contains(needle), "{msg}");
    }
    let window = ReplayWindow::load(&dir, 1_000_000).unwrap();
    assert_eq!(window.skipped.len(), 3);
    assert_eq!(window.shards_read, 1);
    assert_eq!(window.n_games(), 5);
    // Every cut of a valid shard is rejected cleanly.
    for cut in (0..good.len()).step_by(7) {
        std::fs::write(dir.join("cut.shard"), &good[..cut]).unwrap();
        assert!(read_shard(&dir.join("cut.shard")).is_err());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn window_keeps_the_newest_targets_and_replays_positions() {
    let dir = temp_dir("window");
    let old = games(10, 5);
    let new = games(10, 6);
    let meta = ShardMeta::default();
    write_shard(&dir.join(shard_file_name(1, 0)), &meta, &old).unwrap();
    write_shard(&dir.join(shard_file_name(2, 0)), &meta, &new).unwrap();
    let n_new: usize = new.iter().map(GameRecord::n_targets).sum();
    let window = ReplayWindow::load(&dir, n_new).unwrap();
    assert_eq!(window.len(), n_new);
    assert_eq!(window.shards_read, 1, "the old shard is not needed");
    let window = ReplayWindow::load(&dir, n_new + 5).unwrap();
    assert_eq!(window.len(), n_new + 5);
    // Sample 0 is the 5th-newest target of the old shard; the last sample is the newest.
    let last = window.get(window.len() - 1, 2).unwrap();
    let game = new.last().unwrap();
    let ply = game.moves.iter().rposition(|m| m.target.is_some()).unwrap();
    let mut pos = Position::from_fen(&game.start_fen, game.variant).unwrap();
    for m in &game.moves[..ply] {
        pos.play_unchecked(m.mv);
    }
    assert_eq!(last.position, pos);
    assert_eq!(last.target, game.moves[ply].target.as_ref().unwrap());
    assert_eq!(last.history.len(), 2.min(ply));
    let expected = match game.winner {
        None => [0.0, 1.0, 0.0],
        Some(w) if w == pos.turn() => [1.0, 0.0, 0.0],
        Some(_) => [0.0, 0.0, 1.0],
    };
    assert_eq!(last.result_wdl, expected);
    assert!(window.get(window.len(), 0).is_none());
    // An empty directory is an error that names it.
    let empty = temp_dir("empty");
    let err = ReplayWindow::load(&empty, 10).unwrap_err().to_string();
    assert!(err.contains("no training data"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&empty).unwrap();
}

/// A shard file laid out by hand: `version`, one atomic game from the start position of the
/// single move e2e3, recorded as a target whose policy entry holds `weight_bits`.
fn hand_made_shard(version: u32, weight_bits: u32) -> Vec<u8> {
    hand_made_shard_from(version, weight_bits, Start::Standard)
}

/// [`hand_made_shard`] from `start`; its move is e2e3, or the removal @e2 from the Balanced
/// start.
fn hand_made_shard_from(version: u32, weight_bits: u32, start: Start) -> Vec<u8> {
    hand_made_shard_with(version, weight_bits, start, 0.5)
}

/// [`hand_made_shard_from`] whose target's policy surprise (format 5 on) is `surprise`.
fn hand_made_shard_with(version: u32, weight_bits: u32, start: Start, surprise: f32) -> Vec<u8> {
    use std::io::Write;
    let pos = Position::start(Variant::Atomic, start);
    let mv = pos.parse_uci(if pos.is_setup_phase() { "@e2" } else { "e2e3" }).unwrap();
    let fen = pos.fen();
    let mut record = vec![0u8, 0u8]; // atomic, no flags
    record.extend_from_slice(&(fen.len() as u16).to_le_bytes());
    record.extend_from_slice(fen.as_bytes());
    record.push(2); // draw
    record.push(EndReason::MaxLength.code());
    record.extend_from_slice(&1u16.to_le_bytes()); // one move
    record.extend_from_slice(&mv.to_u16().to_le_bytes());
    record.push(1); // a target
    for v in [0.25f32, 0.5, 0.25] {
        record.extend_from_slice(&v.to_le_bytes());
    }
    if version >= 5 {
        record.extend_from_slice(&surprise.to_le_bytes());
    }
    record.extend_from_slice(&1u16.to_le_bytes());
    record.extend_from_slice(&mv.to_u16().to_le_bytes());
    record.extend_from_slice(&weight_bits.to_le_bytes());
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
    encoder.write_all(&record).unwrap();
    let payload = encoder.finish().unwrap();
    let meta = br#"{"model":"random"}"#;
    let mut bytes = b"AZREPLAY".to_vec();
    for v in [version, 1, 1, meta.len() as u32] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(meta);
    let header_crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&header_crc.to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes
}

#[test]
fn version_1_shards_read_their_visit_counts_as_weights() {
    let dir = temp_dir("version1");
    let path = dir.join("old.shard");
    // Version 1: the entry is a visit count (u32) of 7.
    std::fs::write(&path, hand_made_shard(1, 7)).unwrap();
    let (_, games) = read_shard(&path).unwrap();
    let target = games[0].moves[0].target.as_ref().unwrap();
    assert_eq!(target.policy.len(), 1);
    assert_eq!(target.policy[0].1, 7.0);
    // Version 2: the same bits are an f32 weight.
    std::fs::write(&path, hand_made_shard(2, 0.75f32.to_bits())).unwrap();
    let (_, games) = read_shard(&path).unwrap();
    assert_eq!(games[0].moves[0].target.as_ref().unwrap().policy[0].1, 0.75);
    // Negative, infinite and NaN weights are corrupt records.
    for bad in [-1.0f32, f32::INFINITY, f32::NAN] {
        std::fs::write(&path, hand_made_shard(2, bad.to_bits())).unwrap();
        let err = read_shard(&path).unwrap_err().to_string();
        assert!(err.contains("bad policy weight"), "{err}");
    }
    // A version from the future is named.
    std::fs::write(&path, hand_made_shard(6, 0)).unwrap();
    let err = read_shard(&path).unwrap_err();
    assert!(matches!(err, ShardError::Version { found: 6, .. }), "{err}");
    assert!(err.to_string().contains("reads versions 1 to 5"), "{err}");
    // Format 5 added the policy surprise after the root value; format 4 has none.
    std::fs::write(&path, hand_made_shard(4, 0.75f32.to_bits())).unwrap();
    let (_, games) = read_shard(&path).unwrap();
    let target = games[0].moves[0].target.as_ref().unwrap();
    assert_eq!((target.surprise, target.policy[0].1), (None, 0.75));
    std::fs::write(&path, hand_made_shard(5, 0.75f32.to_bits())).unwrap();
    let (_, games) = read_shard(&path).unwrap();
    let target = games[0].moves[0].target.as_ref().unwrap();
    assert_eq!((target.surprise, target.policy[0].1), (Some(0.5), 0.75));
    let with = |surprise| hand_made_shard_with(5, 0.75f32.to_bits(), Start::Standard, surprise);
    std::fs::write(&path, with(-1.0)).unwrap();
    assert_eq!(read_shard(&path).unwrap().1[0].moves[0].target.as_ref().unwrap().surprise, None);
    for bad in [-0.5f32, f32::INFINITY, f32::NAN] {
        std::fs::write(&path, with(bad)).unwrap();
        let err = read_shard(&path).unwrap_err().to_string();
        assert!(err.contains("bad policy surprise"), "{err}");
    }
    // Format 3 added the Balanced start: its keyword in an older shard is a corrupt record.
    std::fs::write(&path, hand_made_shard_from(3, 0.5f32.to_bits(), Start::Balanced)).unwrap();
    let (_, games) = read_shard(&path).unwrap();
    assert_eq!(games[0].start_fen, "balanced");
    assert!(games[0].moves[0].mv.is_removal());
    std::fs::write(&path, hand_made_shard_from(2, 0.5f32.to_bits(), Start::Balanced)).unwrap();
    let err = read_shard(&path).unwrap_err().to_string();
    assert!(err.contains("the balanced start needs format 3, the shard has 2"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Random games of the bomb variant from its setup phase (both bomb choices are moves), every
/// other move a target.
fn bomb_games(n: usize, seed: u64) -> Vec<GameRecord> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    (0..n)
        .map(|_| {
            let start = Position::new(Variant::Bomb);
            let mut game = Game::new(start);
            let mut moves = Vec::new();
            while game.outcome().is_none() && game.ply() < 80 {
                let legal = game.position().legal_moves();
                let mv = legal[next() % legal.len()];
                let target = game.ply().is_multiple_of(2).then(|| SearchTarget {
                    policy: vec![(mv, 1.0)],
                    root_wdl: [0.25, 0.5, 0.25],
                    surprise: None,
                });
                moves.push(MoveRecord { mv, target });
                game.play(mv).unwrap();
            }
            let outcome = game.outcome();
            GameRecord {
                variant: Variant::Bomb,
                start_fen: start.fen(),
                chess960: false,
                moves,
                winner: outcome.and_then(|o| o.winner),
                reason: outcome.map_or(EndReason::MaxLength, |o| EndReason::Rules(o.termination)),
                resign_disabled: false,
                resign_point: None,
            }
        })
        .collect()
}

#[test]
fn bomb_games_round_trip_in_format_4_and_older_formats_cannot_hold_them() {
    use atomzero_replay::{decode_shard, encode_shard};
    let games = bomb_games(12, 5);
    assert!(games[0].start_fen.ends_with("bombs:?,?"));
    let meta = ShardMeta { model: "random".into(), ..ShardMeta::default() };
    let mut bytes = encode_shard(&meta, &games);
    let origin = std::path::Path::new("bomb.shard");
    assert_eq!(decode_shard(&bytes, origin).unwrap().1, games);
    // The same bytes labelled format 3 (header checksum fixed): the variant byte 5 is refused.
    bytes[8..12].copy_from_slice(&3u32.to_le_bytes());
    let meta_len = u32::from_le_bytes(bytes[20..24].try_into().unwrap()) as usize;
    let crc = crc32fast::hash(&bytes[..36 + meta_len]);
    bytes[36 + meta_len..40 + meta_len].copy_from_slice(&crc.to_le_bytes());
    let err = decode_shard(&bytes, origin).unwrap_err().to_string();
    assert!(err.contains("the bomb variant needs format 4, the shard has 3"), "{err}");
}

#[test]
fn the_windows_repetitions_are_the_ones_the_mover_sees() {
    let window = ReplayWindow::from_games(bomb_games(30, 9));
    assert!(window.len() > 300);
    for i in 0..window.len() {
        let sample = window.get(i, 4).unwrap();
        assert_eq!(sample.position.variant(), Variant::Bomb);
        assert!(sample.history.len() <= 4);
        // Equal to counting over the mover's views of the game (rebuilt here by replaying).
        let (g, ply) = window_index(&window, i);
        let game = &window.games()[g];
        let mut pos = Position::from_fen(&game.start_fen, Variant::Bomb).unwrap();
        let mut earlier = Vec::new();
        for m in &game.moves[..ply] {
            earlier.push(pos);
            pos.play_unchecked(m.mv);
        }
        assert_eq!(sample.position, pos);
        assert_eq!(sample.repetitions, atomzero_rules::view_repetitions(&pos, &earlier));
    }
}

/// The (game, ply) of window target `i` (targets are every other ply of each game, in order).
fn window_index(window: &ReplayWindow, i: usize) -> (usize, usize) {
    let mut seen = 0;
    for (g, game) in window.games().iter().enumerate() {
        for (ply, m) in game.moves.iter().enumerate() {
            if m.target.is_some() {
                if seen == i {
                    return (g, ply);
                }
                seen += 1;
            }
        }
    }
    unreachable!("target {i} beyond the window")
}
