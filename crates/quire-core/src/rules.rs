//! The rules each stored record's own values follow: text lengths and
//! characters, slugs and keys, tag counts, URLs, image types, field
//! definitions. Checked on the whole record before it is written, so a
//! create and an update are held to the same rules whatever surface sent
//! them. Rules that need other records (references, unique keys, content
//! against a template's fields) are the store's.

use crate::fields::{check_definitions, check_href, is_upload_url};
use crate::model::*;
use crate::slug::check_slug;
use crate::text::{check_line, check_text};
use crate::{FieldError, ValidationErrors};
use serde_json::Value;

/// A record whose values can be checked on their own.
pub trait ValueRules {
    /// Every broken rule, each naming its field; empty when all hold.
    fn value_errors(&self) -> Vec<FieldError>;

    /// The broken rules as one error, if any.
    fn check_values(&self) -> Result<(), ValidationErrors> {
        ValidationErrors::check(self.value_errors())
    }
}

/// Collects the errors of one record's fields.
#[derive(Default)]
struct Errors(Vec<FieldError>);

impl Errors {
    fn push(&mut self, checked: Result<(), FieldError>) -> &mut Self {
        self.0.extend(checked.err());
        self
    }
    fn line(&mut self, field: &str, value: &str, max: usize) -> &mut Self {
        self.push(check_line(field, value, max))
    }
    fn slug(&mut self, field: &str, value: &str) -> &mut Self {
        self.push(check_slug(field, value))
    }
    /// An optional one-line value; empty is allowed.
    fn opt_line(&mut self, field: &str, value: &Option<String>, max: usize) -> &mut Self {
        match value {
            Some(v) if !v.is_empty() => self.push(check_line(field, v, max)),
            _ => self,
        }
    }
    /// An optional text of several lines.
    fn opt_text(&mut self, field: &str, value: &Option<String>, max: usize) -> &mut Self {
        match value {
            Some(v) => self.push(check_text(field, v, max)),
            None => self,
        }
    }
    fn upload_url(&mut self, field: &str, value: &str) -> &mut Self {
        if !is_upload_url(value) {
            self.0.push(FieldError::new(field, format!("\"{value}\" is not a relative /uploads/... URL")));
        }
        self
    }
    fn error(&mut self, field: impl Into<String>, message: impl Into<String>) -> &mut Self {
        self.0.push(FieldError::new(field, message));
        self
    }
    fn done(&mut self) -> Vec<FieldError> {
        std::mem::take(&mut self.0)
    }
}

impl ValueRules for Page {
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.line("name", &self.name, 200).slug("slug", &self.slug);
        match &self.meta {
            Value::Object(map) => {
                for (key, max) in [("title", 120usize), ("description", 320)] {
                    match map.get(key) {
                        None | Some(Value::Null) => {}
                        // A title names the page in search results and tabs.
                        Some(Value::String(s)) if key == "title" && !s.is_empty() => {
                            e.line("meta.title", s, max);
                        }
                        Some(Value::String(s)) if s.chars().count() <= max => {}
                        Some(Value::String(_)) => {
                            e.error(format!("meta.{key}"), format!("at most {max} characters"));
                        }
                        Some(_) => {
                            e.error(format!("meta.{key}"), "must be text");
                        }
                    }
                }
            }
            _ => {
                e.error("meta", "must be an object");
            }
        }
        e.done()
    }
}

impl ValueRules for PageSection {
    /// A section's content is checked against its template's fields, which
    /// the store reads.
    fn value_errors(&self) -> Vec<FieldError> {
        Vec::new()
    }
}

impl ValueRules for SectionTemplate {
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.slug("key", &self.key).line("name", &self.name, 120);
        if self.description.chars().count() > 500 {
            e.error("description", "at most 500 characters");
        }
        if self.fields.is_empty() {
            e.error("fields", "at least one field");
        }
        e.0.extend(check_definitions("fields", &self.fields));
        e.done()
    }
}

impl ValueRules for Collection {
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.slug("slug", &self.slug).line("name", &self.name, 120);
        e.0.extend(check_definitions("fields", &self.fields));
        e.done()
    }
}

impl ValueRules for Entry {
    /// Content is checked against the collection's fields by the store.
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.slug("slug", &self.slug)
            .line("title", &self.title, 300)
            .opt_line("author", &self.author, 120)
            .opt_line("category", &self.category, 80)
            .opt_text("excerpt", &self.excerpt, 1000);
        if self.tags.len() > 30 {
            e.error("tags", "at most 30 tags");
        }
        for (i, tag) in self.tags.iter().enumerate() {
            e.line(&format!("tags.{i}"), tag, 60);
        }
        if let Some(url) = &self.featured_image {
            e.upload_url("featuredImage", url);
        }
        e.done()
    }
}

impl ValueRules for Image {
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.upload_url("url", &self.url).line("filename", &self.filename, 255).line("mime", &self.mime, 100);
        if !self.mime.starts_with("image/") {
            e.error("mime", format!("\"{}\" is not an image type", self.mime));
        }
        e.opt_line("alt", &self.alt, 300).opt_text("description", &self.description, 2000);
        for (i, tag) in self.tags.iter().enumerate() {
            e.line(&format!("tags.{i}"), tag, 60);
        }
        for (i, category) in self.categories.iter().enumerate() {
            e.line(&format!("categories.{i}"), category, 80);
        }
        for (field, value) in [("width", self.width), ("height", self.height), ("bytes", self.bytes)] {
            if value.is_some_and(|v| v < 0) {
                e.error(field, "must not be negative");
            }
        }
        match &self.attribution {
            None | Some(Value::Object(_)) => {}
            Some(_) => {
                e.error("attribution", "must be an object");
            }
        }
        // The credit's links reach whoever shows the image: each is a link
        // by the one rule of links.
        if let Some(Value::Object(credit)) = &self.attribution {
            for (key, value) in credit.iter().filter(|(key, _)| is_link_key(key)) {
                match value {
                    Value::Null => {}
                    Value::String(url) => {
                        e.push(check_href(&format!("attribution.{key}"), url));
                    }
                    _ => {
                        e.error(format!("attribution.{key}"), "must be a link or null");
                    }
                }
            }
        }
        e.done()
    }
}

