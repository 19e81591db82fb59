//! `atomzero bench ingest`: how fast a trainer takes in self-play shards from a run location.

use crate::error::{BenchError, Context, Result};
use crate::util::random_games;
use std::io::Write;
use std::time::Instant;

/// Uploads `shards` shards of `games` random games to `location`, then times listing,
/// downloading and decoding them (and decoding alone, from memory), and removes them.
pub fn run(location: &str, shards: usize, games: usize, out: &mut dyn Write) -> Result<()> {
    use atomzero_replay::{ShardMeta, decode_shard, encode_shard};
    use atomzero_store::PutMode;
    let store = atomzero_store::open(location).context(location)?;
    let meta = ShardMeta {
        model: "bench".into(),
        generation: 0,
        created_unix: 0,
        note: "atomzero bench ingest".into(),
    };
    let bytes = encode_shard(&meta, &random_games(games, 7));
    let prefix = format!("bench/ingest-{}", atomzero_run::worker::worker_name(Some("b")));
    let t = Instant::now();
    for i in 0..shards {
        store.put(&format!("{prefix}/{i:06}.shard"), &bytes, PutMode::Create).context("upload")?;
    }
    let upload = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let listed = store.list(&format!("{prefix}/")).context("list")?;
    let list = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (mut n_games, mut n_bytes) = (0usize, 0usize);
    for entry in &listed {
        let object = store
            .get(&entry.key)
            .context(&entry.key)?
            .context(format!("{} vanished", entry.key))?;
        n_bytes += object.bytes.len();
        n_games += decode_shard(&object.bytes, std::path::Path::new(&entry.key))
            .context(&entry.key)?
            .1
            .len();
    }
    let ingest = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for _ in 0..listed.len() {
        decode_shard(&bytes, std::path::Path::new("memory")).context("decode")?;
    }
    let decode = t.elapsed().as_secs_f64();
    for entry in &listed {
        store.delete(&entry.key).context(&entry.key)?;
    }
    if listed.len() != shards || n_games != shards * games {
        return Err(BenchError::msg(format!(
            "listed {} shards with {n_games} games, uploaded {shards} of {games}",
            listed.len()
        )));
    }
    let n = shards as f64;
    writeln!(
        out,
        "ingest from {location}: {shards} shards of {games} games ({:.1} KB each): upload {:.0} shards/s; \
         list {:.3} s; fetch + decode {:.0} shards/s = {:.0} games/s = {:.1} MB/s (decode alone {:.0} shards/s)",
        bytes.len() as f64 / 1e3,
        n / upload.max(1e-9),
        list,
        n / ingest.max(1e-9),
        n_games as f64 / ingest.max(1e-9),
        n_bytes as f64 / 1e6 / ingest.max(1e-9),
        n / decode.max(1e-9),
    )?;
    Ok(())
}
