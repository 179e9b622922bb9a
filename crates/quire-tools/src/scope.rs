//! Scope selection for `get*` tools: exactly one way of choosing what to read.

use crate::tool::ToolError;

/// Which selector a `get*` call used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selected(pub &'static str);

/// Checks that exactly one of `selectors` (name, present) is set; the error
/// names them all, e.g. "Provide id, slug, or set all: true".
pub fn select_one(selectors: &[(&'static str, bool)]) -> Result<Selected, ToolError> {
    let chosen: Vec<&'static str> = selectors.iter().filter(|(_, set)| *set).map(|(n, _)| *n).collect();
    let names: Vec<&str> = selectors.iter().map(|(n, _)| *n).filter(|n| *n != "all").collect();
    let listing = match names.len() {
        0 => String::new(),
        1 => names[0].to_string(),
        _ => format!("{}, {}", names[..names.len() - 1].join(", "), names[names.len() - 1]),
    };
    match chosen.as_slice() {
        [one] => Ok(Selected(one)),
        [] => Err(ToolError::invalid(
            format!("Provide {listing}, or set all: true"),
            "Choose exactly one way to select what to read.",
        )),
        many => Err(ToolError::invalid(
            format!(
                "Provide only one of {}; got {}",
                selectors.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
                many.join(" and ")
            ),
            "Choose exactly one way to select what to read.",
        )),
    }
}

/// Checks a `limit`: default `default`, at most `max`.
pub fn limit(value: Option<u32>, default: u32, max: u32) -> Result<u32, ToolError> {
    match value {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ToolError::invalid(
            format!("limit: {n} is not between 1 and {max}"),
            format!("Use a limit up to {max} and page with cursor."),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn messages() {
        let e = select_one(&[("id", false), ("slug", false), ("all", false)]).unwrap_err();
        assert_eq!(e.message, "Provide id, slug, or set all: true");
        let e = select_one(&[("id", true), ("slug", true), ("all", false)]).unwrap_err();
        assert_eq!(e.message, "Provide only one of id, slug, all; got id and slug");
        assert_eq!(select_one(&[("id", false), ("all", true)]).unwrap(), Selected("all"));
    }

    proptest! {
        /// Exactly one selector set ⇔ success, and the selected one is that one.
        #[test]
        fn exactly_one(flags in prop::collection::vec(any::<bool>(), 1..5)) {
            const NAMES: [&str; 5] = ["id", "slug", "parentId", "label", "all"];
            let selectors: Vec<(&'static str, bool)> = flags.iter().enumerate().map(|(i, f)| (NAMES[i], *f)).collect();
            let set: Vec<&str> = selectors.iter().filter(|(_, f)| *f).map(|(n, _)| *n).collect();
            match select_one(&selectors) {
                Ok(Selected(name)) => { prop_assert_eq!(set.len(), 1); prop_assert_eq!(name, set[0]); }
                Err(e) => { prop_assert_ne!(set.len(), 1); prop_assert!(e.message.starts_with("Provide")); }
            }
        }

        #[test]
        fn limits(n in 0u32..300) {
            let r = limit(Some(n), 20, 100);
            prop_assert_eq!(r.is_ok(), (1..=100).contains(&n));
        }
    }
}
