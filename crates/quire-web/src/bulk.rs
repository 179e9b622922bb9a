//! What a list says after a bulk action (`finding.rs` acts; the pages and
//! entries lists read the answer from their query).

use serde::Deserialize;

/// What a list says after a bulk action (`?bulk=…&done=…&failed=…`).
/// Text, not numbers: it is flattened into each list's query, and a
/// flattened field is read as text.
#[derive(Deserialize, Default)]
pub struct BulkDone {
    #[serde(default)]
    pub bulk: String,
    #[serde(default)]
    pub done: String,
    #[serde(default)]
    pub failed: String,
}

impl BulkDone {
    /// The notice, in words ("" when nothing was done).
    pub fn notice(&self, plural: &str) -> String {
        let verb = match self.bulk.as_str() {
            "publish" => "Published",
            "unpublish" => "Took off the site",
            "archive" => "Archived",
            "none" => return format!("Choose the {plural} to act on first."),
            "archived" => return "Archived, with what went along; the Archive can bring it back.".into(),
            _ => return String::new(),
        };
        let count = |n: &str| n.parse::<usize>().unwrap_or(0);
        let mut s = format!("{verb} {} of the chosen {plural}.", count(&self.done));
        if count(&self.failed) > 0 {
            s.push_str(&format!(" {} could not be (open each to see why).", count(&self.failed)));
        }
        s
    }
}
