//! Errors: [`ServeError`] for starting the server, [`ApiError`] for one request (a status and a
//! message, answered as JSON `{"error": "..."}`).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The server could not start or stopped with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServeError {
    /// The run directory cannot be used.
    RunDir(PathBuf, String),
    /// The address cannot be bound.
    Bind(SocketAddr, String),
    /// Another I/O error of the server.
    Io(String),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::RunDir(path, e) => write!(f, "run directory {}: {e}", path.display()),
            ServeError::Bind(addr, e) => write!(f, "cannot listen on {addr}: {e}"),
            ServeError::Io(e) => write!(f, "server error: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// A request that cannot be answered with what it asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What was wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// 400: the request is malformed or asks for something impossible (e.g. an illegal move).
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::BAD_REQUEST, message: message.into() }
    }

    /// 404: no such file, game or network.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::NOT_FOUND, message: message.into() }
    }

    /// 409: the request does not fit the current state (e.g. not your turn).
    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::CONFLICT, message: message.into() }
    }

    /// 422: a file of the run is damaged (a corrupt shard or PGN, a network that does not
    /// load): the request was fine, the data it names cannot be shown.
    pub fn unprocessable(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::UNPROCESSABLE_ENTITY, message: message.into() }
    }

    /// 500: reading the run directory failed.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, message: message.into() }
    }

    /// 503: too many games in progress.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::SERVICE_UNAVAILABLE, message: message.into() }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(serde_json::json!({ "error": self.message }))).into_response()
    }
}
