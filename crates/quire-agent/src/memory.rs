//! Working memory: the entities a session's tool results mentioned, the
//! latest few per kind, so "that page" resolves without another lookup.

use serde_json::{Map, Value, json};

/// Entities kept per kind.
const PER_KIND: usize = 5;
/// Items taken from one list result.
const FROM_LIST: usize = 3;

/// The kinds remembered, by the entity a tool works on.
fn kind_of(entity: &str) -> Option<&'static str> {
    Some(match entity {
        "page" => "page",
        "section" => "section",
        "image" => "image",
        "post" => "post",
        "entry" => "entry",
        "navItem" | "navigation" => "navItem",
        "note" | "folder" => "note",
        _ => return None,
    })
}

/// The compact form of one entity: id, a key (slug, key or path) and a title.
fn summary(item: &Value) -> Option<Value> {
    let obj = item.as_object()?;
    let text = |k: &str| obj.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let id = text("id").or_else(|| text("path"))?;
    let mut out = Map::new();
    out.insert("id".into(), json!(id));
    if let Some(key) = text("slug").or_else(|| text("key")).or_else(|| text("path"))
        && key != id
    {
        out.insert("key".into(), json!(key));
    }
    if let Some(title) = text("title").or_else(|| text("name")).or_else(|| text("label")).or_else(|| text("alt")) {
        out.insert("title".into(), json!(title.chars().take(80).collect::<String>()));
    }
    Some(Value::Object(out))
}

/// The records an archive answer names (a delete's or restoreArchive's
/// `items`, each an archive with the records that went with it), as
/// `(entity, id, label)`; empty for any other answer.
pub fn archived_records(result: &Value) -> Vec<(String, String, String)> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    result
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|archive| archive.get("entityId").is_some())
        .flat_map(|archive| archive.get("items").and_then(Value::as_array).cloned().unwrap_or_default())
        .map(|record| (text(&record, "entity"), text(&record, "id"), text(&record, "label")))
        .filter(|(_, id, _)| !id.is_empty())
        .collect()
}

/// Records the entities of a successful tool result into `memory`. An
/// archive answer is about records, never the archive: what a delete
/// archived is forgotten (it is gone), what a restore brought back is
/// remembered under its own id.
pub fn remember(memory: &mut Value, entity: &str, result: &Value) {
    if result.get("success").and_then(Value::as_bool) == Some(false) {
        return;
    }
    let archived = archived_records(result);
    if !archived.is_empty() {
        if entity == "archive" {
            for (record, id, label) in archived.iter().rev() {
                remember(memory, record, &json!({ "success": true, "item": { "id": id, "title": label } }));
            }
        } else if let Some(kinds) = memory.as_object_mut() {
            for list in kinds.values_mut().filter_map(Value::as_array_mut) {
                list.retain(|e| !archived.iter().any(|(_, id, _)| e.get("id").and_then(Value::as_str) == Some(id)));
            }
        }
        return;
    }
    let Some(kind) = kind_of(entity) else { return };
    let mut seen: Vec<Value> = Vec::new();
    if let Some(item) = result.get("item") {
        seen.extend(summary(item));
    }
    if let Some(items) = result.get("items").and_then(Value::as_array) {
        seen.extend(items.iter().take(FROM_LIST).filter_map(summary));
    }
    if seen.is_empty() {
        // Tools answering with a bare record (or a vault path).
        seen.extend(summary(result));
    }
    if seen.is_empty() {
        return;
    }
    if !memory.is_object() {
        *memory = Value::Object(Map::new());
    }
    let list = memory.as_object_mut().expect("made an object").entry(kind).or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else { return };
    // Newest first, without duplicates; the first seen of a list leads.
    for item in seen.into_iter().rev() {
        list.retain(|e| e.get("id") != item.get("id"));
        list.insert(0, item);
    }
    list.truncate(PER_KIND);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A getPage result listing `pages`, each (id, slug, name).
    pub(crate) fn pages_listed(pages: &[(&str, &str, &str)]) -> Value {
        let items: Vec<Value> =
            pages.iter().map(|(id, slug, name)| json!({ "id": id, "slug": slug, "name": name })).collect();
        json!({ "success": true, "items": items })
    }

    #[test]
    fn an_archive_id_never_stands_for_a_record() {
        let mut memory = json!({});
        let about = pages_listed(&[("p1", "about", "About"), ("p2", "home", "Home")]);
        remember(&mut memory, "page", &about);
        let archived = json!({ "success": true, "count": 1, "items": [{
            "id": "a1", "entity": "page", "entityId": "p1", "label": "About",
            "items": [{ "entity": "page", "id": "p1", "label": "About" }, { "entity": "section", "id": "s1", "label": "Hero" }]
        }] });
        remember(&mut memory, "page", &archived);
        let ids = |m: &Value| -> Vec<String> {
            m["page"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_string()).collect()
        };
        assert_eq!(ids(&memory), ["p2"], "the archived page is forgotten, the archive id never remembered");
        // a restore brings the record back under its own id
        remember(&mut memory, "archive", &archived);
        assert_eq!(ids(&memory), ["p1", "p2"]);
        assert!(!memory.to_string().contains("a1"), "{memory}");
    }

    #[test]
    fn keeps_the_latest_entities_per_kind() {
        let mut memory = json!({});
        remember(
            &mut memory,
            "page",
            &json!({ "success": true, "item": { "id": "p1", "slug": "about", "name": "About" } }),
        );
        remember(&mut memory, "page", &pages_listed(&[("p2", "home", "Home"), ("p1", "about", "About")]));
        remember(&mut memory, "page", &json!({ "success": false, "item": { "id": "p9" } }));
        remember(&mut memory, "tool", &json!({ "success": true, "item": { "id": "x" } }));
        let pages: Vec<&str> = memory["page"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
        assert_eq!(pages, ["p2", "p1"]);
        assert!(memory.get("tool").is_none());
    }
}
