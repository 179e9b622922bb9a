//! The AI actions offered on a record (a page, a post, an entry): each
//! starts an agent turn in the sidebar with the record as the turn's
//! context and a task prompt written here, once. What the agent then does
//! goes through the same approvals and can be undone like any turn.

/// One action: its key, the button's words and the task it gives the agent.
pub struct Action {
    /// Stable key (`summarize`).
    pub key: &'static str,
    /// The button's label.
    pub label: &'static str,
    /// The task; `{entity}` is the kind of record, and for a translation
    /// `{language}` and `{code}` the chosen language.
    pub prompt: &'static str,
    /// Whether the task changes the site: offered only to people who may.
    pub writes: bool,
}

/// The actions, in the order they are offered.
pub const ACTIONS: [Action; 3] = [
    Action {
        key: "summarize",
        label: "Summarize",
        prompt: "Summarize this {entity} for an editor in at most three sentences: what it is for and what it says. \
                 Read it with your tools first. Change nothing.",
        writes: false,
    },
    Action {
        key: "improve",
        label: "Suggest improvements",
        prompt: "Suggest improvements to this {entity}'s title, meta description and headings, each with a one-line \
                 reason. Read it with your tools first. Propose them as a list and change nothing until I say which \
                 to apply.",
        writes: true,
    },
    Action {
        key: "translate",
        label: "Translate",
        prompt: "Translate this {entity} into {language}. Create the translation as a new draft copy beside the \
                 original (same parent, slug ending in -{code}, every section translated) and leave the original \
                 unchanged.",
        writes: true,
    },
];

/// Languages offered for a translation: (code, name).
pub const LANGUAGES: [(&str, &str); 10] = [
    ("de", "German"),
    ("fr", "French"),
    ("es", "Spanish"),
    ("it", "Italian"),
    ("nl", "Dutch"),
    ("pt", "Portuguese"),
    ("pl", "Polish"),
    ("sv", "Swedish"),
    ("ja", "Japanese"),
    ("zh", "Chinese"),
];

/// An action as a screen offers it for a kind of record.
pub struct Offered {
    /// Stable key.
    pub key: &'static str,
    /// The button's label.
    pub label: &'static str,
    /// The task with `{entity}` filled in.
    pub prompt: String,
    /// Whether a language is chosen first.
    pub needs_language: bool,
}

/// The actions for a record of kind `entity` (`page`, `post`, `entry`),
/// for a person who may change it (`writes`) or only read it.
pub fn offered(entity: &str, writes: bool) -> Vec<Offered> {
    ACTIONS
        .iter()
        .filter(|a| writes || !a.writes)
        .map(|a| Offered {
            key: a.key,
            label: a.label,
            prompt: a.prompt.replace("{entity}", entity),
            needs_language: a.prompt.contains("{language}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_names_its_record_and_a_translation_its_language() {
        for a in offered("page", true) {
            assert!(a.prompt.contains("this page"), "{}", a.prompt);
            assert!(!a.prompt.contains("{entity}"));
            assert_eq!(a.needs_language, a.key == "translate");
        }
        let translate = offered("post", true).into_iter().find(|a| a.key == "translate").unwrap();
        assert!(translate.prompt.contains("{language}") && translate.prompt.contains("-{code}"));
    }

    #[test]
    fn a_reader_is_offered_only_what_changes_nothing() {
        let keys: Vec<&str> = offered("page", false).iter().map(|a| a.key).collect();
        assert_eq!(keys, ["summarize"]);
        assert_eq!(offered("page", true).len(), ACTIONS.len());
    }
}
