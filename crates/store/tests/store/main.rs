//! The store's contract on a local directory (whole writes, create-only, compare-and-swap
//! under contention, listing) and its retry loop against a backend that fails on purpose:
//! failures that may pass are retried and reported, permanent ones are not, and a write whose
//! first attempt landed although it reported a failure is recognised on the retry.
//! `http`: the S3 backend against a local server that cuts, drops and refuses requests.
//! (The same contract against a real S3 server: scripts/checks/s3-workers.sh.)

mod http;

use atomzero_store::{
    Backend, BackendError, Entry, LocalBackend, Object, PutMode, RetryPolicy, Store, StoreError,
    Version,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("atomzero-store-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn local(name: &str) -> (Store, PathBuf) {
    let dir = temp_dir(name);
    (atomzero_store::open(&dir.display().to_string()).unwrap(), dir)
}

fn quick() -> RetryPolicy {
    RetryPolicy {
        first_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(4),
        give_up_after: Duration::from_secs(5),
    }
}

#[test]
fn create_only_and_compare_and_swap_on_a_directory() {
    let (store, dir) = local("cas");
    assert!(store.get("models/best.json").unwrap().is_none());
    let v1 = store.put("models/best.json", b"one", PutMode::Create).unwrap();
    let err = store.put("models/best.json", b"two", PutMode::Create).unwrap_err();
    assert!(matches!(err, StoreError::Exists { .. }), "{err}");
    let object = store.get("models/best.json").unwrap().unwrap();
    assert_eq!((object.bytes.as_slice(), &object.version), (&b"one"[..], &v1));
    let v2 = store.put("models/best.json", b"three", PutMode::Replace(v1.clone())).unwrap();
    assert_ne!(v1, v2);
    let err = store.put("models/best.json", b"four", PutMode::Replace(v1)).unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    assert!(err.to_string().contains("best.json"), "{err}");
    assert_eq!(store.get("models/best.json").unwrap().unwrap().bytes, b"three");
    // Nothing but the object (and the lock) is left in the directory.
    let names: Vec<String> = std::fs::read_dir(dir.join("models"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["best.json"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn racing_writers_never_both_win() {
    let (store, dir) = local("race");
    store.put("counter", b"0", PutMode::Create).unwrap();
    // 4 threads × 25 increments by compare-and-swap: every success counts exactly once.
    let wins = AtomicU32::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut done = 0;
                while done < 25 {
                    let object = store.get("counter").unwrap().unwrap();
                    let n: u32 = String::from_utf8(object.bytes).unwrap().parse().unwrap();
                    let next = (n + 1).to_string();
                    match store.put("counter", next.as_bytes(), PutMode::Replace(object.version)) {
                        Ok(_) => {
                            done += 1;
                            wins.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(StoreError::Conflict { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            });
        }
        // Racing create-only writes of one name: exactly one wins.
        let created = AtomicU32::new(0);
        std::thread::scope(|s2| {
            for i in 0..8 {
                let (store, created) = (&store, &created);
                s2.spawn(move || {
                    if store.put("once", format!("{i}").as_bytes(), PutMode::Create).is_ok() {
                        created.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(created.load(Ordering::SeqCst), 1);
    });
    let n = String::from_utf8(store.get("counter").unwrap().unwrap().bytes).unwrap();
    assert_eq!(n, "100");
    assert_eq!(wins.load(Ordering::SeqCst), 100);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn listing_finds_keys_by_prefix_and_hides_temporaries() {
    let (store, dir) = local("list");
    for key in ["selfplay/gen000001-000000.shard", "selfplay/w-a/000000.shard", "log.txt"] {
        store.put(key, b"x", PutMode::Overwrite).unwrap();
    }
    std::fs::write(dir.join("selfplay/.half.shard.123-0.tmp"), b"partial").unwrap();
    let keys = |prefix: &str| -> Vec<String> {
        store.list(prefix).unwrap().into_iter().map(|e| e.key).collect()
    };
    assert_eq!(keys("selfplay/"), ["selfplay/gen000001-000000.shard", "selfplay/w-a/000000.shard"]);
    assert_eq!(keys("selfplay/gen"), ["selfplay/gen000001-000000.shard"]);
    assert_eq!(keys("selfplay/w-a/"), ["selfplay/w-a/000000.shard"]);
    assert!(keys("missing/").is_empty());
    store.delete("log.txt").unwrap();
    store.delete("log.txt").unwrap();
    assert!(store.get("log.txt").unwrap().is_none());
    assert!(matches!(store.get("../escape"), Err(StoreError::Key { .. })));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A backend over a directory that fails on purpose: the first `failures` calls of each
/// operation fail with a transient error; with `lost_replies`, a failing put is applied first
/// (the request landed, its reply was lost).
#[derive(Debug)]
struct Flaky {
    inner: LocalBackend,
    failures: u32,
    lost_replies: bool,
    calls: Mutex<std::collections::HashMap<String, u32>>,
    permanent: bool,
}

impl Flaky {
    fn fail(&self, op: &str) -> Option<BackendError> {
        let mut calls = self.calls.lock().unwrap();
        let n = calls.entry(op.to_string()).or_default();
        *n += 1;
        if *n > self.failures {
            return None;
        }
        Some(if self.permanent {
            BackendError::Permanent("403 Forbidden".into())
        } else {
            BackendError::Transient(format!("503 Service Unavailable (call {n})"))
        })
    }
}

impl Backend for Flaky {
    fn get(&self, key: &str) -> Result<Option<Object>, BackendError> {
        match self.fail("get") {
            Some(e) => Err(e),
            None => self.inner.get(key),
        }
    }
    fn put(&self, key: &str, bytes: &[u8], mode: &PutMode) -> Result<Version, BackendError> {
        match self.fail("put") {
            Some(e) => {
                if self.lost_replies {
                    let _ = self.inner.put(key, bytes, mode);
                }
                Err(e)
            }
            None => self.inner.put(key, bytes, mode),
        }
    }
    fn list(&self, prefix: &str) -> Result<Vec<Entry>, BackendError> {
        match self.fail("list") {
            Some(e) => Err(e),
            None => self.inner.list(prefix),
        }
    }
    fn delete(&self, key: &str) -> Result<(), BackendError> {
        self.inner.delete(key)
    }
    fn describe(&self, key: &str) -> String {
        format!("flaky://{key}")
    }
    fn local_root(&self) -> Option<&Path> {
        None
    }
}

fn flaky(name: &str, failures: u32, lost_replies: bool, permanent: bool) -> (Store, PathBuf) {
    let dir = temp_dir(name);
    let backend = Flaky {
        inner: LocalBackend::new(dir.clone()),
        failures,
        lost_replies,
        calls: Mutex::default(),
        permanent,
    };
    (Store::with_backend(Arc::new(backend), "flaky://").with_retry(quick()), dir)
}

#[test]
fn transient_failures_are_retried_and_reported() {
    let (store, dir) = flaky("retry", 3, false, false);
    let notes = Arc::new(Mutex::new(Vec::new()));
    let sink = notes.clone();
    let store =
        store.with_retry_observer(Arc::new(move |note| sink.lock().unwrap().push(note.clone())));
    store.put("a", b"bytes", PutMode::Create).unwrap();
    assert_eq!(store.get("a").unwrap().unwrap().bytes, b"bytes");
    assert_eq!(store.list("").unwrap().len(), 1);
    let notes = notes.lock().unwrap();
    assert_eq!(notes.len(), 9, "3 retries each of put, get and list");
    assert_eq!(notes[0].attempt, 1);
    assert!(notes[1].wait > notes[0].wait, "backoff grows: {:?}", *notes);
    assert!(notes[0].to_string().contains("503"), "{}", notes[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn retries_stop_at_the_budget_and_permanent_failures_at_once() {
    let (store, dir) = flaky("budget", u32::MAX, false, false);
    let store = store.with_retry(RetryPolicy {
        first_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        give_up_after: Duration::from_millis(30),
    });
    match store.get("a").unwrap_err() {
        StoreError::Failed { op: "get", attempts, reason, .. } => {
            assert!(attempts > 2, "{attempts}");
            assert!(reason.contains("503"), "{reason}");
        }
        e => panic!("{e}"),
    }
    let (store, dir2) = flaky("permanent", u32::MAX, false, true);
    match store.put("a", b"x", PutMode::Overwrite).unwrap_err() {
        StoreError::Failed { attempts: 1, reason, .. } => assert!(reason.contains("403")),
        e => panic!("{e}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn a_write_that_landed_before_its_reply_was_lost_counts_once() {
    // Create: the first attempt writes and reports a timeout; the retry finds the name taken
    // by the same bytes: done, not "exists".
    let (store, dir) = flaky("lost-create", 1, true, false);
    store.put("selfplay/w/000000.shard", b"shard", PutMode::Create).unwrap();
    assert_eq!(store.get("selfplay/w/000000.shard").unwrap().unwrap().bytes, b"shard");
    // Other bytes under the name are still refused.
    let err = store.put("selfplay/w/000000.shard", b"other", PutMode::Create).unwrap_err();
    assert!(matches!(err, StoreError::Exists { .. }), "{err}");
    let _ = std::fs::remove_dir_all(&dir);

    // Compare-and-swap: the same for a swap whose reply was lost.
    let dir = temp_dir("lost-swap");
    let plain = atomzero_store::open(&dir.display().to_string()).unwrap();
    let v = plain.put("run.json", b"1", PutMode::Create).unwrap();
    let backend = Flaky {
        inner: LocalBackend::new(dir.clone()),
        failures: 1,
        lost_replies: true,
        calls: Mutex::default(),
        permanent: false,
    };
    let store = Store::with_backend(Arc::new(backend), "flaky://").with_retry(quick());
    store.put("run.json", b"2", PutMode::Replace(v.clone())).unwrap();
    assert_eq!(plain.get("run.json").unwrap().unwrap().bytes, b"2");
    let err = store.put("run.json", b"3", PutMode::Replace(v)).unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
