//! The registry: the list of tools, who may use which, the one `call` every
//! surface goes through, which calls wait for a person (destructive ones,
//! and what the person's approval preferences ask for), the approval API,
//! and the tools each session has activated.

use crate::services::Services;
use crate::tool::*;
use chrono::{Duration, Utc};
use quire_core::access::{Permission, Principal, authorize};
use quire_core::model::{ApprovalMode, ApprovalPreferences, EntityKind, Surface};
use quire_store::{Confirmation, ConfirmationStatus, NewConfirmation, Scope, StoreError};
use serde::Serialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;

/// How long a preview's confirmationId stays usable.
pub const CONFIRMATION_TTL_MINUTES: i64 = 10;

/// The tool registry. Built once; cheap to share behind an `Arc`.
pub struct Registry {
    tools: Vec<Tool>,
    index: HashMap<&'static str, usize>,
    services: Services,
    sessions: Mutex<HashMap<String, Vec<&'static str>>>,
    confirmation_ttl: Duration,
    search: crate::search::SearchIndex,
    /// Every tool's full input schema, generated once (same order as `tools`).
    schemas: Vec<Value>,
    /// Every tool's output schema, generated once (same order as `tools`).
    outputs: Vec<Value>,
}

/// A tool as listed to clients: its definition without the code (see
/// [`Tool`]'s serialisation), and the input schema they send.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo<'a> {
    /// The definition.
    #[serde(flatten)]
    pub tool: &'a Tool,
    /// JSON Schema of the arguments, as [`full_schema`].
    pub input_schema: Value,
}

/// How a destructive call is let through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// The confirmation a person approved, by its id.
    Confirmation(String),
    /// The conversational go-ahead (`confirmed: true`): counts only for the
    /// caller's own preview in the same session, once a person approved it.
    Confirmed,
}

/// What a call did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The tool ran: its answer.
    Done(Value),
    /// A destructive call previewed: nothing changed; it waits for an approval.
    NeedsApproval(PendingApproval),
}

impl Outcome {
    /// The JSON a surface answers.
    pub fn into_json(self) -> Value {
        match self {
            Outcome::Done(v) => v,
            Outcome::NeedsApproval(p) => p.to_json(),
        }
    }
}

/// A destructive call's preview, waiting for an approval.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingApproval {
    /// The confirmationId to approve.
    pub confirmation_id: String,
    /// What would change, in the preview's own sentence.
    pub message: String,
    /// How it gets approved under the caller's policy (words for the caller).
    pub how: String,
    /// What would change, record by record.
    pub items: Value,
    /// When it lapses.
    pub expires_at: chrono::DateTime<Utc>,
}

impl PendingApproval {
    /// The preview as the JSON surfaces answer it.
    pub fn to_json(&self) -> Value {
        json!({
            "success": true,
            "requiresConfirmation": true,
            "confirmationId": self.confirmation_id,
            "message": format!("{} Nothing has changed yet. {}", self.message, self.how),
            "items": self.items,
            "expiresAt": self.expires_at,
        })
    }
}

/// Fields every destructive tool accepts besides its own arguments.
struct ConfirmationFields {
    confirmation_id: Option<String>,
    confirmed: Option<bool>,
}

/// Takes the approval a JSON caller put in the arguments (`confirmationId`,
/// `confirmed: true`) out of them.
pub fn approval_in(args: Value) -> Result<(Value, Option<Approval>), ToolError> {
    let Value::Object(mut map) = args else { return Ok((args, None)) };
    let id = match map.remove("confirmationId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => {
            return Err(ToolError::invalid("confirmationId: expected a string", "Pass the id from the preview."));
        }
    };
    let confirmed = match map.remove("confirmed") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(ToolError::invalid("confirmed: expected true or false", "Pass confirmed: true.")),
    };
    let approval = match (id, confirmed) {
        (Some(id), _) => Some(Approval::Confirmation(id)),
        (None, true) => Some(Approval::Confirmed),
        (None, false) => None,
    };
    Ok((Value::Object(map), approval))
}

impl Registry {
    /// The registry of every tool in [`crate::catalog()`].
    pub fn new(services: Services) -> Self {
        Self::with_tools(services, crate::catalog())
    }

