//! What the AI sidebar shows that the server renders: a conversation as it
//! happened (what was said, every call with its result — a failed one
//! marked, with its error —, each approval asked with its answer, what each
//! turn changed with its undo, each undo and failure, the release a turn in
//! release mode put its changes in), an approval asked in the person's
//! words with the exact call one click away, and a turn's release with
//! each document's differences against the site and what can be done to
//! it as it stands (publish, schedule, open, discard).
//! The sidebar's script asks for a conversation when it shows one again
//! (on another screen, after a reload, from the history), for an approval
//! when the agent asks, and for a turn's release when the turn ends; the
//! buttons post to the REST API and the release screen's own routes.

use crate::Person;
use crate::error::WebError;
use crate::frame::Who;
use crate::names::{Named, Records, noun};
use crate::releases::{ItemView, item_view};
use crate::removal::archive_question;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Html;
use quire_agent::{Message, PendingCall, Record};
use quire_app::Failure;
use quire_app::chat::{self, Conversation};
use quire_app::content::{Confirmation, StoredMessage};
use quire_app::releases::Release;
use quire_core::access::{Permission, authorize};
use quire_core::model::{ArchivedItem, ConfirmationStatus, EntityKind, ReleaseState, SessionStatus};
use quire_server::AppState;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// A turn's release as the sidebar shows it.
pub struct TurnRelease {
    /// The session it was made in.
    pub session: String,
    /// The turn whose changes it holds.
    pub turn: i64,
    pub release: Release,
    pub items: Vec<ItemView>,
}

impl TurnRelease {
    fn is(&self, state: &str) -> bool {
        self.release.state.as_str() == state
    }

    /// What the release's state means for the site, in the sidebar's words.
    fn standing(&self) -> &'static str {
        match self.release.state {
            ReleaseState::Open => {
                "This turn's changes wait in this release: the drafts and the site stay as they are until it is \
                 published."
            }
            ReleaseState::Scheduled => "This turn's changes are scheduled to go on the site.",
            ReleaseState::Published => "Published: this turn's changes are on the site.",
            ReleaseState::Reverted => "Published, then reverted: the site shows what it showed before.",
            ReleaseState::Discarded => "Discarded: this turn's changes will not be published.",
        }
    }
}

#[derive(Template)]
#[template(path = "ai_releases.html")]
struct TurnReleases {
    csrf: String,
    csrf_field: &'static str,
    /// Whether the person may publish and discard releases (the buttons;
    /// the use cases decide again).
    may_publish: bool,
    releases: Vec<TurnRelease>,
}

/// Which turn's release to show.
#[derive(Deserialize)]
pub struct TurnQuery {
    /// One turn; without it, every turn of the session that made one.
    #[serde(default)]
    turn: Option<i64>,
}

/// Whether the person may publish and discard releases (the buttons; the
/// use cases decide again).
fn may_publish(person: &Person) -> bool {
    let who = person.actor().principal();
    [EntityKind::Page, EntityKind::Entry, EntityKind::Navigation]
        .into_iter()
        .any(|kind| authorize(&who, Permission::Publish(kind)).is_ok())
}

/// The releases the session's turns put their changes in (of `turn`
/// alone, when given), oldest turn first.
async fn turn_releases(person: &Person, session: &str, turn: Option<i64>) -> Result<Vec<TurnRelease>, WebError> {
    let content = &person.content;
    // The person's own conversation (or any, for administrators).
    let turns: Vec<(i64, String)> = content
        .session_releases(session)
        .await?
        .into_iter()
        .filter(|(t, _)| turn.is_none_or(|wanted| wanted == *t))
        .collect();
    let mut shown = Vec::new();
    for (turn, id) in turns {
        let review = match content.release_review(&id).await {
            Ok((review, _)) => review,
            // The turn staged nothing: it has no release.
            Err(e) if e.failure == Failure::NotFound => continue,
            Err(e) => return Err(e.into()),
        };
        let mut items = Vec::new();
        for item in review.items {
            items.push(item_view(content, item).await);
        }
        shown.push(TurnRelease { session: session.to_string(), turn, release: review.release, items });
    }
    Ok(shown)
}

