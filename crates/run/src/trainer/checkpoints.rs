//! The trainer's checkpoints in a remote run: the newest one fetched into the local mirror
//! before training, the newest local one uploaded after (its `state.json` last, so a
//! checkpoint counts only when whole), and the oldest beyond `train.keep_checkpoints`
//! removed (`state.json` first).

use super::Generations;
use crate::error::{Result, RunError, io};
use crate::layout::{self, RunDir};
use atomzero_store::PutMode;
use std::collections::BTreeMap;

impl Generations<'_> {
    /// Brings the newest checkpoint of a remote run into the mirror, unless the mirror has
    /// one as new.
    pub(super) fn fetch_checkpoint(&mut self) -> Result<()> {
        if !self.dir.is_remote() {
            return Ok(());
        }
        let local_dir = self.dir.local(layout::CHECKPOINTS);
        let local_newest = atomzero_train::checkpoint::list(&local_dir).pop().map(|(s, _)| s);
        let Some((step, files)) = remote_checkpoints(self.dir)?.pop() else { return Ok(()) };
        if local_newest.is_some_and(|s| s >= step) {
            return Ok(());
        }
        let name = checkpoint_dir_name(step);
        let partial = local_dir.join(format!(".{name}.partial"));
        let _ = std::fs::remove_dir_all(&partial);
        for key in &files {
            let object = self.dir.store().get(key)?.ok_or_else(|| RunError::Corrupt {
                location: self.dir.describe(key),
                reason: "vanished while being fetched".into(),
            })?;
            let file = key.rsplit('/').next().unwrap_or_default();
            layout::write_local(&partial.join(file), &object.bytes)?;
        }
        let target = local_dir.join(&name);
        std::fs::rename(&partial, &target).map_err(io(&target))?;
        Ok(())
    }

    /// Uploads the newest local checkpoint of a remote run (its `state.json` last) and removes
    /// remote checkpoints beyond the newest `keep_checkpoints`.
    pub(super) fn publish_checkpoint(&mut self) -> Result<()> {
        if !self.dir.is_remote() {
            return Ok(());
        }
        let local_dir = self.dir.local(layout::CHECKPOINTS);
        let Some((step, path)) = atomzero_train::checkpoint::list(&local_dir).pop() else {
            return Ok(());
        };
        let remote = remote_checkpoints(self.dir)?;
        if !remote.iter().any(|(s, _)| *s == step) {
            let prefix = format!("{}/{}", layout::CHECKPOINTS, checkpoint_dir_name(step));
            let mut names: Vec<String> = std::fs::read_dir(&path)
                .map_err(io(&path))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != STATE_FILE && !n.starts_with('.'))
                .collect();
            names.sort();
            names.push(STATE_FILE.to_string());
            for name in names {
                let file = path.join(&name);
                let bytes = std::fs::read(&file).map_err(io(&file))?;
                self.dir.put(&format!("{prefix}/{name}"), &bytes, PutMode::Overwrite)?;
            }
        }
        let keep = self.config.train.keep_checkpoints.max(1);
        let remote = remote_checkpoints(self.dir)?;
        if remote.len() > keep {
            for (_, files) in &remote[..remote.len() - keep] {
                // state.json first: the checkpoint stops counting before its parts go.
                let mut files = files.clone();
                files.sort_by_key(|k| !k.ends_with(STATE_FILE));
                for key in files {
                    self.dir.store().delete(&key)?;
                }
            }
        }
        Ok(())
    }
}

/// A checkpoint's file that says it is complete (written last).
const STATE_FILE: &str = "state.json";

fn checkpoint_dir_name(step: u64) -> String {
    format!("step-{step:08}")
}

/// The complete checkpoints of a remote run (those with `state.json`), oldest first, with
/// their keys.
fn remote_checkpoints(dir: &RunDir) -> Result<Vec<(u64, Vec<String>)>> {
    let mut by_step: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for entry in dir.store().list(&format!("{}/", layout::CHECKPOINTS))? {
        let mut parts = entry.key.split('/').skip(1);
        let Some(step) = parts.next().and_then(|d| d.strip_prefix("step-")?.parse().ok()) else {
            continue;
        };
        by_step.entry(step).or_default().push(entry.key);
    }
    Ok(by_step
        .into_iter()
        .filter(|(_, keys)| keys.iter().any(|k| k.ends_with(&format!("/{STATE_FILE}"))))
        .collect())
}
