//! The differences between two versions of a document — what is published
//! and the draft — record by record and field by field: what a publish's
//! preview shows, and what a discard would give up.
//!
//! A document is `{ "record": {..}, "parts": [{..}, ..] }`: its root record
//! (a page, an entry, a navigation) and its parts (a page's sections, a
//! navigation's items), each a record as the API shows it, with an `id`.
//! Versions and change times are left aside: they move on with every write.

use serde::Serialize;
use serde_json::{Map, Value};

/// Fields no difference is reported for.
const IGNORED: [&str; 3] = ["version", "updatedAt", "createdAt"];

/// How one record differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Change {
    /// Only in the newer version.
    Added,
    /// Only in the older version.
    Removed,
    /// In both, with fields that differ.
    Changed,
}

/// One field whose value differs (`content.heading`: a key of an object
/// field is named by its path).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldChange {
    /// The field's name, or its path in an object field.
    pub field: String,
    /// Its value in the older version (null: none).
    #[schema(value_type = Object)]
    pub before: Value,
    /// Its value in the newer version (null: none).
    #[schema(value_type = Object)]
    pub after: Value,
}

/// One record that differs between two versions of a document.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    /// The record's id.
    pub id: String,
    /// Whether it is a part (a section, a menu item) rather than the document's root.
    pub part: bool,
    /// Added, removed or changed.
    pub change: Change,
    /// The fields that changed (every field, for one added or removed).
    pub fields: Vec<FieldChange>,
}

/// The differences from `older` to `newer` (either may be none: never
/// published, or nothing left), root first, then parts by id.
pub fn differences(older: Option<&Value>, newer: Option<&Value>) -> Vec<Difference> {
    let mut out = Vec::new();
    let root = |d: Option<&Value>| d.and_then(|d| d.get("record")).filter(|r| r.is_object()).cloned();
    if let Some(d) = record(root(older), root(newer), false) {
        out.push(d);
    }
    let parts = |d: Option<&Value>| -> Vec<Value> {
        d.and_then(|d| d.get("parts")).and_then(Value::as_array).cloned().unwrap_or_default()
    };
    let (old, new) = (parts(older), parts(newer));
    let id = |v: &Value| v.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut ids: Vec<String> = old.iter().chain(new.iter()).map(id).collect();
    ids.sort();
    ids.dedup();
    for part in ids {
        let find = |list: &[Value]| list.iter().find(|v| id(v) == part).cloned();
        if let Some(d) = record(find(&old), find(&new), true) {
            out.push(d);
        }
    }
    out
}

/// How one record differs between its two versions, if it does.
fn record(older: Option<Value>, newer: Option<Value>, part: bool) -> Option<Difference> {
    let id = newer.as_ref().or(older.as_ref())?.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
    let empty = Map::new();
    let fields_of = |v: &Option<Value>| v.as_ref().and_then(Value::as_object).cloned().unwrap_or_default();
    let (old, new) = (fields_of(&older), fields_of(&newer));
    let change = match (&older, &newer) {
        (None, Some(_)) => Change::Added,
        (Some(_), None) => Change::Removed,
        _ => Change::Changed,
    };
    let mut fields = Vec::new();
    compare("", if older.is_some() { &old } else { &empty }, if newer.is_some() { &new } else { &empty }, &mut fields);
    (change != Change::Changed || !fields.is_empty()).then_some(Difference { id, part, change, fields })
}

/// The fields of `newer` and `older` (objects at `prefix`) whose values
/// differ, in key order; an object in both is compared key by key, one
/// level deep.
fn compare(prefix: &str, older: &Map<String, Value>, newer: &Map<String, Value>, out: &mut Vec<FieldChange>) {
    let mut keys: Vec<&String> = older.keys().chain(newer.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        if prefix.is_empty() && IGNORED.contains(&key.as_str()) {
            continue;
        }
        let (before, after) = (older.get(key).unwrap_or(&Value::Null), newer.get(key).unwrap_or(&Value::Null));
        if before == after {
            continue;
        }
        let field = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        match (before, after) {
            (Value::Object(b), Value::Object(a)) if prefix.is_empty() => compare(&field, b, a, out),
            _ => out.push(FieldChange { field, before: before.clone(), after: after.clone() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(name: &str, sections: Vec<Value>) -> Value {
        json!({ "record": { "id": "p", "name": name, "version": 3, "meta": { "title": "T" } }, "parts": sections })
    }

    #[test]
    fn a_draft_against_what_is_published_record_by_record_and_field_by_field() {
        let published = page("About", vec![json!({"id": "s1", "content": {"heading": "Hi"}}), json!({"id": "s2"})]);
        let draft = page(
            "About us",
            vec![json!({"id": "s1", "content": {"heading": "Hello"}, "version": 9}), json!({"id": "s3"})],
        );
        let found = differences(Some(&published), Some(&draft));
        assert_eq!(found.len(), 4, "{found:#?}");
        assert_eq!(found[0].id, "p");
        assert!(!found[0].part);
        assert_eq!(
            found[0].fields,
            vec![FieldChange { field: "name".into(), before: json!("About"), after: json!("About us") }]
        );
        assert_eq!(found[1].id, "s1");
        assert_eq!(found[1].fields[0].field, "content.heading", "an object field is compared key by key");
        assert_eq!((found[2].id.as_str(), found[2].change), ("s2", Change::Removed));
        assert_eq!((found[3].id.as_str(), found[3].change), ("s3", Change::Added));
    }

    #[test]
    fn the_same_content_at_other_versions_differs_in_nothing() {
        let a = page("About", vec![json!({"id": "s1", "version": 1})]);
        let mut b = a.clone();
        b["record"]["version"] = json!(7);
        b["record"]["updatedAt"] = json!("2026-11-27T00:00:00Z");
        assert!(differences(Some(&a), Some(&b)).is_empty());
    }

    #[test]
    fn a_document_never_published_is_added_whole() {
        let draft = page("New", vec![json!({"id": "s1"})]);
        let found = differences(None, Some(&draft));
        assert_eq!(found.iter().map(|d| d.change).collect::<Vec<_>>(), [Change::Added, Change::Added]);
        let names: Vec<&str> = found[0].fields.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(names, ["id", "meta", "name"], "every field but versions and times");
    }
}