/// `GET /ai/sessions/{id}/releases`: the releases the session's turns put
/// their changes in (with `?turn=`, that turn's), oldest turn first, as
/// items of the sidebar's list; nothing when no turn made one.
pub async fn releases(
    person: Person,
    Path(session): Path<String>,
    Query(q): Query<TurnQuery>,
) -> Result<Html<String>, WebError> {
    let releases = turn_releases(&person, &session, q.turn).await?;
    let page = TurnReleases {
        csrf: person.session.csrf.clone(),
        csrf_field: crate::CSRF_FIELD,
        may_publish: may_publish(&person),
        releases,
    };
    Ok(Html(page.render()?))
}

/// A call of a tool as the log shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallView {
    /// The model's id of the call.
    pub id: String,
    pub name: String,
    /// Its arguments, shortened for the line that names it.
    pub args: String,
    /// Its result, as readable JSON; none while it waits.
    pub result: Option<String>,
    /// Why it failed, when it did.
    pub failed: Option<String>,
    /// What it answered, in words (a result's `message`).
    said: Option<String>,
}

/// An approval an agent asked for, as the log shows it.
pub struct ApprovalView {
    /// The approval's id (its confirmation).
    pub id: String,
    /// The call that waits on it.
    pub tool_call: String,
    pub tool: String,
    /// What the person is asked, in words ("Archive the page Contact and its 1 section?").
    pub question: String,
    /// What approving does, and how it is taken back.
    pub consequence: &'static str,
    /// The records it would change, named, with links while live.
    pub records: Vec<Named>,
    /// The exact arguments, as readable JSON.
    pub args: String,
    /// Whether it can be answered now.
    pub waiting: bool,
    /// What became of it, in words (empty while it waits).
    pub status: String,
}

/// What a turn changed, as the log shows it under the turn.
pub struct ChangedView {
    pub turn: i64,
    pub records: Vec<Named>,
    /// Whether it can be undone from here (not undone yet, not running).
    pub undo: bool,
}

/// One item of the sidebar's log.
pub enum Shown {
    /// What the person said.
    User(String),
    /// What the agent said.
    Said(String),
    Call(CallView),
    Asked(ApprovalView),
    Changed(ChangedView),
    /// A note: a turn undone, or (marked as an error) a turn that failed.
    Note(String, bool),
    Release(TurnRelease),
}

/// A conversation's stored messages read as what the sidebar showed, in
/// order, before records are named and answers looked up.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    User(String),
    Said(String),
    Call(CallView),
    Approval(PendingCall),
    Undo {
        turn: i64,
        reverted: usize,
    },
    Failure(String),
    /// The end of a turn (after its last message): what it changed goes here.
    TurnEnd(i64),
}

/// Tools whose words are what the agent says, not calls to show.
const SAYING: [&str; 2] = ["finalAnswer", "acknowledgeRequest"];

/// At most this many characters of a call's arguments on its line.
const SHORT: usize = 120;

fn shortened(text: &str) -> String {
    if text.chars().count() <= SHORT {
        return text.to_string();
    }
    let mut s: String = text.chars().take(SHORT - 3).collect();
    s.push('…');
    s
}

/// JSON text as a person reads it (indented); other text as it is.
fn readable(text: &str) -> String {
    serde_json::from_str::<Value>(text).ok().and_then(|v| serde_json::to_string_pretty(&v).ok()).unwrap_or(text.into())
}

/// Reads the messages (in order) as the steps the sidebar showed. A turn
/// ends after its last message, or where an undo came (a person's, after
/// the turn); the turn still running, if any, has no end yet.
fn steps<'a>(messages: impl IntoIterator<Item = &'a StoredMessage>, running: Option<i64>) -> Vec<Step> {
    let mut out = Vec::new();
    let mut ended = HashSet::new();
    let mut end = |t: i64, out: &mut Vec<Step>| {
        if running != Some(t) && ended.insert(t) {
            out.push(Step::TurnEnd(t));
        }
    };
    let mut turn = None;
    for m in messages {
        if let Ok(Record::Undo { turn: undone, reverted, .. }) = serde_json::from_value::<Record>(m.body.clone()) {
            if let Some(t) = turn.take() {
                end(t, &mut out);
            }
            out.push(Step::Undo { turn: undone, reverted });
            continue;
        }
        if let Some(t) = turn.filter(|t| *t != m.turn) {
            end(t, &mut out);
        }
        turn = Some(m.turn);
        if let Ok(message) = serde_json::from_value::<Message>(m.body.clone()) {
            read_message(message, &mut out);
            continue;
        }
        match serde_json::from_value::<Record>(m.body.clone()) {
            Ok(Record::Approval(p)) => out.push(Step::Approval(*p)),
            Ok(Record::Failure { message, .. }) => out.push(Step::Failure(message)),
            Ok(Record::Undo { .. }) | Err(_) => {}
        }
    }
    if let Some(t) = turn {
        end(t, &mut out);
    }
    out
}

