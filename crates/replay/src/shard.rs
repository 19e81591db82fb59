//! Writing and reading shards (layout in [`crate::format`]).

use crate::format::{
    EndReason, FIXED_HEADER, FORMAT_VERSION, GameRecord, MAGIC, MoveRecord, OLDEST_FORMAT_VERSION,
    SearchTarget, ShardMeta,
};
use atomzero_rules::{BALANCED_FEN, CastlingMode, Color, Move, Position, Variant};
use flate2::Compression;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most bytes a shard's records may decompress to: a bound on the memory a hostile or
/// damaged shard (a zlib bomb with a valid checksum) can make a reader allocate.
/// ARCHITECTURE.md estimates ~5 KB of records a game, ~1.2 MB for a shard of 250 games.
pub const MAX_RECORD_BYTES: u64 = 512 << 20;

/// Why a shard could not be written or read.
#[derive(Debug)]
pub enum ShardError {
    /// The file system failed.
    Io { path: PathBuf, source: std::io::Error },
    /// The file is not a valid shard (bad magic, checksum, truncation, bad record).
    Corrupt { path: PathBuf, reason: String },
    /// A shard of a format version this build does not read.
    Version { path: PathBuf, found: u32 },
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path().display(), self.problem())
    }
}

impl ShardError {
    /// What is wrong, without the file's name (for callers that name it themselves).
    pub fn problem(&self) -> String {
        match self {
            ShardError::Io { source, .. } => source.to_string(),
            ShardError::Corrupt { reason, .. } => format!("corrupt replay shard: {reason}"),
            ShardError::Version { found, .. } => format!(
                "replay shard format version {found}, this build reads versions \
                 {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}"
            ),
        }
    }

    /// The file (or object) the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ShardError::Io { path, .. }
            | ShardError::Corrupt { path, .. }
            | ShardError::Version { path, .. } => path,
        }
    }
}

impl std::error::Error for ShardError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ShardError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn encode_game(out: &mut Vec<u8>, game: &GameRecord) {
    let variant = Variant::EVERY.iter().position(|&v| v == game.variant).unwrap_or(0) as u8;
    let flags = u8::from(game.chess960)
        | (u8::from(game.resign_disabled) << 1)
        | (u8::from(game.resign_point.is_some()) << 2);
    out.push(variant);
    out.push(flags);
    let fen = game.start_fen.as_bytes();
    out.extend_from_slice(&(fen.len() as u16).to_le_bytes());
    out.extend_from_slice(fen);
    out.push(match game.winner {
        Some(Color::White) => 0,
        Some(Color::Black) => 1,
        None => 2,
    });
    out.push(game.reason.code());
    if let Some((ply, side)) = game.resign_point {
        out.extend_from_slice(&ply.to_le_bytes());
        out.push(side.index() as u8);
    }
    out.extend_from_slice(&(game.moves.len() as u16).to_le_bytes());
    for m in &game.moves {
        out.extend_from_slice(&m.mv.to_u16().to_le_bytes());
        match &m.target {
            None => out.push(0),
            Some(t) => {
                out.push(1);
                for v in t.root_wdl {
                    out.extend_from_slice(&v.to_le_bytes());
                }
                out.extend_from_slice(&t.surprise.unwrap_or(-1.0).to_le_bytes());
                out.extend_from_slice(&(t.policy.len() as u16).to_le_bytes());
                for (mv, weight) in &t.policy {
                    out.extend_from_slice(&mv.to_u16().to_le_bytes());
                    out.extend_from_slice(&weight.to_le_bytes());
                }
            }
        }
    }
}

