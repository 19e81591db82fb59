//! # atomzero-store
//!
//! Where a run lives: a local directory, or an object store named by a URL (`s3://bucket/prefix`,
//! `gs://`, `az://`), seen the same way as a set of whole objects under `/`-separated keys
//! (`models/best.json`, `selfplay/w-host-1a2b/000003.shard`).
//!
//! - Every write is whole: a reader sees the old object or the new one, never a part (a local
//!   file is written under a temporary name, synced and renamed; an object store's PUT is
//!   atomic).
//! - [`PutMode::Create`] writes only if the key is free (S3 `If-None-Match: *`; locally a hard
//!   link, which fails if the name exists), so two writers never overwrite each other.
//! - [`PutMode::Replace`] is a compare-and-swap on the object's [`Version`] (S3 `If-Match` on
//!   the ETag; locally the content hash compared under a file lock).
//! - Failures that may pass (timeouts, connection errors, 5xx, 429) are retried with
//!   exponential backoff ([`RetryPolicy`]), each one reported to the store's observer; a write
//!   retried after a failure whose outcome is unknown checks what it finds before it calls
//!   the write lost ([`Store::put`]).
//!
//! Credentials and endpoints of object stores come from the environment only, as the
//! providers' own tools read them (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, `AWS_DEFAULT_REGION`, `GOOGLE_*`, `AZURE_*`).

mod local;
mod object;

pub use local::LocalBackend;
pub use object::ObjectBackend;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An object's version, for compare-and-swap writes: an object store's ETag (and version id),
/// or a local file's content hash. Opaque; compare for equality only.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Version {
    tag: String,
    id: Option<String>,
}

impl Version {
    /// A version from a tag (ETag or content hash) and an optional version id.
    pub fn new(tag: impl Into<String>, id: Option<String>) -> Version {
        Version { tag: tag.into(), id }
    }

    /// The tag (ETag or content hash).
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The version id, where the store keeps versions.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// An object read whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its version when read.
    pub version: Version,
    /// When it was written (milliseconds since the Unix epoch), if the store says.
    pub modified_ms: Option<i64>,
}

/// One key found by [`Store::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The key (relative to the store's root).
    pub key: String,
    /// Size in bytes.
    pub size: u64,
}

/// How [`Store::put`] treats an object already under the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PutMode {
    /// Replace whatever is there.
    Overwrite,
    /// Write only if the key is free; else [`StoreError::Exists`].
    Create,
    /// Write only if the object is still at this version; else [`StoreError::Conflict`].
    Replace(Version),
}

/// What a backend reports; [`Store`] turns it into a [`StoreError`] after its retries.
#[derive(Debug)]
pub enum BackendError {
    /// A create-only write found the key taken.
    Exists,
    /// A compare-and-swap found another version (or no object).
    Conflict,
    /// A failure that may pass: timeout, connection, 5xx, 429.
    Transient(String),
    /// A failure that will not pass by retrying: permissions, a missing bucket, a bad key.
    Permanent(String),
}

/// Why a store operation failed.
#[derive(Debug)]
pub enum StoreError {
    /// The location could not be opened as a store.
    Location { location: String, reason: String },
    /// A key this store does not accept.
    Key { key: String, reason: String },
    /// A create-only write found the key taken.
    Exists { location: String },
    /// A compare-and-swap write found another version: someone else wrote the object.
    Conflict { location: String },
    /// The operation failed for good, or kept failing until the retry budget ran out.
    Failed { op: &'static str, location: String, reason: String, attempts: u32 },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Location { location, reason } => {
                write!(f, "cannot open run location '{location}': {reason}")
            }
            StoreError::Key { key, reason } => write!(f, "bad object key '{key}': {reason}"),
            StoreError::Exists { location } => write!(f, "{location} already exists"),
            StoreError::Conflict { location } => {
                write!(f, "{location} was changed by another process")
            }
            StoreError::Failed { op, location, reason, attempts } => {
                write!(f, "{op} {location} failed")?;
                if *attempts > 1 {
                    write!(f, " ({attempts} attempts)")?;
                }
                write!(f, ": {reason}")
            }
        }
    }
}

impl std::error::Error for StoreError {}