/// One message of the conversation as steps: what was said once, each call
/// on its line, each result on its call's.
fn read_message(message: Message, out: &mut Vec<Step>) {
    match message {
        Message::User { content } => out.push(Step::User(content)),
        Message::Assistant { content, tool_calls } => {
            let said: Vec<String> = tool_calls
                .iter()
                .filter(|c| SAYING.contains(&c.name.as_str()))
                .filter_map(|c| c.parsed_arguments().ok()?.get("message")?.as_str().map(str::to_string))
                .collect();
            if !content.trim().is_empty() && !said.contains(&content) {
                out.push(Step::Said(content));
            }
            for c in tool_calls.into_iter().filter(|c| !SAYING.contains(&c.name.as_str())) {
                let args = shortened(&c.arguments);
                out.push(Step::Call(CallView { id: c.id, name: c.name, args, result: None, failed: None, said: None }));
            }
            out.extend(said.into_iter().map(Step::Said));
        }
        Message::Tool { tool_call_id, content, is_error, .. } => {
            let Some(call) = out.iter_mut().rev().find_map(|s| match s {
                Step::Call(c) if c.id == tool_call_id => Some(c),
                _ => None,
            }) else {
                return;
            };
            let result: Value = serde_json::from_str(&content).unwrap_or(Value::Null);
            if is_error || result.get("success").and_then(Value::as_bool) == Some(false) {
                let why = result.get("error").and_then(Value::as_str).map_or(content.clone(), str::to_string);
                call.failed = Some(why);
            }
            call.said = result.get("message").and_then(Value::as_str).map(str::to_string);
            call.result = Some(readable(&content));
        }
    }
}

