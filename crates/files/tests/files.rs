//! A writer killed after every step of [`write_atomic`] leaves the old file or the new one,
//! never a partial one, and what it leaves besides is removed by the stale cleanup.

use atomzero_files::{
    Step, Temporary, is_temporary, remove_stale_temporaries, temporary_path, write_atomic,
    write_atomic_killed_after,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A fresh empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atomzero-files-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

const OLD: &[u8] = b"the old contents, long enough to be cut in half";
const NEW: &[u8] = b"the new contents: different bytes and a different length";

#[test]
fn a_writer_killed_after_any_step_leaves_the_old_or_the_new_file() {
    for (with_old, test) in [(true, "killed-old"), (false, "killed-none")] {
        for step in Step::ALL {
            let dir = scratch(test);
            let target = dir.join("best.json");
            if with_old {
                write_atomic(&target, OLD).unwrap();
            }
            write_atomic_killed_after(&target, NEW, step).unwrap();

            let renamed = matches!(step, Step::Renamed | Step::DirectorySynced);
            let found = std::fs::read(&target).ok();
            let expected = if renamed {
                Some(NEW)
            } else if with_old {
                Some(OLD)
            } else {
                None
            };
            assert_eq!(found.as_deref(), expected, "killed after {step:?} (old file: {with_old})");

            // Whatever else is there is a temporary, and the cleanup removes it.
            let others: Vec<String> =
                names(&dir).into_iter().filter(|n| n != "best.json").collect();
            assert_eq!(others.len(), usize::from(!renamed), "killed after {step:?}: {others:?}");
            assert!(others.iter().all(|n| is_temporary(n)), "{others:?}");
            remove_stale_temporaries(&dir, Duration::ZERO);
            let expected_names: Vec<String> =
                expected.iter().map(|_| "best.json".to_string()).collect();
            assert_eq!(names(&dir), expected_names, "after the cleanup, killed after {step:?}");
            assert_eq!(std::fs::read(&target).ok().as_deref(), expected);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

#[test]
fn a_whole_write_replaces_the_file_and_leaves_no_temporary() {
    let dir = scratch("whole");
    let target = dir.join("ratings.csv");
    write_atomic(&target, OLD).unwrap();
    write_atomic(&target, NEW).unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), NEW);
    assert_eq!(names(&dir), ["ratings.csv"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_write_leaves_nothing_behind() {
    let dir = scratch("failed");
    // The target's directory does not exist: the temporary cannot even be created.
    assert!(write_atomic(&dir.join("missing/x.json"), NEW).is_err());
    // The target is a directory: the rename fails and the temporary is removed.
    std::fs::create_dir(dir.join("taken")).unwrap();
    assert!(write_atomic(&dir.join("taken"), NEW).is_err());
    assert_eq!(names(&dir), ["taken"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn link_new_refuses_an_existing_name_and_removes_its_temporary() {
    let dir = scratch("link");
    let target = dir.join("config.toml");
    Temporary::write(&target, OLD).unwrap().link_new(&target).unwrap();
    let error = Temporary::write(&target, NEW).unwrap().link_new(&target).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&target).unwrap(), OLD);
    assert_eq!(names(&dir), ["config.toml"]);
    // A temporary dropped before it is placed is removed.
    let temporary = Temporary::write(&target, NEW).unwrap();
    assert!(temporary.path().exists());
    drop(temporary);
    assert_eq!(names(&dir), ["config.toml"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn temporary_names_follow_the_rule_the_cleanup_matches() {
    let a = temporary_path(Path::new("runs/x/models/000001.safetensors"));
    let b = temporary_path(Path::new("runs/x/models/000001.safetensors"));
    assert_ne!(a, b, "two writes of one target get two temporaries");
    assert_eq!(a.parent(), Some(Path::new("runs/x/models")));
    let name = a.file_name().unwrap().to_string_lossy().into_owned();
    let prefix = format!(".000001.safetensors.{}-", std::process::id());
    assert!(name.starts_with(&prefix) && name.ends_with(".tmp"), "{name}");
    assert!(is_temporary(&name));
    // The `.<name>.<pid>.tmp` names of earlier versions are temporaries too; data files, and
    // eval's old `.<name>.tmp-<pid>` (never matched by the cleanup), are not.
    assert!(is_temporary(".x.pgn.12.tmp"));
    for data in [".x.pgn.tmp-12", "x.tmp", ".store.lock", "gen000001-000002.shard", ".hidden"] {
        assert!(!is_temporary(data), "{data}");
    }
}

#[test]
fn the_cleanup_keeps_young_temporaries_and_everything_else() {
    let dir = scratch("cleanup");
    std::fs::create_dir_all(dir.join("selfplay/w-1")).unwrap();
    let deep = dir.join("selfplay/w-1/000003.shard");
    write_atomic_killed_after(&deep, NEW, Step::Written).unwrap();
    std::fs::write(dir.join(".store.lock"), b"").unwrap();
    std::fs::write(dir.join("run.json"), b"{}").unwrap();
    // A write in progress (younger than the age given) stays.
    remove_stale_temporaries(&dir, Duration::from_secs(3600));
    assert_eq!(names(&dir.join("selfplay/w-1")).len(), 1);
    remove_stale_temporaries(&dir, Duration::ZERO);
    assert!(names(&dir.join("selfplay/w-1")).is_empty());
    assert_eq!(names(&dir), [".store.lock", "run.json", "selfplay"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