/// Whether a key of an image's attribution names a link: `url`, `href`,
/// `link`, or a name ending in `Url` (`photographerUrl`, `photoUrl`).
pub fn is_link_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.ends_with("url") || key == "href" || key == "link"
}

impl ValueRules for Navigation {
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.slug("key", &self.key).line("name", &self.name, 120);
        if self.max_items.is_some_and(|m| !(1..=100).contains(&m)) {
            e.error("maxItems", "between 1 and 100");
        }
        e.done()
    }
}

impl ValueRules for NavItem {
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.line("label", &self.label, 80);
        match self.target_type {
            NavTargetType::Url => {
                match &self.url {
                    Some(url) => {
                        e.push(check_href("url", url));
                    }
                    None => {
                        e.error("url", "required when targetType is url");
                    }
                }
                if self.target_id.is_some() {
                    e.error("targetId", "must be empty when targetType is url");
                }
            }
            NavTargetType::Placeholder => {
                if self.target_id.is_some() || self.url.is_some() {
                    e.error("targetId", "a placeholder has neither targetId nor url");
                }
            }
            kind => {
                if self.url.is_some() {
                    e.error("url", format!("must be empty when targetType is {kind}"));
                }
                if self.target_id.is_none() {
                    e.error("targetId", format!("required when targetType is {kind}"));
                }
            }
        }
        e.done()
    }
}

impl ValueRules for Agent {
    /// Alias, name, profile, prompt length, groups and tool selectors.
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.slug("alias", &self.alias).line("name", &self.name, 120).line("profile", &self.profile, 80).push(check_text(
            "systemPrompt",
            &self.system_prompt,
            20_000,
        ));
        for (field, list) in [("tools", &self.tools), ("pinned", &self.pinned)] {
            for (i, t) in list.iter().enumerate() {
                let bad = t.trim().is_empty()
                    || t.strip_prefix("category:").or_else(|| t.strip_prefix("tag:")).is_some_and(|r| r.is_empty());
                if bad {
                    e.error(format!("{field}[{i}]"), "expected a tool name, category:<name> or tag:<name>");
                }
            }
        }
        for (i, key) in self.contexts.iter().enumerate() {
            e.slug(&format!("contexts[{i}]"), key);
        }
        if self.contexts.len() > MAX_AGENT_CONTEXTS {
            e.error("contexts", format!("at most {MAX_AGENT_CONTEXTS} contexts"));
        }
        e.done()
    }
}

/// The most contexts an agent carries: each costs tokens in every step.
pub const MAX_AGENT_CONTEXTS: usize = 5;

/// The longest context, in characters (about 2,000 tokens).
pub const MAX_CONTEXT_BODY: usize = 8_000;

impl ValueRules for Context {
    /// Key, name, a one-line description and a body of at most 8,000 characters.
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.slug("key", &self.key).line("name", &self.name, 120).push(check_text("body", &self.body, MAX_CONTEXT_BODY));
        if !self.description.is_empty() {
            e.line("description", &self.description, 300);
        }
        if self.body.trim().is_empty() {
            e.error("body", "must not be empty");
        }
        e.done()
    }
}

impl ValueRules for Workspace {
    /// Name, goal and summary lengths; at most 50 records and 50 notes.
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.line("name", &self.name, 120).push(check_text("goal", &self.goal, 2_000)).push(check_text(
            "summary",
            &self.summary,
            8_000,
        ));
        for (field, n) in [("records", self.records.len()), ("notes", self.notes.len())] {
            if n > 50 {
                e.error(field, "at most 50");
            }
        }
        for (i, r) in self.records.iter().enumerate() {
            if matches!(r.kind, EntityKind::Note | EntityKind::Workspace) {
                e.error(format!("records[{i}].kind"), format!("{} is not a record a workspace names", r.kind));
            }
            e.line(&format!("records[{i}].id"), &r.id, 100);
        }
        for (i, path) in self.notes.iter().enumerate() {
            e.line(&format!("notes[{i}]"), path, 500);
        }
        e.done()
    }
}

impl ValueRules for Translation {
    fn value_errors(&self) -> Vec<FieldError> {
        let mut e = Errors::default();
        e.push(crate::locale::check_tag("locale", &self.locale));
        if !crate::locale::TRANSLATED.contains(&self.record_kind) {
            e.error(
                "recordKind",
                format!("{} has no translations (pages, entries and navigations have)", self.record_kind),
            );
        }
        if let Some(slug) = &self.slug {
            e.slug("fields.slug", slug);
        }
        let Value::Object(fields) = &self.fields else {
            return e.error("fields", "must be an object").done();
        };
        for key in ["name", "title"] {
            match fields.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => {
                    e.line(&format!("fields.{key}"), s, 200);
                }
                Some(_) => {
                    e.error(format!("fields.{key}"), "must be text");
                }
            }
        }
        match fields.get("excerpt") {
            None | Some(Value::Null) | Some(Value::String(_)) => {}
            Some(_) => {
                e.error("fields.excerpt", "must be text");
            }
        }
        e.done()
    }
}