    /// A registry over an explicit list (tests).
    pub fn with_tools(services: Services, tools: Vec<Tool>) -> Self {
        let index = tools.iter().enumerate().map(|(i, t)| (t.name, i)).collect();
        Self {
            search: crate::search::SearchIndex::new(&tools),
            schemas: tools.iter().map(full_schema).collect(),
            outputs: tools.iter().map(crate::output::output_schema).collect(),
            tools,
            index,
            services,
            sessions: Mutex::new(HashMap::new()),
            confirmation_ttl: Duration::minutes(CONFIRMATION_TTL_MINUTES),
        }
    }

    /// Sets how long confirmations live (tests of expiry).
    pub fn with_confirmation_ttl(mut self, ttl: Duration) -> Self {
        self.confirmation_ttl = ttl;
        self
    }

    /// The services tools run against.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// Every tool, in catalog order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Tools ranked for a capability query, best first.
    pub fn search(&self, query: &str) -> Vec<&Tool> {
        self.search.rank(&self.tools, query)
    }

    /// A tool's full input schema (as [`full_schema`]), generated once.
    pub fn schema(&self, name: &str) -> Option<&Value> {
        self.index.get(name).map(|&i| &self.schemas[i])
    }

    /// What a tool answers, as JSON Schema ([`crate::output::output_schema`]), generated once.
    pub fn output_schema(&self, name: &str) -> Option<&Value> {
        self.index.get(name).map(|&i| &self.outputs[i])
    }