/// What the person is asked about a call, and what approving does: the
/// records it would change named (a page by its name, a section as its
/// template on its page), counted as the back-office's own confirmations
/// count them.
fn question(tool: &str, args: &Value, items: &[ArchivedItem], release: Option<&str>) -> (String, &'static str) {
    let named = |i: &ArchivedItem| format!("the {} {}", noun(i.entity), i.label);
    let list = |items: &[ArchivedItem]| join(&items.iter().map(named).collect::<Vec<_>>());
    // The records the call names (by id, or a post by its slug).
    let asked: Vec<&str> = args
        .get("ids")
        .or_else(|| args.get("slugs"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let roots = asked.len().max(1);
    match tool {
        _ if tool.starts_with("delete") => {
            let question = if roots <= 1 || items.is_empty() {
                archive_question(items)
            } else {
                let mut firsts: Vec<&ArchivedItem> = items
                    .iter()
                    .filter(|i| asked.contains(&i.id.as_str()) || asked.contains(&i.label.as_str()))
                    .collect();
                if firsts.is_empty() {
                    firsts = items.iter().take(roots).collect();
                }
                let along = items.len().saturating_sub(firsts.len());
                let labels: Vec<String> = firsts.iter().map(|i| format!("“{}”", i.label)).collect();
                let noun = noun(items[0].entity);
                let with = if along > 0 { format!(" and {along} record(s) that go with them") } else { String::new() };
                format!("Archive {} {noun}s ({}){with}?", firsts.len(), join(&labels))
            };
            (question, "Nothing is deleted: it leaves the drafts and the site, and the Archive can bring it all back.")
        }
        "restoreArchive" => {
            let question = if roots <= 1 {
                format!("Restore{}", archive_question(items).trim_start_matches("Archive"))
            } else {
                format!("Restore {roots} archives, {} record(s) in all?", items.len())
            };
            (question, "They come back as they were archived; archiving them again takes them back.")
        }
        "publishContent" => (format!("Publish {}?", list(items)), "It goes on the public site as its draft is now."),
        "unpublishContent" => {
            (format!("Take {} off the site?", list(items)), "It leaves the public site and stays as a draft.")
        }
        "discardDraft" => (
            format!("Discard the draft changes of {}?", list(items)),
            "The draft goes back to what is published; every change stays in the history.",
        ),
        "publishRelease" => (
            format!("Publish the release {}?", release.map_or("the agent named".into(), |n| format!("“{n}”"))),
            "Every document of the release goes on the site at once; reverting the release sets it back.",
        ),
        "revertRelease" => (
            format!("Revert the release {}?", release.map_or("the agent named".into(), |n| format!("“{n}”"))),
            "The site goes back to what it showed before the release, all of it at once.",
        ),
        "httpPost" => (
            format!("Send a POST request to {}?", args.get("url").and_then(Value::as_str).unwrap_or("the address")),
            "The request leaves Quire: it cannot be taken back.",
        ),
        // A call that waits because the person asked to approve such calls
        // (their approval preferences): the record it names, if one.
        _ if tool.starts_with("update") && !items.is_empty() => {
            (format!("Change {}?", list(items)), "It changes as the call says; undoing the turn puts it back.")
        }
        _ if tool.starts_with("get") && !items.is_empty() => {
            (format!("Let the agent read {}?", list(items)), "Nothing changes: the agent reads it.")
        }
        other => (format!("Let the agent run {other}?"), "Nothing changes until you approve."),
    }
}

/// "a", "a and b", "a, b and c".
fn join(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The records a preview lists (objects with an `entity`, an `id` and a
/// `label`), in its order.
fn previewed(items: &Value) -> Vec<ArchivedItem> {
    items
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|i| {
            Some(ArchivedItem {
                entity: EntityKind::parse("entity", i.get("entity")?.as_str()?).ok()?,
                id: i.get("id")?.as_str()?.to_string(),
                label: i.get("label").and_then(Value::as_str).unwrap_or_default().to_string(),
            })
        })
        .collect()
}

/// What became of an approval, in words: empty while it waits.
fn answered(c: &Confirmation, outcome: Option<&CallView>, who: &Who) -> String {
    let by = || c.resolved_by.as_deref().map(|a| format!(" by {}", who.name(a))).unwrap_or_default();
    match c.status {
        ConfirmationStatus::Pending if chat::waiting(c) => String::new(),
        ConfirmationStatus::Pending => "Nobody answered in time: it was not run.".into(),
        ConfirmationStatus::Rejected if c.reason.as_deref() == Some("the turn was undone") => {
            "Cancelled: the turn was undone.".into()
        }
        ConfirmationStatus::Rejected => match c.reason.as_deref().filter(|r| !r.trim().is_empty()) {
            Some(reason) => format!("Rejected{}: {reason}", by()),
            None => format!("Rejected{}.", by()),
        },
        ConfirmationStatus::Approved | ConfirmationStatus::Used => {
            let ran = match outcome {
                Some(CallView { failed: Some(why), .. }) => format!(" Not run: {why}"),
                Some(CallView { result: Some(_), said, .. }) => {
                    format!(" Done: {}", said.as_deref().unwrap_or("it ran."))
                }
                _ => String::new(),
            };
            format!("Approved{}.{ran}", by())
        }
    }
}

/// What a person is asked about `tool` called with `args` over the
/// previewed `items` (a preview's `items`), and what approving does, with
/// the records named as the screens name them: one wording for the
/// sidebar, Approvals and the dashboard.
pub(crate) async fn asked_in_words(
    person: &Person,
    tool: &str,
    args: &Value,
    items: &Value,
) -> (String, &'static str, Vec<ArchivedItem>) {
    let mut groups = crate::removal::named(person, vec![previewed(items)]).await;
    let items = groups.pop().unwrap_or_default();
    let release = match tool {
        "publishRelease" | "revertRelease" => match args.get("id").and_then(Value::as_str) {
            Some(id) => person.content.release_review(id).await.ok().map(|(r, _)| r.release.name),
            None => None,
        },
        _ => None,
    };
    let (question, consequence) = question(tool, args, &items, release.as_deref());
    (question, consequence, items)
}

/// An approval as the log shows it: asked about `tool` with `args` over
/// the previewed `items`, answered as `answer` says (none: not known).
async fn approval_view(
    person: &Person,
    asked: &PendingCall,
    answer: Option<&Confirmation>,
    outcome: Option<&CallView>,
    who: &Who,
) -> ApprovalView {
    let (question, consequence, items) = asked_in_words(person, &asked.tool, &asked.arguments, &asked.items).await;
    let records = Records::of(person, items.iter().map(|i| (i.entity, i.id.as_str()))).await;
    ApprovalView {
        id: asked.approval_id.clone(),
        tool_call: asked.tool_call_id.clone(),
        tool: asked.tool.clone(),
        question,
        consequence,
        records: items.iter().map(|i| records.named(i.entity, &i.id)).collect(),
        args: serde_json::to_string_pretty(&asked.arguments).unwrap_or_default(),
        waiting: answer.is_some_and(chat::waiting),
        status: answer.map(|c| answered(c, outcome, who)).unwrap_or_default(),
    }
}

#[derive(Template)]
#[template(path = "ai_conversation.html")]
struct ConversationLog {
    csrf: String,
    csrf_field: &'static str,
    may_publish: bool,
    session: String,
    /// Its turns so far.
    turns: i64,
    /// Where the script follows the stream on from ("": the latest run's start).
    last_event: String,
    shown: Vec<Shown>,
}

/// `GET /ai/sessions/{id}`: a conversation of the person's (or any, for
/// administrators) as it happened, as the items of the sidebar's log; the
/// list says where to follow its stream on from. While a turn runs, what
/// its latest run stored is left to the stream, which replays that run.
pub async fn conversation(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
) -> Result<Html<String>, WebError> {
    let c = chat::conversation(state.runtime(), person.actor(), &id).await?;
    let running = (c.session.status == SessionStatus::Running).then_some(c.session.turns);
    let steps = steps(c.settled(), running);
    let shown = shown(&person, &c, steps, running).await?;
    let last_event = if c.run_started.is_some() { String::new() } else { c.last_event_id.to_string() };
    let page = ConversationLog {
        csrf: person.session.csrf.clone(),
        csrf_field: crate::CSRF_FIELD,
        may_publish: may_publish(&person),
        session: c.session.id.clone(),
        turns: c.session.turns,
        last_event,
        shown,
    };
    Ok(Html(page.render()?))
}

/// The steps as the log's items: approvals with their answers, each turn's
/// changes named under it with its undo, its release after them.
async fn shown(
    person: &Person,
    c: &Conversation,
    steps: Vec<Step>,
    running: Option<i64>,
) -> Result<Vec<Shown>, WebError> {
    // What each turn changed, each record once, in the order first changed.
    let mut changed: HashMap<i64, Vec<(EntityKind, String)>> = HashMap::new();
    for change in &c.changes {
        let Some(turn) = change.change.turn_id.as_deref().and_then(|t| t.parse::<i64>().ok()) else { continue };
        let records = changed.entry(turn).or_default();
        let record = (change.change.entity, change.change.entity_id.clone());
        if !records.contains(&record) {
            records.push(record);
        }
    }
    let names = Records::of(person, changed.values().flatten().map(|(k, id)| (*k, id.as_str()))).await;
    let who = Who::named(person, c.approvals.iter().filter_map(|a| a.resolved_by.as_deref())).await;
    let undone: HashSet<i64> =
        steps.iter().filter_map(|s| if let Step::Undo { turn, .. } = s { Some(*turn) } else { None }).collect();
    let mut releases = turn_releases(person, &c.session.id, None).await?;
    let calls: HashMap<String, CallView> = steps
        .iter()
        .filter_map(|s| if let Step::Call(call) = s { Some((call.id.clone(), call.clone())) } else { None })
        .collect();
    let mut out = Vec::new();
    for step in steps {
        match step {
            Step::User(text) => out.push(Shown::User(text)),
            Step::Said(text) => out.push(Shown::Said(text)),
            Step::Call(call) => out.push(Shown::Call(call)),
            Step::Approval(asked) => {
                let answer = c.approvals.iter().find(|a| a.id == asked.approval_id);
                let view = approval_view(person, &asked, answer, calls.get(&asked.tool_call_id), &who).await;
                out.push(Shown::Asked(view));
            }
            Step::Undo { reverted, .. } => {
                out.push(Shown::Note(format!("Undone: {reverted} change(s) reverted."), false))
            }
            Step::Failure(why) => out.push(Shown::Note(format!("The turn failed: {why}"), true)),
            Step::TurnEnd(turn) => {
                if let Some(records) = changed.get(&turn) {
                    out.push(Shown::Changed(ChangedView {
                        turn,
                        records: records.iter().map(|(kind, id)| names.named(*kind, id)).collect(),
                        undo: !undone.contains(&turn) && running != Some(turn),
                    }));
                }
                let (mine, rest) = releases.into_iter().partition(|r: &TurnRelease| r.turn == turn);
                releases = rest;
                out.extend(mine.into_iter().map(Shown::Release));
            }
        }
    }
    Ok(out)
}

#[derive(Template)]
#[template(path = "ai_approval.html")]
struct OneApproval {
    a: ApprovalView,
}

/// `GET /ai/approvals/{id}`: an approval an agent asked for in a
/// conversation of the person's (or any, for administrators), as an item
/// of the sidebar's log: the question in words, the records named, the
/// exact arguments one click away, and the answer buttons while it waits.
pub async fn approval(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<String>,
) -> Result<Html<String>, WebError> {
    let c = chat::asked_approval(state.runtime(), person.actor(), &id).await?;
    let asked = PendingCall {
        tool_call_id: String::new(),
        tool: c.tool.clone(),
        arguments: c.args.clone(),
        approval_id: c.id.clone(),
        message: c.preview.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
        items: c.preview.get("items").cloned().unwrap_or(Value::Null),
        expires_at: Some(c.expires_at),
    };
    let who = Who::named(&person, c.resolved_by.as_deref()).await;
    let a = approval_view(&person, &asked, Some(&c), None, &who).await;
    Ok(Html(OneApproval { a }.render()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(seq: i64, turn: i64, body: Value) -> StoredMessage {
        StoredMessage { seq, turn, body, at: Default::default() }
    }

    fn item(entity: EntityKind, label: &str) -> ArchivedItem {
        ArchivedItem { entity, id: format!("id-{label}"), label: label.into() }
    }

    #[test]
    fn a_conversation_reads_as_it_was_shown() {
        let pending = PendingCall {
            tool_call_id: "d".into(),
            tool: "deletePage".into(),
            arguments: json!({ "ids": ["p1"] }),
            approval_id: "cf_1".into(),
            message: "Would archive 1 page(s): contact.".into(),
            items: json!([]),
            expires_at: None,
        };
        let messages = [
            stored(1, 1, json!({ "role": "user", "content": "archive contact" })),
            stored(
                2,
                1,
                json!({ "role": "assistant", "content": "", "toolCalls": [
                { "id": "s", "name": "searchTools", "arguments": "{\"query\":\"delete\"}" },
                { "id": "c", "name": "createSection", "arguments": "{\"pageId\":\"nope\"}" },
                { "id": "d", "name": "deletePage", "arguments": "{\"ids\":[\"p1\"]}" }] }),
            ),
            stored(
                3,
                1,
                json!({ "role": "tool", "toolCallId": "s", "name": "searchTools", "content": "{\"success\":true}" }),
            ),
            stored(
                4,
                1,
                json!({ "role": "tool", "toolCallId": "c", "name": "createSection", "isError": true,
                "content": "{\"success\":false,\"error\":\"page nope not found\"}" }),
            ),
            stored(5, 1, Record::Approval(Box::new(pending.clone())).to_json()),
            stored(
                6,
                1,
                json!({ "role": "tool", "toolCallId": "d", "name": "deletePage",
                "content": "{\"success\":true,\"message\":\"Archived 1 page(s).\"}" }),
            ),
            stored(
                7,
                1,
                json!({ "role": "assistant", "content": "Archived.", "toolCalls": [
                { "id": "f", "name": "finalAnswer", "arguments": "{\"message\":\"Archived.\"}" }] }),
            ),
            stored(
                8,
                1,
                json!({ "role": "tool", "toolCallId": "f", "name": "finalAnswer", "content": "{\"success\":true}" }),
            ),
            stored(9, 2, json!({ "role": "user", "content": "and now?" })),
            stored(
                10,
                2,
                Record::Failure { message: "the model is unreachable".into(), code: "PROVIDER".into() }.to_json(),
            ),
            stored(11, 2, Record::Undo { turn: 1, by: "user:u".into(), reverted: 2, cancelled: 0 }.to_json()),
            // A paused turn undone: its waiting call's result comes after the undo.
            stored(12, 3, json!({ "role": "user", "content": "archive it" })),
            stored(
                13,
                3,
                json!({ "role": "assistant", "content": "", "toolCalls": [
                { "id": "e", "name": "deletePage", "arguments": "{}" }] }),
            ),
            stored(14, 3, Record::Undo { turn: 3, by: "user:u".into(), reverted: 0, cancelled: 1 }.to_json()),
            stored(
                15,
                3,
                json!({ "role": "tool", "toolCallId": "e", "name": "deletePage", "isError": true,
                "content": "{\"success\":false,\"error\":\"the turn was undone\"}" }),
            ),
        ];
        let steps = steps(&messages, None);
        let kinds: Vec<String> = steps
            .iter()
            .map(|s| match s {
                Step::User(t) => format!("user {t}"),
                Step::Said(t) => format!("said {t}"),
                Step::Call(c) => format!("call {} {}", c.name, c.failed.as_deref().unwrap_or("ok")),
                Step::Approval(p) => format!("approval {}", p.approval_id),
                Step::Undo { turn, reverted } => format!("undo {turn} {reverted}"),
                Step::Failure(why) => format!("failure {why}"),
                Step::TurnEnd(t) => format!("end {t}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "user archive contact",
                "call searchTools ok",
                "call createSection page nope not found",
                "call deletePage ok",
                "approval cf_1",
                "said Archived.",
                "end 1",
                "user and now?",
                "failure the model is unreachable",
                "end 2",
                "undo 1 2",
                "user archive it",
                "call deletePage the turn was undone",
                "end 3",
                "undo 3 0",
            ],
            "each answer once, the failed call marked with its error, the approval where it was asked"
        );
        let Step::Call(deleted) = &steps[3] else { panic!("{:?}", steps[3]) };
        assert_eq!(deleted.said.as_deref(), Some("Archived 1 page(s)."));
        assert!(deleted.result.as_deref().unwrap().contains("\n"), "results are indented to read");
        // A turn still running has no end yet: its stream goes on.
        assert_eq!(super::steps(&messages[..8], Some(1)).last(), Some(&Step::Said("Archived.".into())));
    }

    #[test]
    fn approvals_ask_in_the_persons_words() {
        let page = [item(EntityKind::Page, "Contact"), item(EntityKind::Section, "Text on Contact")];
        let (q, then) = question("deletePage", &json!({ "ids": ["id-Contact"] }), &page, None);
        assert_eq!(q, "Archive the page Contact and its 1 section?");
        assert!(then.contains("the Archive can bring it all back"), "{then}");
        let two = [item(EntityKind::Page, "A"), item(EntityKind::Section, "Hero on A"), item(EntityKind::Page, "B")];
        let (q, _) = question("deletePage", &json!({ "ids": ["id-A", "id-B"] }), &two, None);
        assert_eq!(q, "Archive 2 pages (“A” and “B”) and 1 record(s) that go with them?");
        let (q, _) = question("restoreArchive", &json!({ "ids": ["ar"] }), &page, None);
        assert_eq!(q, "Restore the page Contact and its 1 section?");
        let (q, _) = question("publishContent", &json!({ "ids": ["id-Contact"] }), &page[..1], None);
        assert_eq!(q, "Publish the page Contact?");
        let (q, _) = question("unpublishContent", &json!({}), &page[..1], None);
        assert_eq!(q, "Take the page Contact off the site?");
        let (q, _) = question("publishRelease", &json!({ "id": "r" }), &[], Some("Autumn"));
        assert_eq!(q, "Publish the release “Autumn”?");
        let (q, then) = question("httpPost", &json!({ "url": "https://example.com/hook" }), &[], None);
        assert_eq!(q, "Send a POST request to https://example.com/hook?");
        assert!(then.contains("cannot be taken back"));
        for tool in ["deletePage", "restoreArchive", "publishContent", "httpPost", "somethingNew"] {
            let (q, then) = question(tool, &json!({}), &page, None);
            for said in [q, then.to_string()] {
                assert!(!said.contains("confirmationId") && !said.contains("call again"), "{said}");
            }
        }
    }
}
