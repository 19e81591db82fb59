//! Promotion, in one place for the trainer (a run's `models/`) and `atomzero gate` (a
//! directory of networks): a network becomes the best one.
//!
//! The network's weights, then its sidecar, are created once under the new name (`Create`:
//! a promoted network never changes; a promotion cut short by a kill finds what it already
//! wrote and goes on); then `best.json` moves to it by compare-and-swap on the version read
//! just before, so two writers cannot both move it. Only then does the caller remove the
//! candidate. `best.json` is `{"best": "NNNNNN.safetensors"}` (the same file in both places).

use crate::error::{Result, RunError};
use crate::layout::sidecar_key;
use atomzero_store::{PutMode, Store, StoreError, Version};

/// A directory of networks in a store: `<prefix>NNNNNN.safetensors`, each with its
/// `<prefix>NNNNNN.json` sidecar, and `<prefix>best.json` naming the best.
#[derive(Clone, Copy, Debug)]
pub struct Models<'a> {
    store: &'a Store,
    prefix: &'a str,
}

/// The two files of a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// `NNNNNN.safetensors`.
    Weights,
    /// `NNNNNN.json`.
    Sidecar,
}

impl<'a> Models<'a> {
    /// A run's `models/` (`crate::layout`).
    pub fn of_run(store: &'a Store) -> Models<'a> {
        Models { store, prefix: "models/" }
    }

    /// The networks at the root of `store` (`atomzero gate`: the directory of `--best`).
    pub fn at_root(store: &'a Store) -> Models<'a> {
        Models { store, prefix: "" }
    }

    /// The key of network `name`'s weights.
    pub fn weights_key(&self, name: &str) -> String {
        format!("{}{name}.safetensors", self.prefix)
    }

    /// The key of `best.json`.
    pub fn best_key(&self) -> String {
        format!("{}best.json", self.prefix)
    }

    /// The best network's name (`000003`) and the pointer's version; `None` if there is no
    /// pointer. A pointer that is not JSON, has no `"best"`, or names something that cannot be
    /// a network here is an error naming the file.
    pub fn read_best(&self) -> Result<Option<(String, Version)>> {
        let key = self.best_key();
        let Some(object) = self.store.get(&key)? else { return Ok(None) };
        let corrupt =
            |reason: String| RunError::Corrupt { location: self.store.describe(&key), reason };
        let value: serde_json::Value =
            serde_json::from_slice(&object.bytes).map_err(|_| corrupt("not valid JSON".into()))?;
        let file = value
            .get("best")
            .and_then(|v| v.as_str())
            .ok_or_else(|| corrupt("no \"best\" entry".into()))?;
        let name = file.strip_suffix(".safetensors").unwrap_or(file).to_string();
        if atomzero_store::check_key(&self.weights_key(&name)).is_err() || name.contains('/') {
            return Err(corrupt(format!("names '{file}', not a network of this directory")));
        }
        Ok(Some((name, object.version)))
    }

    /// Points `best.json` at `name` if the pointer is still at `version` (`None`: if there is
    /// none). Someone else's move in between is [`RunError::AnotherTrainer`].
    pub fn write_best(&self, name: &str, version: Option<&Version>) -> Result<Version> {
        let text = format!("{{\"best\": \"{name}.safetensors\"}}\n");
        let mode = match version {
            Some(v) => PutMode::Replace(v.clone()),
            None => PutMode::Create,
        };
        let key = self.best_key();
        self.store.put(&key, text.as_bytes(), mode).map_err(|e| match e {
            StoreError::Exists { location } | StoreError::Conflict { location } => {
                RunError::AnotherTrainer { location }
            }
            e => e.into(),
        })
    }

    /// Makes the candidate the best network under `name`: the pointer read (a bad one is an
    /// error before anything is written), the candidate's weights, then its sidecar, each
    /// created unless already in place (`candidate` is asked only for a part not yet written,
    /// so a resumed promotion does not need the candidate it already copied), then `best.json`
    /// moved to `name` unless it already names it.
    pub fn promote(
        &self,
        name: &str,
        mut candidate: impl FnMut(Part) -> Result<Vec<u8>>,
    ) -> Result<()> {
        // The pointer is read first: a bad one stops the promotion before anything is written.
        let current = self.read_best()?;
        let weights = self.weights_key(name);
        for (part, key) in
            [(Part::Weights, weights.clone()), (Part::Sidecar, sidecar_key(&weights))]
        {
            if self.store.get(&key)?.is_some() {
                continue;
            }
            let bytes = candidate(part)?;
            match self.store.put(&key, &bytes, PutMode::Create) {
                Ok(_) | Err(StoreError::Exists { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if current.as_ref().map(|(n, _)| n.as_str()) != Some(name) {
            self.write_best(name, current.as_ref().map(|(_, v)| v))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty directory for one test.
    fn scratch(test: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir()
            .join(format!("atomzero-run-promotion-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn store(dir: &std::path::Path) -> Store {
        atomzero_store::open(&dir.display().to_string()).unwrap()
    }

    fn candidate(part: Part) -> Result<Vec<u8>> {
        Ok(match part {
            Part::Weights => b"weights".to_vec(),
            Part::Sidecar => b"{\"sidecar\": 1}".to_vec(),
        })
    }

    #[test]
    fn promotes_weights_sidecar_then_pointer() {
        let dir = scratch("promotes");
        let store = store(&dir);
        let models = Models::at_root(&store);
        assert_eq!(models.read_best().unwrap(), None);
        models.promote("000001", candidate).unwrap();
        assert_eq!(std::fs::read(dir.join("000001.safetensors")).unwrap(), b"weights");
        assert_eq!(std::fs::read(dir.join("000001.json")).unwrap(), b"{\"sidecar\": 1}");
        assert_eq!(
            std::fs::read_to_string(dir.join("best.json")).unwrap(),
            "{\"best\": \"000001.safetensors\"}\n"
        );
        // A run's models/ holds the same files one level down.
        let run = Models::of_run(&store);
        run.promote("000002", candidate).unwrap();
        assert_eq!(run.read_best().unwrap().unwrap().0, "000002");
        assert!(dir.join("models/000002.json").is_file());
        assert_eq!(
            models.read_best().unwrap().unwrap().0,
            "000001",
            "the root's pointer is its own"
        );
    }

    #[test]
    fn a_promotion_cut_short_is_finished_without_the_candidate() {
        let dir = scratch("cut_short");
        let store = store(&dir);
        let models = Models::at_root(&store);
        models.promote("000000", candidate).unwrap();
        // Killed after the weights were created: the weights are not asked for again, nor
        // rewritten, and the pointer moves.
        std::fs::write(dir.join("000001.safetensors"), b"first copy").unwrap();
        let mut asked = Vec::new();
        models
            .promote("000001", |part| {
                asked.push(part);
                candidate(part)
            })
            .unwrap();
        assert_eq!(asked, vec![Part::Sidecar]);
        assert_eq!(std::fs::read(dir.join("000001.safetensors")).unwrap(), b"first copy");
        assert_eq!(models.read_best().unwrap().unwrap().0, "000001");
        // Promoting again what is already the best asks for nothing and changes nothing.
        let before = std::fs::read(dir.join("best.json")).unwrap();
        models.promote("000001", |_| panic!("nothing to copy")).unwrap();
        assert_eq!(std::fs::read(dir.join("best.json")).unwrap(), before);
    }

    #[test]
    fn the_pointer_moves_only_from_the_version_read() {
        let dir = scratch("pointer");
        let store = store(&dir);
        let models = Models::at_root(&store);
        models.promote("000000", candidate).unwrap();
        let (_, version) = models.read_best().unwrap().unwrap();
        models.write_best("000000", Some(&version)).unwrap();
        // Someone else moved it since `version` was read.
        std::fs::write(dir.join("best.json"), "{\"best\": \"000007.safetensors\"}\n").unwrap();
        let err = models.write_best("000001", Some(&version)).unwrap_err();
        assert!(matches!(err, RunError::AnotherTrainer { .. }), "{err}");
        assert!(models.write_best("000001", None).is_err(), "a pointer exists");
    }

    #[test]
    fn a_bad_pointer_is_an_error_naming_it() {
        let dir = scratch("bad_pointer");
        let store = store(&dir);
        let models = Models::at_root(&store);
        for (text, reason) in [
            ("not json", "not valid JSON"),
            ("{\"other\": 1}", "no \"best\" entry"),
            ("{\"best\": \"../x.safetensors\"}", "names '../x.safetensors'"),
            ("{\"best\": \"sub/x.safetensors\"}", "names 'sub/x.safetensors'"),
        ] {
            std::fs::write(dir.join("best.json"), text).unwrap();
            let err = models.read_best().unwrap_err().to_string();
            assert!(err.contains("best.json") && err.contains(reason), "{text}: {err}");
            // A promotion stops before it writes anything.
            let err = models.promote("000001", candidate).unwrap_err().to_string();
            assert!(err.contains(reason), "{err}");
            assert!(!dir.join("000001.safetensors").exists() && !dir.join("000001.json").exists());
        }
    }
}
