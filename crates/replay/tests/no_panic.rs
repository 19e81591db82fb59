//! Property tests of the shard reader on damaged and hostile bytes (issue 44): whatever the
//! bytes, `decode_shard` returns games that replay legally or an error that names the shard,
//! never panics and never allocates by a count it has not checked. The records are mutated
//! *inside* a correctly framed shard (checksums recomputed) so that the record decoder, not
//! just the checksum, meets the damage. Seeded; a few thousand cases in about a second.

use atomzero_replay::{
    EndReason, GameRecord, MoveRecord, SearchTarget, ShardError, ShardMeta, decode_shard,
    encode_shard,
};
use atomzero_rules::{Color, Game, Position, Start, Variant};
use flate2::Compression;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use std::io::{Read, Write};
use std::path::Path;

/// xorshift64*: a fixed-seed generator for the cases.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn games(rng: &mut Rng, n: usize) -> Vec<GameRecord> {
    (0..n)
        .map(|i| {
            let variant = Variant::EVERY[i % Variant::EVERY.len()];
            let start = if variant != Variant::Bomb && i % 3 == 2 {
                Start::Balanced
            } else {
                Start::Standard
            };
            let mut game = Game::new(Position::start(variant, start));
            let mut moves = Vec::new();
            while game.outcome().is_none() && game.ply() < 30 {
                let legal = game.position().legal_moves();
                let mv = legal[rng.below(legal.len())];
                let target = (rng.below(2) == 0).then(|| SearchTarget {
                    policy: legal.iter().take(4).map(|&m| (m, 0.25)).collect(),
                    root_wdl: [0.2, 0.5, 0.3],
                    surprise: Some(0.25),
                });
                moves.push(MoveRecord { mv, target });
                game.play(mv).unwrap();
            }
            GameRecord {
                variant,
                start_fen: Position::start(variant, start).fen(),
                chess960: false,
                moves,
                winner: Some(Color::White),
                reason: EndReason::MaxLength,
                resign_disabled: false,
                resign_point: None,
            }
        })
        .collect()
}

/// The shard's framing fields, to rebuild it around new records.
struct Framed {
    version: u32,
    n_games: u32,
    meta: Vec<u8>,
    raw: Vec<u8>,
}

fn unframe(bytes: &[u8]) -> Framed {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let meta_len = u32_at(20) as usize;
    let meta = bytes[36..36 + meta_len].to_vec();
    let payload = &bytes[36 + meta_len + 4..];
    let mut raw = Vec::new();
    ZlibDecoder::new(payload).read_to_end(&mut raw).unwrap();
    Framed { version: u32_at(8), n_games: u32_at(12), meta, raw }
}

/// A shard with valid checksums around `framed`'s (possibly damaged) records.
fn frame(framed: &Framed) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(&framed.raw).unwrap();
    let payload = encoder.finish().unwrap();
    let mut bytes = b"AZREPLAY".to_vec();
    bytes.extend_from_slice(&framed.version.to_le_bytes());
    bytes.extend_from_slice(&framed.n_games.to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&(framed.meta.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&framed.meta);
    let header_crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&header_crc.to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes
}

fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..=rng.below(4) {
        let i = rng.below(bytes.len() + 1);
        match rng.below(5) {
            0 if i < bytes.len() => bytes[i] = rng.next() as u8,
            1 if i < bytes.len() => {
                bytes.remove(i);
            }
            2 => bytes.insert(i, rng.next() as u8),
            3 => bytes.truncate(i),
            _ if i < bytes.len() => bytes[i] ^= 1 << rng.below(8),
            _ => {}
        }
    }
}

/// The property: the games replay legally, or the error names the shard.
fn check(bytes: &[u8], origin: &Path) -> Result<(), String> {
    match decode_shard(bytes, origin) {
        Ok((_, games)) => {
            for g in &games {
                let mut pos = Position::from_fen(&g.start_fen, g.variant).unwrap();
                for m in &g.moves {
                    assert!(pos.is_legal(m.mv), "a decoded game holds an illegal move");
                    pos.play_unchecked(m.mv);
                }
            }
            Ok(())
        }
        Err(e) => {
            let text = e.to_string();
            assert!(text.starts_with(&origin.display().to_string()), "{text}");
            assert!(matches!(e, ShardError::Corrupt { .. } | ShardError::Version { .. }), "{text}");
            Err(text)
        }
    }
}

#[test]
fn damaged_records_inside_a_valid_frame_are_an_error_naming_the_shard_or_legal_games() {
    let mut rng = Rng(0x44_5348_4152_4453);
    let origin = Path::new("selfplay/gen000044-000000.shard");
    let (mut ok, mut refused) = (0, 0);
    for case in 0..1500 {
        let n = 1 + rng.below(3);
        let good = encode_shard(&ShardMeta::default(), &games(&mut rng, n));
        let mut framed = unframe(&good);
        if case % 2 == 0 {
            mutate(&mut rng, &mut framed.raw);
        }
        if case % 5 == 0 {
            framed.n_games = [0, 1, 255, u32::MAX, framed.n_games + 1][rng.below(5)];
        }
        if case % 7 == 0 {
            framed.version = rng.below(8) as u32;
        }
        match check(&frame(&framed), origin) {
            Ok(()) => ok += 1,
            Err(_) => refused += 1,
        }
    }
    assert!(ok > 0 && refused > 0, "{ok} read, {refused} refused");
}

#[test]
fn damaged_framing_and_arbitrary_bytes_are_refused() {
    let mut rng = Rng(0x4446_5241_4D45);
    let origin = Path::new("x.shard");
    let good = encode_shard(&ShardMeta::default(), &games(&mut rng, 2));
    assert!(check(&good, origin).is_ok());
    for _ in 0..2000 {
        let mut bytes = good.clone();
        mutate(&mut rng, &mut bytes);
        if bytes != good {
            // A checksum guards every byte; a change either is caught or leaves the same games.
            let _ = check(&bytes, origin);
        }
        let noise: Vec<u8> = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
        assert!(check(&noise, origin).is_err());
    }
}

#[test]
fn a_zlib_bomb_with_valid_checksums_is_refused_without_decompressing_it_whole() {
    // 520 MiB of zeros compress to well under 1 MB; the reader stops at its 512 MiB bound.
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::fast());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..520 {
        encoder.write_all(&zeros).unwrap();
    }
    let payload = encoder.finish().unwrap();
    let mut bytes = b"AZREPLAY".to_vec();
    let meta = serde_json::to_vec(&ShardMeta::default()).unwrap();
    for v in [4u32, 1, 0, meta.len() as u32] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&meta);
    let header_crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&header_crc.to_le_bytes());
    bytes.extend_from_slice(&payload);
    let err = check(&bytes, Path::new("bomb.shard")).unwrap_err();
    assert!(err.contains("more than 512 MiB"), "{err}");
}
