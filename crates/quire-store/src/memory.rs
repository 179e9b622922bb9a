//! What agents keep between turns and sessions: contexts (named texts such
//! as a brand voice, read while in use) and workspaces (what a session was
//! working on, saved for a later one). Both are records as `records.rs`
//! describes them, so every change is logged, undone, archived and restored
//! by the generic machinery; this module adds their reads and the upsert a
//! workspace is saved with.

use crate::db;
use crate::log::new_id;
use crate::record::{Record, by_key, create, find, live_records, load_live, with_record, write_version};
use crate::{Result, Scope, Store, StoreError};
use chrono::Utc;
use quire_core::input::{ContextPatch, NewContext, WorkspaceInput};
use quire_core::model::{ChangeAction, ChangeContext, Context, Workspace, WorkspaceRecord};

/// Refuses `current` when the caller expected another version.
fn at_version<T: Record>(current: &T, version: i64, expected: Option<i64>) -> Result<()> {
    match expected {
        Some(v) if v != version => Err(StoreError::conflict(
            Some("version"),
            format!("{} {} is at version {version}, not {v}; read it again", T::ENTITY.noun, current.label()),
        )),
        _ => Ok(()),
    }
}

impl Store {
    /// Creates a context.
    pub async fn create_context(&self, ctx: &ChangeContext, scope: &Scope, input: NewContext) -> Result<Context> {
        let now = Utc::now();
        let context = Context {
            id: new_id(),
            key: input.key,
            name: input.name,
            description: input.description.unwrap_or_default(),
            body: input.body,
            version: 1,
            created_at: now,
            updated_at: now,
        };
        self.create_record(ctx, scope, context).await
    }

    /// The live contexts of a scope, by key.
    pub async fn contexts(&self, scope: &Scope) -> Result<Vec<Context>> {
        let scope = scope.clone();
        let mut all = self.db.read(move |c| live_records::<Context>(c, &scope)).await?;
        all.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(all)
    }

    /// A live context by id or key.
    pub async fn context(&self, scope: &Scope, id_or_key: &str) -> Result<Context> {
        self.find_record(scope, id_or_key).await
    }

    /// The live contexts of `keys`, in their order, each once; a key no
    /// live context has (one archived since it was chosen) is left out.
    pub async fn contexts_by_keys(&self, scope: &Scope, keys: &[String]) -> Result<Vec<Context>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let (scope, keys) = (scope.clone(), keys.to_vec());
        self.db
            .read(move |c| {
                let mut out: Vec<Context> = Vec::new();
                for key in &keys {
                    if let Some(found) = by_key::<Context>(c, &scope, key)?
                        && !out.iter().any(|o| o.id == found.id)
                    {
                        out.push(found);
                    }
                }
                Ok(out)
            })
            .await
    }

    /// Changes a context found by id or key; `expected_version` guards
    /// against lost updates.
    pub async fn update_context(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id_or_key: &str,
        patch: ContextPatch,
        expected_version: Option<i64>,
    ) -> Result<Context> {
        let (ctx, scope, id_or_key) = (ctx.clone(), scope.clone(), id_or_key.to_string());
        self.db
            .write(move |c| {
                let before = find::<Context>(c, &scope, &id_or_key)?;
                at_version(&before, before.version, expected_version)?;
                let mut after = before.clone();
                patch.apply_to(&mut after);
                if after != before {
                    write_version(c, &scope, &ctx, &before, &mut after, ChangeAction::Update)?;
                }
                Ok(after)
            })
            .await
    }

    /// Saves a workspace by name: a new one, or the next version of the
    /// live one of that name (values left out stay). Answers it and whether
    /// it was created.
    pub async fn save_workspace(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        input: WorkspaceInput,
        expected_version: Option<i64>,
    ) -> Result<(Workspace, bool)> {
        let (ctx, scope) = (ctx.clone(), scope.clone());
        self.db
            .write(move |c| {
                let name = input.name.trim().to_string();
                let saved = |w: &mut Workspace| {
                    input.apply_to(w);
                    w.saved_by = ctx.actor.clone();
                    w.session_id = ctx.session_id.clone();
                };
                if let Some(before) = by_key::<Workspace>(c, &scope, &name)? {
                    at_version(&before, before.version, expected_version)?;
                    let mut after = before.clone();
                    saved(&mut after);
                    if after != before {
                        write_version(c, &scope, &ctx, &before, &mut after, ChangeAction::Update)?;
                    }
                    return Ok((after, false));
                }
                if let Some(v) = expected_version {
                    return Err(StoreError::conflict(
                        Some("version"),
                        format!(
                            "no workspace is named \"{name}\" to be at version {v}; leave version out to create it"
                        ),
                    ));
                }
                let now = Utc::now();
                let mut workspace = Workspace {
                    id: new_id(),
                    name,
                    goal: String::new(),
                    summary: String::new(),
                    records: Vec::new(),
                    notes: Vec::new(),
                    session_id: None,
                    saved_by: String::new(),
                    version: 1,
                    created_at: now,
                    updated_at: now,
                };
                saved(&mut workspace);
                create(c, &ctx, &scope, &workspace)?;
                Ok((workspace, true))
            })
            .await
    }

    /// The live workspaces of a scope, the latest saved first.
    pub async fn workspaces(&self, scope: &Scope, limit: i64) -> Result<Vec<Workspace>> {
        let rows = db::query(
            "SELECT * FROM workspaces WHERE site_id = ?1 AND env = ?2 AND archive_id IS NULL
             ORDER BY updated_at DESC, id LIMIT ?3",
        )
        .bind_scope(scope)
        .bind(limit)
        .read_all(&self.db)
        .await?;
        rows.iter().map(Workspace::from_row).collect()
    }

    /// A live workspace by id or name.
    pub async fn workspace(&self, scope: &Scope, id_or_name: &str) -> Result<Workspace> {
        self.find_record(scope, id_or_name).await
    }

    /// The label (slug, key, title) of each of `records` that is live, in
    /// their order; none for one archived or never there.
    pub async fn live_labels(&self, scope: &Scope, records: &[WorkspaceRecord]) -> Result<Vec<Option<String>>> {
        let (scope, records) = (scope.clone(), records.to_vec());
        self.db
            .read(move |c| {
                let mut out = Vec::with_capacity(records.len());
                for r in &records {
                    let label =
                        with_record!(r.kind, |T| load_live::<T>(c, &scope, &r.id)?.map(|t| t.label()), else None);
                    out.push(label);
                }
                Ok(out)
            })
            .await
    }
}