/// A shard's bytes: header, compressed records, checksums (layout in [`crate::format`]). What
/// [`write_shard`] writes to a file; an object store receives the same bytes whole.
pub fn encode_shard(meta: &ShardMeta, games: &[GameRecord]) -> Vec<u8> {
    let mut raw = Vec::new();
    for game in games {
        encode_game(&mut raw, game);
    }
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::new(6));
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(&raw);
    let payload = encoder.finish().unwrap_or_default();
    let meta_json = serde_json::to_vec(meta).unwrap_or_else(|_| b"{}".to_vec());
    let n_targets: usize = games.iter().map(GameRecord::n_targets).sum();

    let mut bytes = Vec::with_capacity(FIXED_HEADER + meta_json.len() + 4 + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(games.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&(n_targets as u32).to_le_bytes());
    bytes.extend_from_slice(&(meta_json.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&meta_json);
    let header_crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&header_crc.to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes
}

/// Writes `games` to `path` atomically (`atomzero_files::write_atomic`: a synced temporary in
/// the same directory renamed over `path`, the directory synced), so readers never see a
/// partial shard. Creates the directory if needed.
pub fn write_shard(path: &Path, meta: &ShardMeta, games: &[GameRecord]) -> Result<(), ShardError> {
    let io = |source| ShardError::Io { path: path.to_path_buf(), source };
    let bytes = encode_shard(meta, games);
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    atomzero_files::write_atomic(path, &bytes).map_err(io)
}

/// Bounds-checked little-endian reader over a byte slice.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated record at byte {}", self.at))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_bits(self.u32()?))
    }
}

fn color(byte: u8) -> Result<Color, String> {
    match byte {
        0 => Ok(Color::White),
        1 => Ok(Color::Black),
        b => Err(format!("bad colour byte {b}")),
    }
}

/// Decodes one game of a shard of format `version` and checks that every move is legal from
/// the start position.
fn decode_game(c: &mut Cursor<'_>, index: usize, version: u32) -> Result<GameRecord, String> {
    let ctx = |e: String| format!("game {index}: {e}");
    let variant = *Variant::EVERY.get(c.u8()? as usize).ok_or_else(|| ctx("bad variant".into()))?;
    if version < 4 && !Variant::ALL.contains(&variant) {
        return Err(ctx(format!("the {variant} variant needs format 4, the shard has {version}")));
    }
    let flags = c.u8()?;
    let fen_len = c.u16()? as usize;
    let start_fen =
        String::from_utf8(c.take(fen_len)?.to_vec()).map_err(|_| ctx("fen is not utf-8".into()))?;
    let winner = match c.u8()? {
        2 => None,
        b => Some(color(b).map_err(ctx)?),
    };
    let reason = EndReason::from_code(c.u8()?).ok_or_else(|| ctx("bad end reason".into()))?;
    let resign_point =
        if flags & 4 != 0 { Some((c.u16()?, color(c.u8()?).map_err(ctx)?)) } else { None };
    let chess960 = flags & 1 != 0;
    let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    if version < 3 && start_fen.trim().eq_ignore_ascii_case(BALANCED_FEN) {
        return Err(ctx(format!("the balanced start needs format 3, the shard has {version}")));
    }
    let mut pos =
        Position::from_fen_with_mode(&start_fen, variant, mode).map_err(|e| ctx(e.to_string()))?;
    let n_moves = c.u16()? as usize;
    let mut moves = Vec::with_capacity(n_moves);
    for ply in 0..n_moves {
        let bits = c.u16()?;
        let mv = Move::from_u16(bits).filter(|m| pos.is_legal(*m));
        let mv = mv.ok_or_else(|| ctx(format!("illegal move at ply {}", ply + 1)))?;
        let target = match c.u8()? {
            0 => None,
            1 => {
                let root_wdl = [c.f32()?, c.f32()?, c.f32()?];
                let surprise = if version >= 5 {
                    match c.f32()? {
                        s if s.is_finite() && s >= 0.0 => Some(s),
                        -1.0 => None,
                        s => {
                            return Err(ctx(format!("bad policy surprise {s} at ply {}", ply + 1)));
                        }
                    }
                } else {
                    None
                };
                let n = c.u16()? as usize;
                let mut policy = Vec::with_capacity(n);
                for _ in 0..n {
                    let m =
                        Move::from_u16(c.u16()?).ok_or_else(|| ctx("bad policy move".into()))?;
                    let weight = if version == 1 { c.u32()? as f32 } else { c.f32()? };
                    if !(weight.is_finite() && weight >= 0.0) {
                        return Err(ctx(format!("bad policy weight {weight} at ply {}", ply + 1)));
                    }
                    policy.push((m, weight));
                }
                Some(SearchTarget { policy, root_wdl, surprise })
            }
            b => return Err(ctx(format!("bad target flag {b}"))),
        };
        pos.play_unchecked(mv);
        moves.push(MoveRecord { mv, target });
    }
    Ok(GameRecord {
        variant,
        start_fen,
        chess960,
        moves,
        winner,
        reason,
        resign_disabled: flags & 2 != 0,
        resign_point,
    })
}

