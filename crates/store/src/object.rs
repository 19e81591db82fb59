//! A run in an object store, through Apache Arrow's `object_store` (S3 and S3-compatible
//! servers, Google Cloud Storage, Azure Blob Storage), driven from blocking code by a
//! single-threaded Tokio runtime of its own.
//!
//! - `object_store`'s own retries are switched off so that every failed attempt reaches
//!   [`Store`](crate::Store)'s retry loop, which reports it and knows when a write's outcome
//!   is unknown. Requests time out after 60 s (connecting after 10 s), set as configuration
//!   keys on top of the environment's (replacing the builder's `ClientOptions` would drop
//!   `AWS_ALLOW_HTTP` and the other client settings read from the environment).
//! - Conditional writes: `Create` is `If-None-Match: *`, `Replace` is `If-Match: <ETag>`
//!   (S3 since 2024, and the S3-compatible servers that follow it; `object_store`'s default
//!   `aws_conditional_put = etag`).
//! - Configuration: the URL names the bucket and prefix; credentials, endpoint, region and
//!   `AWS_ALLOW_HTTP` come from the environment as each provider's builder reads it.

use crate::{Backend, BackendError, Entry, Object, PutMode, StoreError, Version};
use futures_util::TryStreamExt;
use object_store::client::HttpErrorKind;
use object_store::path::Path as ObjectPath;
use object_store::{
    ClientConfigKey, ObjectStore, ObjectStoreExt, PutOptions, PutPayload, RetryConfig,
    UpdateVersion,
};
use std::path::Path;

/// Objects under a prefix of a bucket.
pub struct ObjectBackend {
    store: Box<dyn ObjectStore>,
    prefix: String,
    url: String,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for ObjectBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectBackend").field("url", &self.url).finish()
    }
}

/// The client settings for every provider, as configuration keys: bounded request times.
const CLIENT_SETTINGS: [(ClientConfigKey, &str); 2] =
    [(ClientConfigKey::Timeout, "60s"), (ClientConfigKey::ConnectTimeout, "10s")];

/// No retries inside `object_store`: the store's own loop retries and reports.
fn no_retries() -> RetryConfig {
    RetryConfig { max_retries: 0, ..RetryConfig::default() }
}

impl ObjectBackend {
    /// Opens `url` with settings from the environment.
    pub fn open(url: &str) -> Result<ObjectBackend, StoreError> {
        ObjectBackend::open_with(url, &[])
    }

    /// Opens `url` with settings from the environment and `settings` over them: the
    /// provider's configuration keys as `object_store` names them (`aws_endpoint`,
    /// `aws_allow_http`, `aws_access_key_id`, `google_service_account`, `azure_storage_account_name`,
    /// ...). An unknown key is an error naming it.
    pub fn open_with(url: &str, settings: &[(&str, &str)]) -> Result<ObjectBackend, StoreError> {
        let fail = |reason: String| StoreError::Location { location: url.to_string(), reason };
        let unknown = |key: &str| fail(format!("unknown setting '{key}' for this store"));
        // reqwest is built without a bundled TLS provider: use ring's (a second call finds
        // one installed and changes nothing).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let parsed = url::Url::parse(url).map_err(|e| fail(e.to_string()))?;
        let scheme = parsed.scheme();
        let store: Box<dyn ObjectStore> = match scheme {
            "s3" | "s3a" => {
                use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
                let mut builder =
                    AmazonS3Builder::from_env().with_url(url).with_retry(no_retries());
                for (key, value) in CLIENT_SETTINGS {
                    builder = builder.with_config(AmazonS3ConfigKey::Client(key), value);
                }
                for &(key, value) in settings {
                    let key: AmazonS3ConfigKey = key.parse().map_err(|_| unknown(key))?;
                    builder = builder.with_config(key, value);
                }
                Box::new(builder.build().map_err(|e| fail(e.to_string()))?)
            }
            "gs" => {
                use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
                let mut builder =
                    GoogleCloudStorageBuilder::from_env().with_url(url).with_retry(no_retries());
                for (key, value) in CLIENT_SETTINGS {
                    builder = builder.with_config(GoogleConfigKey::Client(key), value);
                }
                for &(key, value) in settings {
                    let key: GoogleConfigKey = key.parse().map_err(|_| unknown(key))?;
                    builder = builder.with_config(key, value);
                }
                Box::new(builder.build().map_err(|e| fail(e.to_string()))?)
            }
            "az" | "adl" | "azure" | "abfs" | "abfss" => {
                use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
                let mut builder =
                    MicrosoftAzureBuilder::from_env().with_url(url).with_retry(no_retries());
                for (key, value) in CLIENT_SETTINGS {
                    builder = builder.with_config(AzureConfigKey::Client(key), value);
                }
                for &(key, value) in settings {
                    let key: AzureConfigKey = key.parse().map_err(|_| unknown(key))?;
                    builder = builder.with_config(key, value);
                }
                Box::new(builder.build().map_err(|e| fail(e.to_string()))?)
            }
            other => {
                return Err(fail(format!(
                    "unknown scheme '{other}' (use a directory, file://, s3://, gs:// or az://)"
                )));
            }
        };
        // The bucket is the URL's host; the prefix its path.
        let prefix = parsed.path().trim_matches('/').to_string();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(format!("cannot start the I/O runtime: {e}")))?;
        Ok(ObjectBackend { store, prefix, url: url.trim_end_matches('/').to_string(), runtime })
    }

    fn path(&self, key: &str) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from(key)
        } else {
            ObjectPath::from(format!("{}/{key}", self.prefix))
        }
    }

    /// The key of `path` relative to the prefix.
    fn key_of(&self, path: &ObjectPath) -> String {
        let full = path.as_ref();
        if self.prefix.is_empty() {
            full.to_string()
        } else {
            full.strip_prefix(&self.prefix)
                .map(|k| k.trim_start_matches('/').to_string())
                .unwrap_or_else(|| full.to_string())
        }
    }
}

