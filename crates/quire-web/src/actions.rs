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
pub const ACTIONS: [Action; 4] = [
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
        prompt: "Translate this {entity} into {language}: read it, then write the translation into the same \
                 {entity} with locale \"{code}\" (the update tools' locale), every localised field, a page's sections \
                 too. It stays a draft: leave the {entity}'s own text as it is and publish nothing.",
        writes: true,
    },
    Action {
        key: "translate-missing",
        label: "Translate what is missing",
        prompt: "Translate this {entity} into each of the site's locales it is missing in or stale in (reading it \
                 says which): write each translation into the same {entity} with that locale, every localised field, \
                 a page's sections too. They stay drafts: leave the {entity}'s own text as it is and publish nothing.",
        writes: true,
    },
];

/// Names of languages by their BCP 47 primary subtag, for the language
/// picker; a tag not listed is shown as it is.
const LANGUAGE_NAMES: [(&str, &str); 24] = [
    ("ar", "Arabic"),
    ("cs", "Czech"),
    ("da", "Danish"),
    ("de", "German"),
    ("el", "Greek"),
    ("en", "English"),
    ("es", "Spanish"),
    ("fi", "Finnish"),
    ("fr", "French"),
    ("hu", "Hungarian"),
    ("it", "Italian"),
    ("ja", "Japanese"),
    ("ko", "Korean"),
    ("nb", "Norwegian"),
    ("nl", "Dutch"),
    ("no", "Norwegian"),
    ("pl", "Polish"),
    ("pt", "Portuguese"),
    ("ro", "Romanian"),
    ("ru", "Russian"),
    ("sv", "Swedish"),
    ("tr", "Turkish"),
    ("uk", "Ukrainian"),
    ("zh", "Chinese"),
];

/// A locale's name in words: `German` for `de`, `Portuguese (pt-BR)` for a
/// regional tag, the tag itself when its language is not known here.
pub fn language_name(tag: &str) -> String {
    let primary = tag.split('-').next().unwrap_or(tag).to_ascii_lowercase();
    match LANGUAGE_NAMES.iter().find(|(code, _)| *code == primary) {
        Some((_, name)) if primary == tag => name.to_string(),
        Some((_, name)) => format!("{name} ({tag})"),
        None => tag.to_string(),
    }
}

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
/// for a person who may change it (`writes`) or only read it, on a site
/// whose locales besides the default are `languages` (code, name): the
/// translations are offered only when there is one.
pub fn offered(entity: &str, writes: bool, languages: &[(String, String)]) -> Vec<Offered> {
    ACTIONS
        .iter()
        .filter(|a| writes || !a.writes)
        .filter(|a| !a.key.starts_with("translate") || !languages.is_empty())
        .map(|a| Offered {
            key: a.key,
            label: a.label,
            prompt: a.prompt.replace("{entity}", entity),
            needs_language: a.prompt.contains("{language}"),
        })
        .collect()
}

/// "Translate what is missing" over many records at once — `what` names
/// them (every entry of a collection, the whole site) — as one turn whose
/// changes are reviewed and undone as any: offered to a person who may
/// write, on a site with a locale besides its default.
pub fn translate_missing(what: &str, writes: bool, languages: &[(String, String)]) -> Vec<Offered> {
    if !writes || languages.is_empty() {
        return Vec::new();
    }
    vec![Offered {
        key: "translate-missing",
        label: "Translate what is missing",
        prompt: format!(
            "Translate {what} into each of the site's locales it is missing in or stale in (reading each record \
             says which): write each translation into the same record with that locale, every localised field, a \
             page's sections too. They stay drafts: leave their own text as it is and publish nothing."
        ),
        needs_language: false,
    }]
}

/// The site's locales besides its default, as the language picker offers
/// them: (code, name).
pub async fn languages(content: &quire_app::content::Content) -> Vec<(String, String)> {
    let locales = content.locales().await.unwrap_or_default();
    locales
        .into_iter()
        .filter(|l| !l.is_default)
        .map(|l| {
            let name = language_name(&l.tag);
            (l.tag, name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn german() -> Vec<(String, String)> {
        vec![("de".into(), "German".into())]
    }

    #[test]
    fn every_prompt_names_its_record_and_a_translation_its_language_and_locale() {
        for a in offered("page", true, &german()) {
            assert!(a.prompt.contains("this page"), "{}", a.prompt);
            assert!(!a.prompt.contains("{entity}"));
            assert_eq!(a.needs_language, a.key == "translate");
        }
        let translate = offered("post", true, &german()).into_iter().find(|a| a.key == "translate").unwrap();
        assert!(translate.prompt.contains("{language}") && translate.prompt.contains("locale \"{code}\""));
        assert!(translate.prompt.contains("same post") && translate.prompt.contains("publish nothing"));
    }

    #[test]
    fn a_reader_is_offered_only_what_changes_nothing_and_one_language_offers_no_translation() {
        let keys = |v: Vec<Offered>| v.iter().map(|a| a.key).collect::<Vec<_>>();
        assert_eq!(keys(offered("page", false, &german())), ["summarize"]);
        assert_eq!(keys(offered("page", true, &german())).len(), ACTIONS.len());
        assert_eq!(keys(offered("page", true, &[])), ["summarize", "improve"]);
    }

    #[test]
    fn what_is_missing_is_translated_across_many_records_by_writers_only() {
        let offered = translate_missing("every entry of the collection Blog", true, &german());
        assert_eq!(offered.len(), 1);
        assert!(offered[0].prompt.starts_with("Translate every entry of the collection Blog into each"));
        assert!(translate_missing("the site", false, &german()).is_empty());
        assert!(translate_missing("the site", true, &[]).is_empty());
    }

    #[test]
    fn languages_are_named_in_words_with_their_region() {
        assert_eq!(language_name("de"), "German");
        assert_eq!(language_name("pt-BR"), "Portuguese (pt-BR)");
        assert_eq!(language_name("eo"), "eo");
    }
}
