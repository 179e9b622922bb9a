//! Ranking tools for a capability query (searchTools).
//!
//! Words are folded onto concepts (entity words such as page / landing,
//! action words such as edit / change), so "change the menu link" and
//! "updateNavItem" meet on `update` + `navItem`. A tool's score sums, for each
//! query concept, the strongest place the tool carries it: its entity and
//! action (strong), its tags, its search phrases, then its description (weak).
//! No I/O; a query over the whole catalog takes microseconds.

use crate::subject::Subject;
use crate::tool::Tool;
use quire_core::model::EntityKind;
use std::collections::HashMap;

/// Words that carry no capability.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "to",
    "of",
    "for",
    "my",
    "our",
    "on",
    "in",
    "me",
    "please",
    "i",
    "want",
    "can",
    "you",
    "with",
    "and",
    "is",
    "it",
    "this",
    "that",
    "from",
    "some",
    "there",
    "be",
    "do",
    "does",
    "we",
    "us",
    "at",
    "by",
    "as",
    "so",
    "into",
    "its",
    "your",
    "any",
    "let",
    "lets",
    "would",
    "like",
    "could",
    "should",
    "need",
    "needs",
    "have",
    "has",
    "just",
    "now",
    "also",
    "one",
    "then",
    "how",
    "are",
    "was",
    "were",
    "am",
    "via",
    "using",
    "use",
    "tool",
    "tools",
    "quick",
    "quickly",
    "about",
    "called",
    "named",
    "new",
    "every",
    "each",
    "currently",
    "site",
    "website",
];

