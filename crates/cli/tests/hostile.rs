//! Regression tests of issue 44 ("nothing lost, nothing leaked"), each named after what a
//! hostile user did: damaged replay data, NaN weights, out-of-range values, errors that did not
//! name the file, outputs checked only after the work, and hostile UCI input. Every test runs
//! the real binary (`ATOMZERO_TEST_BIN=path` runs them against another build, e.g. the one
//! before the fixes, to see them fail there).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn binary() -> String {
    std::env::var("ATOMZERO_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_atomzero").into())
}

fn atomzero(args: &[&str]) -> Output {
    Command::new(binary()).args(args).output().expect("run atomzero")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atomzero-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// FNV-1a 64 (the sidecar's checksum), to forge a sidecar that vouches for damaged weights.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A random tiny network written by `export`.
fn random_net(dir: &Path) -> PathBuf {
    let path = dir.join("net.safetensors");
    let o = atomzero(&["export", "--model", "random", "--out", s(&path)]);
    assert!(o.status.success(), "{}", stderr(&o));
    path
}

/// Rewrites the sidecar of `weights` with `edit` applied to its JSON, and its size and
/// checksum made to match the weights file as it is now.
fn forge_sidecar(weights: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let sidecar = weights.with_extension("json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sidecar).unwrap()).unwrap();
    let bytes = std::fs::read(weights).unwrap();
    json["weights_bytes"] = bytes.len().into();
    json["weights_fnv1a64"] = format!("{:016x}", fnv1a64(&bytes)).into();
    edit(&mut json);
    std::fs::write(&sidecar, serde_json::to_string_pretty(&json).unwrap()).unwrap();
}

/// Byte range of tensor `name`'s data in a safetensors file.
fn tensor_range(bytes: &[u8], name: &str) -> std::ops::Range<usize> {
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + header_len]).unwrap();
    let offsets = &header[name]["data_offsets"];
    let start = 8 + header_len + offsets[0].as_u64().unwrap() as usize;
    let end = 8 + header_len + offsets[1].as_u64().unwrap() as usize;
    start..end
}

