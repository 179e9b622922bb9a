//! The glob patterns of the `list` tool's `filter`.
//!
//! Supported: `*` (any run of characters within one name), `?` (one character other than `/`), `[abc]`, `[a-z]`,
//! `[!abc]` / `[^abc]` (one character from, or not from, a set), `**` (any run of characters, `/` included) and `**/`
//! (any number of whole folders, none included, so `**/*.md` matches `a.md` as well as `x/y/a.md`). Matching ignores
//! case. A filter without any of `*`, `?` or `[` matches names or paths that contain it (`todo` acts as `*todo*`).

/// The longest filter accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 500;

/// A compiled glob pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    tokens: Vec<Token>,
    matches_paths: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    AnyChar,
    Star,
    AnyPath,
    AnyFolders,
    Class { negated: bool, ranges: Vec<(char, char)> },
}

impl Glob {
    /// Compiles a pattern, or says what is wrong with it.
    pub fn new(pattern: &str) -> Result<Glob, String> {
        if pattern.is_empty() {
            return Err("is empty".to_owned());
        }
        let chars: Vec<char> = pattern.to_lowercase().chars().collect();
        if chars.len() > MAX_PATTERN_CHARS {
            return Err(format!("is {} characters long; the limit is {MAX_PATTERN_CHARS}", chars.len()));
        }
        let matches_paths = pattern.contains('/') || pattern.contains("**");
        let mut tokens = Vec::new();
        if !chars.iter().any(|c| matches!(c, '*' | '?' | '[')) {
            tokens.push(Token::AnyPath);
            tokens.extend(chars.iter().copied().map(Token::Char));
            tokens.push(Token::AnyPath);
            return Ok(Glob { tokens, matches_paths });
        }
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '*' if chars.get(i + 1) == Some(&'*') => {
                    i += 2;
                    while chars.get(i) == Some(&'*') {
                        i += 1;
                    }
                    if chars.get(i) == Some(&'/') {
                        i += 1;
                        tokens.push(Token::AnyFolders);
                    } else {
                        tokens.push(Token::AnyPath);
                    }
                    continue;
                }
                '*' => tokens.push(Token::Star),
                '?' => tokens.push(Token::AnyChar),
                '[' => {
                    let (token, next) = parse_class(&chars, i)?;
                    tokens.push(token);
                    i = next;
                    continue;
                }
                c => tokens.push(Token::Char(c)),
            }
            i += 1;
        }
        Ok(Glob { tokens, matches_paths })
    }

    /// Whether the pattern is meant for whole vault-relative paths (it contains `/` or `**`) rather than for names.
    pub fn matches_paths(&self) -> bool {
        self.matches_paths
    }

    /// Whether `text` (a name, or a path with `/` separators) matches the whole pattern.
    pub fn is_match(&self, text: &str) -> bool {
        let text: Vec<char> = text.to_lowercase().chars().collect();
        let width = text.len() + 1;
        // matched[t * width + s]: whether tokens[t..] match text[s..]; filled from the end of both.
        let mut matched = vec![false; (self.tokens.len() + 1) * width];
        matched[self.tokens.len() * width + text.len()] = true;
        for (t, token) in self.tokens.iter().enumerate().rev() {
            let next = (t + 1) * width;
            let here = t * width;
            // For `**/`: whether some k > s with text[k - 1] == '/' lets the rest match from k.
            let mut folder_end_ahead = false;
            for s in (0..=text.len()).rev() {
                let current = text.get(s).copied();
                let step = |ok: bool| ok && matched[next + s + 1];
                let value = match token {
                    Token::Char(c) => step(current == Some(*c)),
                    Token::AnyChar => step(current.is_some_and(|c| c != '/')),
                    Token::Class { negated, ranges } => step(current.is_some_and(|c| {
                        c != '/' && ranges.iter().any(|(low, high)| (*low..=*high).contains(&c)) != *negated
                    })),
                    Token::Star => matched[next + s] || (current.is_some_and(|c| c != '/') && matched[here + s + 1]),
                    Token::AnyPath => matched[next + s] || (current.is_some() && matched[here + s + 1]),
                    Token::AnyFolders => {
                        folder_end_ahead =
                            current.is_some() && ((current == Some('/') && matched[next + s + 1]) || folder_end_ahead);
                        matched[next + s] || folder_end_ahead
                    }
                };
                matched[here + s] = value;
            }
        }
        matched[0]
    }
}

/// Reads a `[...]` class starting at `chars[start]`, returning it and the index after its `]`.
fn parse_class(chars: &[char], start: usize) -> Result<(Token, usize), String> {
    let mut i = start + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("has a [ without its closing ]".to_owned());
        };
        if c == ']' && !first {
            return Ok((Token::Class { negated, ranges }, i + 1));
        }
        first = false;
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&high| high != ']') {
            let high = chars[i + 2];
            if high < c {
                return Err(format!("has the range {c}-{high}, which runs backwards"));
            }
            ranges.push((c, high));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, text: &str) -> bool {
        Glob::new(pattern).unwrap().is_match(text)
    }

    #[test]
    fn stars_and_questions() {
        assert!(m("*.md", "a.md"));
        assert!(m("*.md", ".md"));
        assert!(!m("*.md", "a.txt"));
        assert!(!m("*.md", "x/a.md"));
        assert!(m("a?c", "abc"));
        assert!(!m("a?c", "ac"));
        assert!(!m("a?c", "a/c"));
        assert!(m("*", "anything"));
        assert!(m("a*b*c", "aXXbYYc"));
        assert!(!m("a*b*c", "aXXbYY"));
    }

    #[test]
    fn classes() {
        assert!(m("[abc].md", "b.md"));
        assert!(!m("[abc].md", "d.md"));
        assert!(m("[a-c]x", "bx"));
        assert!(m("[!a-c]x", "dx"));
        assert!(m("[^a-c]x", "dx"));
        assert!(!m("[!a-c]x", "ax"));
        assert!(m("[]]", "]"));
        assert!(m("[a-]", "-"));
        assert!(Glob::new("[abc").is_err());
        assert!(Glob::new("[z-a]").is_err());
    }

    #[test]
    fn double_stars() {
        assert!(m("**/*.md", "a.md"));
        assert!(m("**/*.md", "x/y/a.md"));
        assert!(!m("**/*.md", "x/y/a.txt"));
        assert!(m("notes/**/a.md", "notes/a.md"));
        assert!(m("notes/**/a.md", "notes/x/y/a.md"));
        assert!(!m("notes/**/a.md", "other/x/a.md"));
        assert!(m("notes/**", "notes/x/y"));
        assert!(m("**", "a/b/c"));
        assert!(m("**.md", "a/b.md"));
        assert!(Glob::new("**/*.md").unwrap().matches_paths());
        assert!(Glob::new("notes/*.md").unwrap().matches_paths());
        assert!(!Glob::new("*.md").unwrap().matches_paths());
    }

    #[test]
    fn case_and_plain_text() {
        assert!(m("*.MD", "a.md"));
        assert!(m("*.md", "A.MD"));
        assert!(m("todo", "my-TODO-list.md"));
        assert!(!m("todo", "done.md"));
    }

    #[test]
    fn long_inputs_stay_fast() {
        let pattern = "*a*a*a*a*a*a*a*a*b";
        let text = "a".repeat(200);
        assert!(!m(pattern, &text));
    }
}