    /// A tool by name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// The listing of a tool.
    pub fn info<'a>(&self, tool: &'a Tool) -> ToolInfo<'a> {
        ToolInfo { tool, input_schema: self.schema(tool.name).cloned().unwrap_or_else(|| full_schema(tool)) }
    }

    /// The tools `who` may use, in catalog order.
    pub fn permitted<'a>(&'a self, who: &'a Principal<'a>) -> impl Iterator<Item = &'a Tool> + 'a {
        self.tools.iter().filter(move |t| authorize(who, Permission::UseTool(t.access())).is_ok())
    }

    /// Runs a tool for a caller and answers its JSON: the result, a preview
    /// asking for confirmation, or `{ success: false, error, errorCode, hint }`.
    /// Never panics and never returns a transport error: every failure is a
    /// result the caller can read. The JSON surfaces' way in: an approval
    /// rides in the arguments (`confirmationId`, `confirmed`) and is taken
    /// out of them here; [`Registry::run`] is the typed call.
    pub async fn call(&self, ctx: &CallContext, name: &str, args: Value) -> Value {
        let answer = match approval_in(args) {
            Ok((args, approval)) => self.run(ctx, name, args, approval.as_ref()).await,
            Err(e) => Err(e),
        };
        match answer {
            Ok(outcome) => outcome.into_json(),
            Err(e) => e.to_json(),
        }
    }

    /// Runs a tool for a caller: what it did, or the preview of a
    /// destructive call that waits for `approval` (none: a preview is made).
    /// The approval is a parameter, never a key inside the tool's arguments.
    pub async fn run(
        &self,
        ctx: &CallContext,
        name: &str,
        args: Value,
        approval: Option<&Approval>,
    ) -> Result<Outcome, ToolError> {
        let Some(tool) = self.get(name) else {
            return Err(ToolError::new(
                ErrorCode::NotFound,
                format!("no tool named \"{name}\""),
                "Use searchTools to find the right tool name.",
            ));
        };
        if let Err(refused) = authorize(&ctx.principal(), Permission::UseTool(tool.access())) {
            return Err(ToolError::new(
                ErrorCode::Forbidden,
                refused.message,
                "Ask a user with more rights, or choose a read-only tool.",
            ));
        }
        // An agent that stages may not publish, nor change the media library,
        // which the public site serves at once.
        if ctx.staging.is_some()
            && !tool.read_only
            && matches!(
                tool.entity,
                crate::Subject::Document | crate::Subject::Release | crate::Subject::Record(EntityKind::Image)
            )
        {
            return Err(ToolError::new(
                ErrorCode::Forbidden,
                format!("{} is not for an agent that stages its work in a release", tool.name),
                "Finish the turn: a person reviews the release, publishes it, and changes images.",
            ));
        }
        if !self.asks_person(ctx, tool).await? {
            let call = Call::new(&self.services, ctx, self, None, tool);
            return (tool.execute)(&call, args).await.map(Outcome::Done);
        }
        let args = if args.is_null() { Value::Object(Map::new()) } else { args };
        if !args.is_object() {
            return Err(ToolError::invalid("arguments must be a JSON object", "Pass the parameters as an object."));
        }
        self.call_approved(ctx, tool, args, approval).await
    }

    /// Whether a call of `tool` by `ctx`'s caller waits for a person: the
    /// one place every surface's calls are decided. The floor first: a
    /// destructive call (an outgoing send among them) always asks. Above
    /// it, the approval preferences of the person the caller acts for (a
    /// signed-in person, the person who made the token, the person chatting
    /// with an agent) may ask for any other tool too (`always`); a caller
    /// without a person (the local admin, a token made by no one) has none.
    /// The conversation's own tools (searchTools, acknowledgeRequest,
    /// finalAnswer) never ask.
    pub async fn asks_person(&self, ctx: &CallContext, tool: &Tool) -> Result<bool, ToolError> {
        if tool.destructive {
            return Ok(true);
        }
        if tool.category == Category::Default {
            return Ok(false);
        }
        let Some(preferences) = self.services.store.actor_approval_preferences(&ctx.actor, &ctx.scope.site_id).await?
        else {
            return Ok(false);
        };
        Ok(preference_of(&preferences, tool) == ApprovalMode::Always)
    }

    async fn call_approved(
        &self,
        ctx: &CallContext,
        tool: &Tool,
        args: Value,
        approval: Option<&Approval>,
    ) -> Result<Outcome, ToolError> {
        let fields = ConfirmationFields {
            confirmation_id: match approval {
                Some(Approval::Confirmation(id)) => Some(id.clone()),
                _ => None,
            },
            confirmed: matches!(approval, Some(Approval::Confirmed)).then_some(true),
        };
        let hash = args_hash(tool.name, &args);
        let call = Call::new(&self.services, ctx, self, None, tool);
        let store = &self.services.store;
        // What cannot be taken back waits for a person whatever the policy;
        // so does a call the person asked to approve themselves (its tool
        // offers no `confirmed`).
        let policy = if tool.sends_out() || !tool.destructive { ApprovalPolicy::User } else { ctx.policy };
        let approved: Confirmation = match (&fields.confirmation_id, fields.confirmed) {
            (None, None | Some(false)) => {
                let preview = match tool.preview {
                    Some(preview_fn) if tool.destructive => preview_fn(&call, args.clone()).await?,
                    _ if tool.destructive => {
                        return Err(ToolError::new(ErrorCode::Internal, "destructive tool without preview", ""));
                    }
                    _ => generic_preview(tool, &args),
                };
                let confirmation = store
                    .create_confirmation(
                        &ctx.scope,
                        NewConfirmation {
                            tool: tool.name.to_string(),
                            args: args.clone(),
                            args_hash: hash,
                            fingerprint: preview.fingerprint,
                            preview: json!({ "message": preview.message, "items": preview.items }),
                            requested_by: ctx.actor.clone(),
                            requested_via: ctx.surface,
                            session_id: ctx.session_id.clone(),
                            turn_id: ctx.turn_id.clone(),
                            expires_at: Utc::now() + self.confirmation_ttl,
                        },
                    )
                    .await?;
                let how = match policy {
                    ApprovalPolicy::User => "A person must approve it; then call again with this confirmationId.",
                    ApprovalPolicy::Conversational => {
                        "Show this preview to the user and end your turn. Once they approve it (a plain yes in their next message, or the Approve button), call again with the same arguments and confirmed: true."
                    }
                };
                return Ok(Outcome::NeedsApproval(PendingApproval {
                    confirmation_id: confirmation.id,
                    message: preview.message,
                    how: how.to_string(),
                    items: preview.items,
                    expires_at: confirmation.expires_at,
                }));
            }
            (Some(id), _) => {
                let confirmation = match store.confirmation(&ctx.scope, id).await {
                    Ok(c) => c,
                    Err(StoreError::NotFound { .. }) => {
                        return Err(approval_required(format!("confirmationId {id} is unknown")));
                    }
                    Err(e) => return Err(e.into()),
                };
                if let Err(why) = same_caller(&confirmation, ctx) {
                    return Err(approval_required(format!("confirmationId {id} {why}")));
                }
                if confirmation.tool != tool.name || confirmation.args_hash != hash {
                    return Err(approval_required(format!(
                        "confirmationId {id} was issued for other arguments; the approval covers exactly the previewed call"
                    )));
                }
                if confirmation.expires_at <= Utc::now() {
                    return Err(approval_required(format!("confirmationId {id} has expired")));
                }
                match confirmation.status {
                    ConfirmationStatus::Approved => {}
                    ConfirmationStatus::Pending => {
                        return Err(approval_required(format!(
                            "confirmationId {id} is waiting for a person's approval"
                        )));
                    }
                    ConfirmationStatus::Rejected => {
                        return Err(ToolError::new(
                            ErrorCode::ApprovalRequired,
                            format!(
                                "the request was rejected{}",
                                confirmation.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default()
                            ),
                            "Do not retry the same call; tell the user and ask what they want instead.",
                        ));
                    }
                    ConfirmationStatus::Used => {
                        return Err(approval_required(format!("confirmationId {id} was already used")));
                    }
                }
                if !store.consume_confirmation(&ctx.scope, id, true).await? {
                    return Err(approval_required(format!("confirmationId {id} was already used")));
                }
                confirmation
            }
            (None, Some(true)) => {
                // An MCP client is a program holding its token: what it asks
                // for, a person with other credentials approves, whatever
                // the token's policy says.
                let session = match (policy, &ctx.session_id, ctx.surface) {
                    (ApprovalPolicy::Conversational, Some(session), surface) if surface != Surface::Mcp => session,
                    (ApprovalPolicy::User, _, _) if tool.sends_out() => {
                        return Err(approval_required(format!(
                            "confirmed: true is not accepted for {}: it sends data out, which nothing can undo, so a person approves the previewed request",
                            tool.name
                        )));
                    }
                    _ => {
                        return Err(approval_required(
                            "confirmed: true is not accepted for this caller; destructive calls need a person's approval",
                        ));
                    }
                };
                let Some(confirmation) =
                    store.session_confirmation(&ctx.scope, session, &ctx.actor, ctx.surface, tool.name, &hash).await?
                else {
                    return Err(approval_required("no preview of this exact call by this caller in this session"));
                };
                if confirmation.expires_at <= Utc::now() {
                    return Err(approval_required("the preview has expired"));
                }
                // The model may not confirm its own preview, nor read
                // consent into what the user said: only a person's answer
                // approves it (the Approve button, a structured answer in
                // the chat request, or a message the runtime itself reads
                // as a plain yes to this preview).
                if ctx.surface == Surface::Agent && confirmation.status != ConfirmationStatus::Approved {
                    return Err(ToolError::new(
                        ErrorCode::ApprovalRequired,
                        "confirmed: true is accepted only once the user approved this preview; nothing changed",
                        "Show the preview to the user, ask whether to go ahead, and end your turn. Call again with confirmed: true only after they answer yes.",
                    ));
                }
                if !store.consume_confirmation(&ctx.scope, &confirmation.id, false).await? {
                    return Err(approval_required("the preview was already used"));
                }
                confirmation
            }
        };
        let fingerprint = tool.destructive.then_some(&approved.fingerprint);
        let call = Call::new(&self.services, ctx, self, fingerprint, tool);
        (tool.execute)(&call, args).await.map(Outcome::Done)
    }

    /// Approves a pending confirmation. Only a person can: `approver` must be
    /// a caller outside the agent whose group may use the tool.
    pub async fn approve(&self, approver: &CallContext, confirmation_id: &str) -> Result<Confirmation, ToolError> {
        self.resolve(approver, confirmation_id, true, None).await
    }

    /// Rejects a pending confirmation with a reason the model will read.
    pub async fn reject(
        &self,
        approver: &CallContext,
        confirmation_id: &str,
        reason: Option<&str>,
    ) -> Result<Confirmation, ToolError> {
        self.resolve(approver, confirmation_id, false, reason).await
    }

    async fn resolve(
        &self,
        approver: &CallContext,
        id: &str,
        approve: bool,
        reason: Option<&str>,
    ) -> Result<Confirmation, ToolError> {
        let confirmation = self.services.store.confirmation(&approver.scope, id).await?;
        let tool =
            self.get(&confirmation.tool).ok_or_else(|| ToolError::new(ErrorCode::NotFound, "unknown tool", ""))?;
        // The agent that asked, if one did, is the use case's to check
        // (quire-app): the registry knows no agents.
        if let Err(refused) =
            authorize(&approver.principal(), Permission::AnswerApproval { tool: tool.access(), agent: None })
        {
            return Err(ToolError::new(
                ErrorCode::Forbidden,
                refused.message,
                "A person of a group that may use the tool approves in the back-office, over REST or with `quire approvals`.",
            ));
        }
        // What an MCP client asked for, other credentials must approve: the
        // client holds its token and could otherwise approve itself. The
        // agent runtime holds none the model could use, so the person
        // chatting approves their agent's requests (through REST or the CLI).
        if confirmation.requested_via == Surface::Mcp && confirmation.requested_by == approver.actor {
            return Err(ToolError::new(
                ErrorCode::Forbidden,
                "a request made through MCP cannot be approved with the same credentials",
                "Approve as a person, with your own token or the local CLI.",
            ));
        }
        Ok(self.services.store.resolve_confirmation(&approver.scope, id, approve, &approver.actor, reason).await?)
    }

    /// Resolves a confirmation with the answer the person at an MCP client
    /// gave when the client asked them (elicitation): the caller's own
    /// request, through the MCP surface, answered in the client's UI. Only
    /// for clients declared interactive at connection (policy
    /// conversational), and never for a call that sends data out.
    pub async fn resolve_in_client(
        &self,
        ctx: &CallContext,
        id: &str,
        approve: bool,
    ) -> Result<Confirmation, ToolError> {
        if ctx.surface != Surface::Mcp || ctx.policy != ApprovalPolicy::Conversational {
            return Err(ToolError::new(
                ErrorCode::Forbidden,
                "only an MCP client declared interactive asks its user",
                "Approve through Quire.",
            ));
        }
        let confirmation = self.services.store.confirmation(&ctx.scope, id).await?;
        let tool =
            self.get(&confirmation.tool).ok_or_else(|| ToolError::new(ErrorCode::NotFound, "unknown tool", ""))?;
        if tool.sends_out() {
            return Err(ToolError::new(
                ErrorCode::Forbidden,
                format!("{} sends data out; a person approves it in Quire", tool.name),
                "Approve through Quire.",
            ));
        }
        if confirmation.requested_by != ctx.actor || !permits(ctx, tool) {
            return Err(ToolError::new(ErrorCode::Forbidden, "not this caller's request", "Approve through Quire."));
        }
        let by = format!("{} (asked in the MCP client)", ctx.actor);
        let reason = (!approve).then_some("declined by the user in the MCP client");
        Ok(self.services.store.resolve_confirmation(&ctx.scope, id, approve, &by, reason).await?)
    }

    /// Pending confirmations of a scope.
    pub async fn pending(&self, scope: &Scope) -> Result<Vec<Confirmation>, ToolError> {
        Ok(self.services.store.pending_confirmations(scope).await?)
    }

    /// Marks tools active for a session (searchTools calls this).
    pub fn activate(&self, session: &str, names: &[&'static str]) {
        if let Ok(mut sessions) = self.sessions.lock() {
            if sessions.len() > 10_000 && !sessions.contains_key(session) {
                sessions.clear(); // long-idle sessions re-activate by searching again
            }
            let active = sessions.entry(session.to_string()).or_default();
            for name in names {
                if !active.contains(name) {
                    active.push(name);
                }
            }
        }
    }

    /// Forgets what a session activated (its owner keeps the list, as the
    /// agent runtime does in the session, and restores it next time).
    pub fn forget(&self, session: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.remove(session);
        }
    }

    /// The tools a session has activated, in activation order.
    pub fn activated(&self, session: &str) -> Vec<&'static str> {
        self.sessions.lock().map(|s| s.get(session).cloned().unwrap_or_default()).unwrap_or_default()
    }
}