/// The operations a location supports. [`Store`] adds key checks and retries on top.
pub trait Backend: Send + Sync + fmt::Debug {
    /// The object under `key`, if any.
    fn get(&self, key: &str) -> Result<Option<Object>, BackendError>;
    /// Writes `bytes` whole under `key`.
    fn put(&self, key: &str, bytes: &[u8], mode: &PutMode) -> Result<Version, BackendError>;
    /// Every key that starts with `prefix`, in no particular order.
    fn list(&self, prefix: &str) -> Result<Vec<Entry>, BackendError>;
    /// Removes `key` (no error if it is not there).
    fn delete(&self, key: &str) -> Result<(), BackendError>;
    /// The location of `key` for messages (a path or a URL).
    fn describe(&self, key: &str) -> String;
    /// The directory objects live in, if they are local files (key = relative path).
    fn local_root(&self) -> Option<&Path>;
}

/// How long and how often failures that may pass are retried.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Wait before the first retry; doubled after each.
    pub first_delay: Duration,
    /// The longest wait between two attempts.
    pub max_delay: Duration,
    /// Give up once this much time has passed since the first attempt.
    pub give_up_after: Duration,
}

impl Default for RetryPolicy {
    /// 0.5 s, doubling up to 30 s between attempts, for up to 10 minutes: a storage outage
    /// of a few minutes costs a worker or a trainer time, not its run.
    fn default() -> RetryPolicy {
        RetryPolicy {
            first_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            give_up_after: Duration::from_secs(600),
        }
    }
}

/// A failed attempt that will be retried, for the store's observer.
#[derive(Clone, Debug)]
pub struct RetryNote {
    /// The operation (`get`, `put`, `list`, `delete`).
    pub op: &'static str,
    /// The object or prefix.
    pub location: String,
    /// What went wrong.
    pub reason: String,
    /// The attempt that failed (1 = the first).
    pub attempt: u32,
    /// The wait before the next attempt.
    pub wait: Duration,
}

impl fmt::Display for RetryNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {} (attempt {}; retrying in {:.1} s)",
            self.op,
            self.location,
            self.reason,
            self.attempt,
            self.wait.as_secs_f64()
        )
    }
}

/// Receives a note for every failed attempt that is retried.
pub type RetryObserver = Arc<dyn Fn(&RetryNote) + Send + Sync>;

/// A run location: a [`Backend`] with key checks and retries.
#[derive(Clone)]
pub struct Store {
    backend: Arc<dyn Backend>,
    location: String,
    retry: RetryPolicy,
    on_retry: Option<RetryObserver>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .field("backend", &self.backend)
            .field("retry", &self.retry)
            .finish()
    }
}

/// True if `location` names an object store (`scheme://...` other than `file://`).
pub fn is_remote(location: &str) -> bool {
    location.split_once("://").is_some_and(|(scheme, _)| scheme != "file")
}

/// Opens a run location: a plain path or `file://` URL is a local directory (created on the
/// first write); `s3://`, `s3a://`, `gs://`, `az://`, `abfs://` and the providers' `https://`
/// forms are object stores configured from the environment.
pub fn open(location: &str) -> Result<Store, StoreError> {
    let backend: Arc<dyn Backend> = if let Some(path) = location.strip_prefix("file://") {
        Arc::new(LocalBackend::new(PathBuf::from(path)))
    } else if is_remote(location) {
        Arc::new(ObjectBackend::open(location)?)
    } else {
        Arc::new(LocalBackend::new(PathBuf::from(location)))
    };
    Ok(Store::with_backend(backend, location))
}

impl Store {
    /// A store over `backend`, named `location` in messages, with the default retry policy.
    pub fn with_backend(backend: Arc<dyn Backend>, location: &str) -> Store {
        Store {
            backend,
            location: location.to_string(),
            retry: RetryPolicy::default(),
            on_retry: None,
        }
    }