/// Word → concepts. A word may stand for an entity and an action at once
/// ("trash" is both the archive and deleting). "new" is a stopword because
/// "add a new X" already says create, while "new" alone is ambiguous.
const CONCEPTS: &[(&str, &[&str])] = &[
    // entities
    ("page", &["page"]),
    ("landing", &["page"]),
    ("webpage", &["page"]),
    ("subpage", &["page"]),
    ("homepage", &["page"]),
    ("home", &["page"]),
    ("tree", &["page"]),
    ("sitemap", &["page"]),
    ("slug", &["page"]),
    ("seo", &["page"]),
    ("post", &["post"]),
    ("blog", &["post"]),
    ("article", &["post"]),
    ("news", &["post"]),
    ("story", &["post"]),
    ("blogpost", &["post"]),
    ("draft", &["post", "create"]),
    ("drafts", &["post"]),
    ("navigation", &["navItem"]),
    ("nav", &["navItem"]),
    ("menu", &["navItem"]),
    ("link", &["navItem"]),
    ("header", &["navItem"]),
    ("footer", &["navItem"]),
    ("navbar", &["navItem"]),
    ("submenu", &["navItem"]),
    ("image", &["image"]),
    ("photo", &["image"]),
    ("picture", &["image"]),
    ("pic", &["image"]),
    ("media", &["image"]),
    ("img", &["image"]),
    ("graphic", &["image"]),
    ("illustration", &["image"]),
    ("alt", &["image"]),
    ("upload", &["image"]),
    ("uploaded", &["image"]),
    ("library", &["image"]),
    ("logo", &["image"]),
    ("section", &["section"]),
    ("block", &["section"]),
    ("component", &["section"]),
    ("module", &["section"]),
    ("hero", &["section"]),
    ("faq", &["section"]),
    ("gallery", &["section"]),
    ("cta", &["section"]),
    ("banner", &["section"]),
    ("heading", &["section"]),
    ("headline", &["section"]),
    ("template", &["sectionTemplate"]),
    ("layout", &["sectionTemplate"]),
    ("schema", &["sectionTemplate"]),
    ("field", &["sectionTemplate"]),
    ("type", &["sectionTemplate"]),
    ("kind", &["sectionTemplate"]),
    ("entry", &["entry"]),
    ("item", &["entry"]),
    ("record", &["entry"]),
    ("collection", &["entry"]),
    ("testimonial", &["entry"]),
    ("quote", &["entry"]),
    ("archive", &["archive"]),
    ("archived", &["archive"]),
    ("trash", &["archive", "delete"]),
    ("deleted", &["archive"]),
    ("bin", &["archive"]),
    ("recycle", &["archive"]),
    ("removed", &["archive"]),
    ("capability", &["tool"]),
    ("discover", &["tool"]),
    // actions
    ("get", &["read"]),
    ("find", &["read"]),
    ("list", &["read"]),
    ("show", &["read"]),
    ("read", &["read"]),
    ("fetch", &["read"]),
    ("search", &["read"]),
    ("look", &["read"]),
    ("view", &["read"]),
    ("see", &["read"]),
    ("browse", &["read"]),
    ("which", &["read"]),
    ("what", &["read"]),
    ("display", &["read"]),
    ("lookup", &["read"]),
    ("check", &["read"]),
    ("inspect", &["read"]),
    ("exist", &["read"]),
    ("available", &["read"]),
    ("latest", &["read"]),
    ("create", &["create"]),
    ("add", &["create"]),
    ("make", &["create"]),
    ("write", &["create"]),
    ("insert", &["create"]),
    ("compose", &["create"]),
    ("register", &["create"]),
    ("put", &["create"]),
    ("build", &["create"]),
    ("update", &["update"]),
    ("edit", &["update"]),
    ("change", &["update"]),
    ("modify", &["update"]),
    ("rename", &["update"]),
    ("set", &["update"]),
    ("move", &["update"]),
    ("reorder", &["update"]),
    ("attach", &["update"]),
    ("replace", &["update"]),
    ("hide", &["update"]),
    ("fix", &["update"]),
    ("tweak", &["update"]),
    ("adjust", &["update"]),
    ("publish", &["update"]),
    ("unpublish", &["update"]),
    ("swap", &["update"]),
    ("retitle", &["update"]),
    ("tag", &["update"]),
    ("describe", &["update"]),
    ("sort", &["update"]),
    ("reposition", &["update"]),
    ("show/hide", &["update"]),
    ("correct", &["update"]),
    ("delete", &["delete"]),
    ("remove", &["delete"]),
    ("drop", &["delete"]),
    ("destroy", &["delete"]),
    ("erase", &["delete"]),
    ("rid", &["delete"]),
    ("takedown", &["delete"]),
    ("discard", &["delete"]),
    ("restore", &["restore"]),
    ("undelete", &["restore"]),
    ("recover", &["restore"]),
    ("undo", &["restore"]),
    ("revert", &["restore"]),
    ("unarchive", &["restore"]),
    ("back", &["restore"]),
];

/// The action a tool's name starts with.
fn action_of(name: &str) -> &'static str {
    for (prefix, action) in [
        ("get", "read"),
        ("create", "create"),
        ("update", "update"),
        ("delete", "delete"),
        ("restore", "restore"),
        ("search", "read"),
    ] {
        if name.starts_with(prefix) {
            return action;
        }
    }
    "other"
}

fn stem(word: &str) -> String {
    let w = word.to_lowercase();
    if w.len() > 4 {
        if let Some(s) = w.strip_suffix("ies") {
            return format!("{s}y");
        }
        for suffix in ["ing", "ed", "es", "s"] {
            if let Some(s) = w.strip_suffix(suffix)
                && (CONCEPTS.iter().any(|(k, _)| *k == s) || suffix == "s")
            {
                return s.to_string();
            }
        }
    }
    w
}

/// The concepts a text carries, in order, stopwords removed.
pub fn concepts(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // camelCase names split into words: updateNavItem → update nav item
    let mut spaced = String::with_capacity(text.len() + 8);
    for (i, c) in text.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            spaced.push(' ');
        }
        spaced.push(c);
    }
    for raw in spaced.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let lower = raw.to_lowercase();
        if STOPWORDS.contains(&lower.as_str()) {
            continue;
        }
        let word = stem(&lower);
        match CONCEPTS.iter().find(|(k, _)| *k == word || *k == lower) {
            Some((_, cs)) => out.extend(cs.iter().map(|c| c.to_string())),
            None => out.push(word),
        }
    }
    out
}