/// Sorts an `object_store` error into what the retry loop needs: transport failures and
/// server-side statuses (5xx, 408, 429) may pass; everything else will not.
fn classify(error: object_store::Error) -> BackendError {
    use object_store::Error as E;
    match error {
        E::AlreadyExists { .. } => BackendError::Exists,
        E::Precondition { .. } => BackendError::Conflict,
        E::Generic { .. } | E::JoinError { .. } => {
            let message = one_line(&error.to_string());
            if transient_message(&message) || has_transport_error(&error) {
                BackendError::Transient(message)
            } else {
                BackendError::Permanent(message)
            }
        }
        other => BackendError::Permanent(one_line(&other.to_string())),
    }
}

/// True if the chain of `error` holds a transport failure that may pass (connecting, sending,
/// a timeout, an interrupted or undecodable body); not a request that could not be built
/// (e.g. an `http://` endpoint without `AWS_ALLOW_HTTP=true`), which fails the same way again.
fn has_transport_error(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(http) = e.downcast_ref::<object_store::client::HttpError>() {
            return !matches!(http.kind(), HttpErrorKind::Unknown);
        }
        current = e.source();
    }
    false
}

/// A status the server may not answer next time: `object_store` words them as
/// "non-2xx status code: 503 Service Unavailable".
fn transient_message(message: &str) -> bool {
    let Some((_, rest)) = message.split_once("status code: ") else { return false };
    let code: u16 = rest.chars().take(3).collect::<String>().parse().unwrap_or(0);
    code >= 500 || code == 408 || code == 429
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Backend for ObjectBackend {
    fn get(&self, key: &str) -> Result<Option<Object>, BackendError> {
        let path = self.path(key);
        self.runtime.block_on(async {
            let result = match self.store.get(&path).await {
                Ok(result) => result,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(classify(e)),
            };
            let version = Version::new(
                result.meta.e_tag.clone().unwrap_or_default(),
                result.meta.version.clone(),
            );
            let modified_ms = Some(result.meta.last_modified.timestamp_millis());
            let bytes = result.bytes().await.map_err(classify)?;
            Ok(Some(Object { bytes: bytes.to_vec(), version, modified_ms }))
        })
    }

    fn put(&self, key: &str, bytes: &[u8], mode: &PutMode) -> Result<Version, BackendError> {
        let path = self.path(key);
        let mode = match mode {
            PutMode::Overwrite => object_store::PutMode::Overwrite,
            PutMode::Create => object_store::PutMode::Create,
            PutMode::Replace(version) => object_store::PutMode::Update(UpdateVersion {
                e_tag: Some(version.tag().to_string()),
                version: version.id().map(str::to_string),
            }),
        };
        let options = PutOptions { mode, ..PutOptions::default() };
        let payload = PutPayload::from(bytes.to_vec());
        self.runtime.block_on(async {
            let result = self.store.put_opts(&path, payload, options).await.map_err(classify)?;
            Ok(Version::new(result.e_tag.unwrap_or_default(), result.version))
        })
    }

    fn list(&self, prefix: &str) -> Result<Vec<Entry>, BackendError> {
        // object_store lists whole path segments: list the deepest directory the prefix
        // names, then filter by the whole prefix.
        let dir = match prefix.rfind('/') {
            Some(i) => &prefix[..i],
            None => "",
        };
        let dir_path = if dir.is_empty() && self.prefix.is_empty() {
            None
        } else if dir.is_empty() {
            Some(ObjectPath::from(self.prefix.as_str()))
        } else {
            Some(self.path(dir))
        };
        self.runtime.block_on(async {
            let metas: Vec<object_store::ObjectMeta> =
                self.store.list(dir_path.as_ref()).try_collect().await.map_err(classify)?;
            Ok(metas
                .into_iter()
                .map(|m| Entry { key: self.key_of(&m.location), size: m.size })
                .filter(|e| e.key.starts_with(prefix))
                .collect())
        })
    }

    fn delete(&self, key: &str) -> Result<(), BackendError> {
        let path = self.path(key);
        self.runtime.block_on(async {
            match self.store.delete(&path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(classify(e)),
            }
        })
    }

    fn describe(&self, key: &str) -> String {
        format!("{}/{key}", self.url)
    }

    fn local_root(&self) -> Option<&Path> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_statuses_that_may_pass_are_transient() {
        assert!(transient_message("Server returned non-2xx status code: 503 Service Unavailable"));
        assert!(transient_message("... non-2xx status code: 429 Too Many Requests: slow down"));
        assert!(!transient_message("Server returned non-2xx status code: 403 Forbidden"));
        assert!(!transient_message("no status here"));
    }

    #[test]
    fn an_unknown_setting_is_named() {
        let err = ObjectBackend::open_with("s3://b", &[("aws_no_such_key", "1")]).unwrap_err();
        assert!(err.to_string().contains("unknown setting 'aws_no_such_key'"), "{err}");
        assert!(ObjectBackend::open_with("s3://b", &[("aws_region", "us-east-1")]).is_ok());
    }
}