/// Reads a shard, verifying magic, version, both checksums and every record.
pub fn read_shard(path: &Path) -> Result<(ShardMeta, Vec<GameRecord>), ShardError> {
    let bytes = std::fs::read(path)
        .map_err(|source| ShardError::Io { path: path.to_path_buf(), source })?;
    decode_shard(&bytes, path)
}

/// Decodes a shard's bytes as [`read_shard`] does; `origin` names them in errors (a file, or
/// an object's key).
pub fn decode_shard(
    bytes: &[u8],
    origin: &Path,
) -> Result<(ShardMeta, Vec<GameRecord>), ShardError> {
    let path = origin;
    let corrupt = |reason: String| ShardError::Corrupt { path: path.to_path_buf(), reason };
    let mut c = Cursor { bytes, at: 0 };
    if c.take(8).map_err(|_| corrupt("too short for a header".into()))? != MAGIC {
        return Err(corrupt("not a replay shard (bad magic)".into()));
    }
    let version = c.u32().map_err(corrupt)?;
    if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(ShardError::Version { path: path.to_path_buf(), found: version });
    }
    let n_games = c.u32().map_err(corrupt)? as usize;
    let _n_targets = c.u32().map_err(corrupt)?;
    let meta_len = c.u32().map_err(corrupt)? as usize;
    let payload_len = c.u64().map_err(corrupt)?;
    let payload_crc = c.u32().map_err(corrupt)?;
    let meta_bytes = c.take(meta_len).map_err(|_| corrupt("truncated header".into()))?;
    let header_end = c.at;
    let header_crc = c.u32().map_err(|_| corrupt("truncated header".into()))?;
    if crc32fast::hash(&bytes[..header_end]) != header_crc {
        return Err(corrupt("header checksum mismatch".into()));
    }
    let meta: ShardMeta =
        serde_json::from_slice(meta_bytes).map_err(|e| corrupt(format!("bad metadata: {e}")))?;
    let payload = &bytes[c.at..];
    if payload.len() as u64 != payload_len {
        return Err(corrupt(format!(
            "payload is {} bytes, header says {payload_len}",
            payload.len()
        )));
    }
    if crc32fast::hash(payload) != payload_crc {
        return Err(corrupt("payload checksum mismatch".into()));
    }
    let mut raw = Vec::new();
    ZlibDecoder::new(payload)
        .take(MAX_RECORD_BYTES + 1)
        .read_to_end(&mut raw)
        .map_err(|e| corrupt(format!("decompression failed: {e}")))?;
    if raw.len() as u64 > MAX_RECORD_BYTES {
        return Err(corrupt(format!(
            "the records decompress to more than {} MiB",
            MAX_RECORD_BYTES >> 20
        )));
    }
    let mut c = Cursor { bytes: &raw, at: 0 };
    // The header's count is not trusted for the allocation: a game takes at least 8 bytes.
    let mut games = Vec::with_capacity(n_games.min(raw.len() / 8));
    for i in 0..n_games {
        games.push(decode_game(&mut c, i, version).map_err(corrupt)?);
    }
    if c.at != raw.len() {
        return Err(corrupt(format!("{} trailing bytes after {n_games} games", raw.len() - c.at)));
    }
    Ok((meta, games))
}
