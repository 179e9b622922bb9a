//! Server-sent events of a streamed model answer.

use super::ProviderError;
use eventsource_stream::Eventsource;
use futures_util::{Stream, StreamExt};

/// One event: its type (`message` when unnamed) and data.
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

/// The events of a streamed response body.
pub(crate) fn events(response: reqwest::Response) -> impl Stream<Item = Result<SseEvent, ProviderError>> + Send {
    response.bytes_stream().eventsource().map(|item| match item {
        Ok(e) => Ok(SseEvent { event: e.event, data: e.data }),
        Err(e) => Err(ProviderError::Transport(format!("stream interrupted: {e}"))),
    })
}

/// Whether a response is an event stream (servers may ignore `stream: true`).
pub(crate) fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}
