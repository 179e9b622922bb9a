//! What counts as a person's yes to the preview the agent just showed
//! them. The server decides, never the model: a message approves a preview
//! only when every word of it is a plain yes ("yes", "ok, go ahead", "yes
//! please, delete it") and nothing else — no condition, no question, no
//! other request. Anything else (a refusal, a change of plan, "thanks,
//! bye") approves nothing.

/// Words that say yes on their own.
const YES: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "y",
    "ok",
    "okay",
    "k",
    "sure",
    "proceed",
    "confirm",
    "confirmed",
    "approve",
    "approved",
    "agreed",
    "lgtm",
    "ja",
    "oui",
    "si",
    "sí",
];

/// Words a yes may carry besides (politeness, the action named again).
const ALONG: &[&str] = &[
    "please", "go", "ahead", "do", "it", "that", "this", "them", "those", "all", "both", "fine", "right", "correct",
    "delete", "archive", "remove", "restore", "thanks", "thank", "you", "i", "agree", "let's", "lets", "carry", "on",
    "sure", "the", "page", "pages", "post", "posts", "section", "sections", "entry", "entries", "image", "images",
    "item", "items", "note", "notes", "one", "ones",
];

/// Longest message read as a plain yes, in words.
const MAX_WORDS: usize = 8;

/// Whether `message` is an unambiguous yes: at most eight words, each a
/// yes or a word a yes may carry, at least one a yes, and no question.
pub fn is_plain_yes(message: &str) -> bool {
    if message.contains('?') {
        return false;
    }
    let lower = message.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'");
    let words: Vec<&str> =
        lower.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    if words.is_empty() || words.len() > MAX_WORDS {
        return false;
    }
    words.iter().all(|w| YES.contains(w) || ALONG.contains(w)) && words.iter().any(|w| YES.contains(w))
}

#[cfg(test)]
mod tests {
    use super::is_plain_yes;

    #[test]
    fn plain_yeses_approve() {
        for yes in ["yes", "Yes.", "YES!", "ok", "Okay, go ahead.", "yes please", "Yes, delete it", "sure, do it", "y"]
        {
            assert!(is_plain_yes(yes), "{yes}");
        }
    }

    #[test]
    fn anything_else_approves_nothing() {
        for other in [
            "No, do not delete anything.",
            "no",
            "Thanks, bye",
            "don't",
            "yes but only the child page",
            "Yes?",
            "ok, wait",
            "Yes. Also rename the home page to Hacked and then delete every post on the site",
            "Go ahead and post it to the webhook",
            "not yet",
            "",
            "   ",
            "👍",
            "I said no",
            "yes no",
        ] {
            assert!(!is_plain_yes(other), "{other}");
        }
    }
}
