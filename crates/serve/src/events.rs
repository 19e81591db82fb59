//! Live updates: a watcher checks the run directory every `poll` interval
//! ([`crate::rundir::fingerprint`]: sizes and times of the files the pages read) and bumps a
//! version number when anything changed; `/api/events` is a server-sent event stream that sends
//! `event: run` with that version when it changes (and once on connecting), and a comment every
//! 15 s to keep the connection open. The pages refetch what they show when it arrives.

use crate::http::AppState;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Starts the watcher task (on the server's runtime). The first fingerprint is taken before it
/// returns, so any change after the server answers its first request is announced.
pub fn spawn_watcher(state: Arc<AppState>) -> JoinHandle<()> {
    let mut last = Some(crate::rundir::fingerprint(&state.root).0);
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(state.poll);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let root = state.root.clone();
            let Ok((print, _)) =
                tokio::task::spawn_blocking(move || crate::rundir::fingerprint(&root)).await
            else {
                continue;
            };
            if last != Some(print) {
                if last.is_some() {
                    state.version.send_modify(|v| *v += 1);
                }
                last = Some(print);
            }
        }
    })
}

/// The `/api/events` stream.
pub fn stream(state: &AppState) -> Sse<impl Stream<Item = Result<Event, Infallible>> + use<>> {
    let receiver = state.version.subscribe();
    let events = stream::unfold((receiver, true), |(mut receiver, first)| async move {
        if !first && receiver.changed().await.is_err() {
            return None;
        }
        let version = *receiver.borrow_and_update();
        let event = Event::default().event("run").data(version.to_string());
        Some((Ok(event), (receiver, false)))
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