/// Where a tool carries each concept, with the strongest weight.
fn profile(tool: &Tool) -> HashMap<String, f32> {
    let mut weights: HashMap<String, f32> = HashMap::new();
    let mut put = |concept: String, w: f32| {
        let e = weights.entry(concept).or_insert(0.0);
        if w > *e {
            *e = w;
        }
    };
    put(tool.entity.as_str().to_string(), 4.0);
    put(action_of(tool.name).to_string(), 4.0);
    // "nav item" from the name should not also read as a collection item.
    for c in concepts(tool.name) {
        if c != "entry" || tool.entity == Subject::Record(EntityKind::Entry) {
            put(c, 2.5);
        }
    }
    for tag in tool.tags {
        for c in concepts(tag) {
            put(c, 2.0);
        }
    }
    for phrase in tool.phrases {
        for c in concepts(phrase) {
            put(c, 1.5);
        }
    }
    for c in concepts(tool.description) {
        put(c, 0.5);
    }
    if matches!(tool.entity, Subject::Archive | Subject::Document) {
        // restoring brings back, and publishing publishes, many kinds of record
        for entity in ["page", "post", "section", "image", "entry", "navItem"] {
            put(entity.to_string(), 1.0);
        }
    }
    weights
}

/// Precomputed concept profiles of a list of tools, built once per registry.
pub struct SearchIndex {
    profiles: Vec<HashMap<String, f32>>,
}

impl SearchIndex {
    /// Profiles every tool of `tools` (same order).
    pub fn new(tools: &[Tool]) -> Self {
        Self { profiles: tools.iter().map(profile).collect() }
    }

    /// Every tool of `tools` (the list the index was built from), best match
    /// first (ties keep catalog order); tools that match nothing are left out.
    pub fn rank<'a>(&self, tools: &'a [Tool], query: &str) -> Vec<&'a Tool> {
        let q = concepts(query);
        let lowered = query.to_lowercase();
        let mut scored: Vec<(f32, usize, &Tool)> =
            tools.iter().zip(&self.profiles).enumerate().map(|(i, (t, p))| (score(t, p, &q, &lowered), i, t)).collect();
        scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
        scored.into_iter().filter(|(s, _, _)| *s > 0.0).map(|(_, _, t)| t).collect()
    }
}

/// Scores one tool for the query's concepts.
fn score(tool: &Tool, profile: &HashMap<String, f32>, query: &[String], query_lower: &str) -> f32 {
    let mut total = 0.0;
    let mut seen = std::collections::HashSet::new();
    for c in query.iter().take(64) {
        if seen.insert(c) {
            total += profile.get(c).copied().unwrap_or(0.0);
        }
    }
    // An exact mention of the tool's name wins outright.
    if query_lower.contains(&tool.name.to_lowercase()) {
        total += 10.0;
    }
    // Without an action word, reading is the safe guess.
    let has_action = query.iter().any(|c| matches!(c.as_str(), "read" | "create" | "update" | "delete" | "restore"));
    if !has_action && tool.read_only {
        total += 1.0;
    }
    // A query that names no entity of the tool but its action alone scores low.
    if !query.iter().any(|c| c == tool.entity.as_str()) && !matches!(tool.entity, Subject::Archive | Subject::Document)
    {
        total *= 0.8;
    }
    total
}

/// Ranks `tools` for `query`, building the index on the spot (tests and
/// one-off use; the registry keeps a prebuilt [`SearchIndex`]).
pub fn rank<'a>(tools: &'a [Tool], query: &str) -> Vec<&'a Tool> {
    SearchIndex::new(tools).rank(tools, query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_words_onto_concepts() {
        assert_eq!(concepts("Change the menu links"), ["update", "navItem", "navItem"]);
        assert_eq!(concepts("updateNavItem"), ["update", "navItem", "entry"]);
        assert_eq!(concepts("photos"), ["image"]);
    }
}