#[test]
fn train_names_every_corrupt_truncated_or_empty_shard_it_skips() {
    let dir = temp_dir("train-corrupt");
    let sp = dir.join("sp");
    let o = atomzero(&[
        "selfplay",
        "--model",
        "random",
        "--games",
        "8",
        "--games-per-shard",
        "2",
        "--out",
        s(&sp),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shard = |i: usize| sp.join(format!("gen000000-{i:06}.shard"));
    // Flip 8 bytes in the middle of one shard, truncate another, empty a third.
    let mut bytes = std::fs::read(shard(1)).unwrap();
    let middle = bytes.len() / 2;
    for b in &mut bytes[middle..middle + 8] {
        *b ^= 0xFF;
    }
    std::fs::write(shard(1), &bytes).unwrap();
    let whole = std::fs::read(shard(2)).unwrap();
    std::fs::write(shard(2), &whole[..whole.len() * 2 / 3]).unwrap();
    std::fs::write(shard(3), b"").unwrap();
    let tr = dir.join("tr");
    let o = atomzero(&["train", "--data", s(&sp), "--out", s(&tr), "--steps", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    for i in 1..=3 {
        let name = format!("gen000000-{i:06}.shard");
        assert_eq!(
            err.lines().filter(|l| l.contains(&name) && l.contains("skipped")).count(),
            1,
            "{name} is named once, with what happened to it: {err}"
        );
    }
    assert!(stdout(&o).contains("3 unreadable shards skipped"), "{}", stdout(&o));
    // Validation on the same shards (a net measured alone with --steps 0) names them too.
    let va = dir.join("va");
    let model = tr.join("model.safetensors");
    let o = atomzero(&[
        "train",
        "--data",
        s(&sp),
        "--out",
        s(&va),
        "--steps",
        "0",
        "--init",
        s(&model),
        "--validation",
        s(&sp),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    for i in 1..=3 {
        let name = format!("gen000000-{i:06}.shard");
        assert_eq!(
            err.lines().filter(|l| l.contains("validation data") && l.contains(&name)).count(),
            1,
            "{name}: {err}"
        );
    }
    let out = stdout(&o);
    assert!(out.contains("steps 0 -> 0") && out.contains("no steps to run"), "{out}");
    let line =
        out.lines().find(|l| l.starts_with("validation: ")).unwrap_or_else(|| panic!("{out}"));
    let positions: usize = line["validation: ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(positions > 0 && line.contains("policy") && line.contains("value"), "{line}");
    // `--init shipped` names the network in the binary, as everywhere a model is accepted;
    // the shipped net's loss is not the 2-step net's.
    let o = Command::new(binary())
        .args(["train", "--data", s(&sp), "--out", s(&dir.join("vs")), "--steps", "0"])
        .args(["--init", "shipped", "--validation", s(&sp)])
        .env("ATOMZERO_CACHE", dir.join("cache"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let shipped = stdout(&o);
    let shipped = shipped.lines().find(|l| l.starts_with("validation: ")).unwrap_or("");
    assert!(shipped.contains("policy") && shipped != line, "{shipped} against {line}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn export_refuses_nan_weights_instead_of_laundering_them() {
    let dir = temp_dir("export-nan");
    let net = random_net(&dir);
    let mut bytes = std::fs::read(&net).unwrap();
    let range = tensor_range(&bytes, "value_hidden.weight");
    // 250 bytes of NaN (0xFF...: a NaN pattern), the sidecar's checksum made to match.
    for b in &mut bytes[range.start..range.start + 250] {
        *b = 0xFF;
    }
    std::fs::write(&net, &bytes).unwrap();
    forge_sidecar(&net, |_| {});
    for out in ["x.onnx", "x.safetensors"] {
        let out = dir.join(out);
        let o = atomzero(&["export", "--model", s(&net), "--out", s(&out)]);
        assert!(!o.status.success(), "{out:?} was written: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains("non-finite")
                && err.contains("value_hidden.weight")
                && err.contains(s(&net)),
            "names the file and the tensor: {err}"
        );
        assert!(!out.exists() && !out.with_extension("json").exists(), "{out:?} exists");
    }
    // The engine says which file holds them too (it used to name only the tensor).
    let o = atomzero(&["uci", "--model", s(&net)]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains(s(&net)) && stderr(&o).contains("non-finite"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sidecar_that_disagrees_with_its_weights_names_the_fields_not_a_burn_dump() {
    let dir = temp_dir("sidecar-arch");
    let net = random_net(&dir);
    forge_sidecar(&net, |json| {
        json["net"]["blocks"] = 6.into();
        json["net"]["filters"] = 48.into();
    });
    let out = dir.join("x.onnx");
    let o = atomzero(&["export", "--model", s(&net), "--out", s(&out)]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.len() < 600, "{} characters: {err}", err.len());
    assert!(err.contains("blocks: the weights have 4, the sidecar says 6"), "{err}");
    assert!(err.contains("filters: the weights have 32, the sidecar says 48"), "{err}");
    // A sidecar describing a huge net is refused before anything is built.
    forge_sidecar(&net, |json| {
        json["net"]["blocks"] = 200.into();
        json["net"]["filters"] = 1024.into();
    });
    let o = atomzero(&["export", "--model", s(&net), "--out", s(&out)]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("over the limit"), "{}", stderr(&o));
    forge_sidecar(&net, |json| {
        json["net"]["blocks"] = 40.into();
        json["net"]["filters"] = 256.into();
    });
    let o = atomzero(&["export", "--model", s(&net), "--out", s(&out)]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("blocks: the weights have 4, the sidecar says 40"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_of_range_values_are_refused_with_their_name() {
    for (args, needle) in [
        (vec!["--sprt", "elo0=10,elo1=0,alpha=2,beta=-1"], "elo0 = 10 must be below elo1 = 0"),
        (vec!["--sprt", "alpha=nan"], "alpha = NaN must be a probability"),
        (vec!["--sprt", "alpha=0.6,beta=0.5"], "alpha + beta"),
        (vec!["--sprt", "elo1=inf"], "elo1 = inf is not a finite number"),
        (vec!["--games", "0"], "at least one game"),
        (vec!["--first-game", "0"], "--first-game"),
        (vec!["--first-game", "18446744073709551615"], "past the largest a match may reach"),
    ] {
        let mut all = vec!["match", "--engine", "random", "--engine", "random"];
        all.extend(args.iter().copied());
        let o = atomzero(&all);
        assert!(!o.status.success(), "{args:?}: {}", stdout(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!stdout(&o).contains("nan"), "{args:?}: {}", stdout(&o));
    }
    let dir = temp_dir("ranges");
    let config = dir.join("big.toml");
    std::fs::write(&config, "[net]\nblocks = 256\nfilters = 4096\n").unwrap();
    let sprt = dir.join("sprt.toml");
    std::fs::write(&sprt, "[run]\ngate_sprt = \"elo0=10,elo1=0,alpha=2,beta=-1\"\n").unwrap();
    let batch = dir.join("batch.toml");
    std::fs::write(&batch, "[train]\nbatch_size = 2000000000\n").unwrap();
    for (config, needle) in [
        (&config, "256 blocks x 4096 filters"),
        (&sprt, "run.gate_sprt: elo0 = 10 must be below elo1 = 0"),
        (&batch, "batches of 2000000000 needs at least"),
    ] {
        let o = atomzero(&[
            "train",
            "--data",
            s(&dir),
            "--out",
            s(&dir.join("out")),
            "--config",
            s(config),
        ]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
        assert!(stderr(&o).lines().count() <= 2, "one clear line: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn opening_books_are_named_in_errors_and_a_byte_order_mark_is_not_a_bad_fen() {
    let dir = temp_dir("books");
    let bad = dir.join("bad.epd");
    std::fs::write(&bad, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\nnot a fen\n")
        .unwrap();
    let bom = dir.join("bom.epd");
    std::fs::write(&bom, "\u{feff}rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n")
        .unwrap();
    let o = atomzero(&[
        "match",
        "--engine",
        "random",
        "--engine",
        "random",
        "--games",
        "2",
        "--openings",
        s(&bad),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains(&format!("{}: line 2", s(&bad))), "{}", stderr(&o));
    let o = atomzero(&[
        "match",
        "--engine",
        "random",
        "--engine",
        "random",
        "--games",
        "2",
        "--openings",
        s(&bom),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A config written with a byte-order mark reads too.
    let config = dir.join("bom.toml");
    std::fs::write(&config, "\u{feff}seed = 5\n").unwrap();
    let o = atomzero(&[
        "match",
        "--engine",
        "random",
        "--engine",
        "random",
        "--games",
        "2",
        "--config",
        s(&config),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn match_checks_its_pgn_output_before_playing() {
    let dir = temp_dir("pgn-dir");
    let o = atomzero(&[
        "match",
        "--engine",
        "random",
        "--engine",
        "random",
        "--games",
        "4",
        "--pgn",
        s(&dir),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--pgn") && stderr(&o).contains("is a directory"),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("Finished game"), "games were played: {}", stdout(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `atomzero uci` on `input` and returns what it printed.
fn uci(input: &[u8]) -> String {
    let mut child = Command::new(binary())
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn uci_quotes_long_names_briefly_says_what_it_clamped_and_ignores_binary_garbage() {
    let mut input = b"uci\n".to_vec();
    input.extend_from_slice(b"setoption name ");
    input.extend(std::iter::repeat_n(b'x', 1 << 20));
    input.extend_from_slice(b" value 1\n");
    input.extend_from_slice(
        b"setoption name Threads value 0\nsetoption name Hash value 0\n\
          setoption name MinibatchSize value 100000\nsetoption name Model value /tmp\nisready\n",
    );
    // Binary garbage that ends in `go`: ignored whole, no search starts.
    input.extend_from_slice(b"\x00\x9f\x92\x96\xff\x01 go\n");
    input.extend_from_slice(b"isready\nquit\n");
    let out = uci(&input);
    let longest = out.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 1000, "a line of {longest} characters echoed the name");
    assert!(out.contains("unknown option 'xxxx"), "{out}");
    for note in [
        "Threads 0 is below its minimum 1: using 1",
        "Hash 0 is below its minimum 1: using 1",
        "MinibatchSize 100000 is above its maximum 1024: using 1024",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with("info string") && l.contains(note)),
            "{note}: {out}"
        );
    }
    assert!(out.contains("/tmp: is a directory, not a network"), "{out}");
    assert!(!out.contains("/tmp.json"), "{out}");
    assert!(out.contains("not text"), "{out}");
    assert!(!out.contains("bestmove"), "the garbage line started a search: {out}");
}