    /// The same store with another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Store {
        self.retry = retry;
        self
    }

    /// The same store, reporting every retried failure to `observer`.
    pub fn with_retry_observer(mut self, observer: RetryObserver) -> Store {
        self.on_retry = Some(observer);
        self
    }

    /// The location as given to [`open`].
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The location of `key`, for messages.
    pub fn describe(&self, key: &str) -> String {
        self.backend.describe(key)
    }

    /// The directory the objects are files in, for a local store.
    pub fn local_root(&self) -> Option<&Path> {
        self.backend.local_root()
    }

    /// The object under `key`, or `None`.
    pub fn get(&self, key: &str) -> Result<Option<Object>, StoreError> {
        check_key(key)?;
        self.retrying("get", key, || self.backend.get(key))
            .map(|(value, _)| value)
            .map_err(|f| f.into_error("get", self.describe(key)))
    }

    /// Writes `bytes` whole under `key` as `mode` says. If an attempt failed in a way that
    /// leaves its outcome unknown (a timeout after the request was sent) and a later attempt
    /// then finds the key taken or changed, the object is read back: if it holds `bytes`, the
    /// earlier attempt landed and the write counts as done.
    pub fn put(&self, key: &str, bytes: &[u8], mode: PutMode) -> Result<Version, StoreError> {
        check_key(key)?;
        let location = self.describe(key);
        let result = self.retrying("put", key, || self.backend.put(key, bytes, &mode));
        match result {
            Ok((version, _)) => Ok(version),
            Err(Failure(BackendError::Exists | BackendError::Conflict, attempts))
                if attempts > 1 =>
            {
                match self.get(key)? {
                    Some(object) if object.bytes == bytes => Ok(object.version),
                    _ if mode == PutMode::Create => Err(StoreError::Exists { location }),
                    _ => Err(StoreError::Conflict { location }),
                }
            }
            Err(failure) => Err(failure.into_error("put", location)),
        }
    }

    /// Every key under `prefix` (a key prefix, usually ending in `/`), sorted.
    pub fn list(&self, prefix: &str) -> Result<Vec<Entry>, StoreError> {
        if !prefix.is_empty() {
            check_key(prefix.trim_end_matches('/'))?;
        }
        let (mut entries, _) = self
            .retrying("list", prefix, || self.backend.list(prefix))
            .map_err(|f| f.into_error("list", self.describe(prefix)))?;
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(entries)
    }

    /// Removes `key`; nothing happens if it is not there.
    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        check_key(key)?;
        self.retrying("delete", key, || self.backend.delete(key))
            .map(|_| ())
            .map_err(|f| f.into_error("delete", self.describe(key)))
    }

    /// Runs `attempt` until it succeeds, fails for good, or the retry budget is spent;
    /// returns the value and the number of attempts.
    fn retrying<T>(
        &self,
        op: &'static str,
        key: &str,
        mut attempt: impl FnMut() -> Result<T, BackendError>,
    ) -> Result<(T, u32), Failure> {
        let start = Instant::now();
        let mut wait = self.retry.first_delay;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            match attempt() {
                Ok(value) => return Ok((value, attempts)),
                Err(BackendError::Transient(reason)) => {
                    let elapsed = start.elapsed();
                    if elapsed + wait > self.retry.give_up_after {
                        return Err(Failure(BackendError::Transient(reason), attempts));
                    }
                    if let Some(observer) = &self.on_retry {
                        observer(&RetryNote {
                            op,
                            location: self.describe(key),
                            reason,
                            attempt: attempts,
                            wait,
                        });
                    }
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(self.retry.max_delay);
                }
                Err(e) => return Err(Failure(e, attempts)),
            }
        }
    }
}

/// A failed operation before it becomes a [`StoreError`]: the backend's error and the number
/// of attempts made.
struct Failure(BackendError, u32);

impl Failure {
    fn into_error(self, op: &'static str, location: String) -> StoreError {
        match self.0 {
            BackendError::Exists => StoreError::Exists { location },
            BackendError::Conflict => StoreError::Conflict { location },
            BackendError::Transient(reason) | BackendError::Permanent(reason) => {
                StoreError::Failed { op, location, reason, attempts: self.1 }
            }
        }
    }
}

/// Keys are relative `/`-separated paths of non-empty components of ASCII letters, digits,
/// `.`, `_`, `-` and `=`, none starting with `.` (local temporary files do) or equal to `..`.
pub fn check_key(key: &str) -> Result<(), StoreError> {
    let bad = |reason: &str| Err(StoreError::Key { key: key.to_string(), reason: reason.into() });
    if key.is_empty() {
        return bad("empty");
    }
    for component in key.split('/') {
        if component.is_empty() {
            return bad("empty path component");
        }
        if component.starts_with('.') {
            return bad("a component starts with '.'");
        }
        if !component.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-=".contains(&b)) {
            return bad("only letters, digits, '.', '_', '-', '=' and '/' are allowed");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked() {
        for good in ["config.toml", "models/000001.safetensors", "selfplay/w-a_b=1/000000.shard"] {
            assert!(check_key(good).is_ok(), "{good}");
        }
        for bad in ["", "/abs", "a//b", "../x", "a/../b", ".hidden", "a/.tmp", "sp ace", "a\\b"] {
            assert!(check_key(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn remote_locations_are_urls_other_than_file() {
        assert!(is_remote("s3://bucket/run"));
        assert!(is_remote("gs://bucket"));
        assert!(!is_remote("file:///tmp/run"));
        assert!(!is_remote("runs/tiny"));
        assert!(!is_remote("/abs/path"));
    }
}