impl ToolSearch for Registry {
    fn tools(&self) -> &[Tool] {
        Registry::tools(self)
    }

    fn search(&self, query: &str) -> Vec<&Tool> {
        Registry::search(self, query)
    }

    fn activate(&self, session: &str, names: &[&'static str]) {
        Registry::activate(self, session, names)
    }
}

/// Whether `ctx` is the caller a confirmation was made for: the same actor,
/// through the same surface, and for agents in the same session. An
/// approval is for one requester's call, not for whoever learns its id.
fn same_caller(confirmation: &Confirmation, ctx: &CallContext) -> Result<(), &'static str> {
    if confirmation.requested_by != ctx.actor {
        return Err("was requested by another caller; only the requester can use it");
    }
    if confirmation.requested_via != ctx.surface {
        return Err("was requested through another surface; use it where it was requested");
    }
    if ctx.surface == Surface::Agent && confirmation.session_id != ctx.session_id {
        return Err("belongs to another session");
    }
    Ok(())
}

fn approval_required(message: impl Into<String>) -> ToolError {
    ToolError::new(
        ErrorCode::ApprovalRequired,
        message,
        "Call without confirmationId or confirmed to get a fresh preview, then wait for approval.",
    )
}

/// The mode `preferences` give `tool`: its own entry, else what it works
/// on (`page`), else where it reaches (`internal`, `external`), else the
/// default.
pub fn preference_of(preferences: &ApprovalPreferences, tool: &Tool) -> ApprovalMode {
    preferences.mode(tool.name, &[tool.entity.as_str(), tool.category.as_str()])
}

/// The categories approval preferences may name, in the catalog's order:
/// what the tools that can ask work on (`page`, `post`, `webPage`, …), then
/// where they reach (`internal`, `external`). The conversation's own tools
/// never ask, so their categories are not among them.
pub fn preference_categories(tools: &[Tool]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    let asking = tools.iter().filter(|t| t.category != Category::Default);
    for name in asking.clone().map(|t| t.entity.as_str()).chain(asking.map(|t| t.category.as_str())) {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The preview of a call that waits only because the person asked to
/// approve such calls: the call in words, and the record it names, if one.
/// Nothing is read; the call runs as it was asked when approved.
fn generic_preview(tool: &Tool, args: &Value) -> Preview {
    let words: Vec<String> = args
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, value)| {
            let value = match value {
                Value::String(s) => format!("“{}”", shorten(s)),
                other => shorten(&other.to_string()),
            };
            format!("{key} {value}")
        })
        .collect();
    let with = if words.is_empty() { String::new() } else { format!(" with {}", words.join(", ")) };
    let items: Vec<Value> = match (tool.entity.record(), args.get("id").and_then(Value::as_str)) {
        (Some(kind), Some(id)) => vec![json!({ "entity": kind.as_str(), "id": id, "label": id })],
        _ => Vec::new(),
    };
    Preview {
        message: format!("{}{with} waits for your approval, as your approval preferences ask.", tool.name),
        items: Value::Array(items),
        fingerprint: Vec::new(),
    }
}

/// At most 80 characters of `text`, with an ellipsis when cut.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Whether the caller of `ctx` may use `tool` (see
/// [`quire_core::access::authorize`]).
pub fn permits(ctx: &CallContext, tool: &Tool) -> bool {
    authorize(&ctx.principal(), Permission::UseTool(tool.access())).is_ok()
}

/// The schema clients see: the tool's own, plus `confirmationId` on
/// destructive tools and `confirmed` on those that send nothing out.
pub fn full_schema(tool: &Tool) -> Value {
    let mut schema = (tool.input_schema)();
    if tool.destructive
        && let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut)
    {
        props.insert(
            "confirmationId".into(),
            json!({"type": "string", "description": "Id from the preview, after a person approved it."}),
        );
        if !tool.sends_out() {
            props.insert(
                "confirmed".into(),
                json!({"type": "boolean", "description": "true once the user approved the preview (conversational policy only)."}),
            );
        }
    }
    schema
}

/// Canonical JSON (keys sorted) of the arguments, hashed with the tool name.
fn args_hash(tool: &str, args: &Value) -> String {
    fn canonical(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), canonical(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    hex::encode(Sha256::digest(format!("{tool}\n{}", canonical(args)).as_bytes()))
}
