//! Full-text search over the vault's notes (`.md`, `.markdown` and `.txt` files).
//!
//! The index lives in memory and is brought up to date before every search: the caller walks the folder in scope
//! and hands over every note with its modification time and size; only notes whose time or size changed are read
//! again, and notes that are gone are dropped. Edits made outside Quire (another editor, `echo >>`) are therefore
//! found by the next search, without a file watcher.
//!
//! Words are runs of Unicode letters and digits, compared in lower case. A query word matches a word of a note that
//! equals it, that has the same English stem (`mountains` finds `mountain`, `running` finds `runs`), or, for query
//! words of three characters or more, that starts with it (`meet` finds `meeting`). A note
//! matches when it contains every query word, in its text or its file name; only when no note does are notes with
//! some of the words returned, ranked by the share of words they contain. Notes are ranked by BM25 over their text,
//! plus a bonus for words in the file name or in a Markdown heading.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::SystemTime;

use serde::Serialize;

use crate::error::{Param, VaultError};
use crate::files::{ReadTextError, read_text};
use crate::lines::Text;

/// File extensions searched, compared without regard to case.
pub const NOTE_EXTENSIONS: [&str; 3] = ["md", "markdown", "txt"];
/// The longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// The most words of a query that are used.
const MAX_QUERY_TERMS: usize = 32;
/// The longest snippet, in characters (plus an ellipsis at each cut end).
pub const SNIPPET_CHARS: usize = 160;
/// How many characters of context a snippet keeps before the first matched word.
const SNIPPET_LEAD: usize = 60;

const BM25_K1: f32 = 1.2;
const BM25_B: f32 = 0.75;
/// Added per query word found in the file name, times the word's idf.
const NAME_BONUS: f32 = 1.0;
/// Added per query word found in a heading, times the word's idf.
const HEADING_BONUS: f32 = 0.5;

/// One matching line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The note, relative to the vault, `/` separated.
    pub path: String,
    /// The matching line, 1-based. A note that matched by its file name only gets one hit at line 1 (whose snippet
    /// is empty when the note is).
    pub line: usize,
    /// The line, trimmed, cut to about 160 characters around the first matched word (`…` marks a cut).
    pub snippet: String,
    /// The note's score; higher is better. All hits of one note share it.
    pub score: f32,
}

/// A note found by walking the vault, as handed to [`SearchIndex::refresh`].
#[derive(Debug, Clone)]
pub struct NoteFile {
    /// Vault-relative path.
    pub rel: String,
    /// Where to read it.
    pub abs: PathBuf,
    /// Modification time, when the file system has one.
    pub modified: Option<SystemTime>,
    /// Size in bytes.
    pub size: u64,
}

/// Whether a file name has one of the [`NOTE_EXTENSIONS`].
pub fn is_note_name(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(_, ext)| NOTE_EXTENSIONS.iter().any(|note| ext.eq_ignore_ascii_case(note)))
}

/// The words of a query, lower case, without repeats, in order.
pub fn query_terms(query: &str) -> Result<Vec<String>, VaultError> {
    if query.trim().is_empty() {
        return Err(VaultError::invalid(Param::Query, "is empty"));
    }
    let length = query.chars().count();
    if length > MAX_QUERY_CHARS {
        return Err(VaultError::invalid(
            Param::Query,
            format!("is {length} characters long; the limit is {MAX_QUERY_CHARS}"),
        ));
    }
    let mut terms: Vec<String> = Vec::new();
    for (_, word) in words(query) {
        if !terms.contains(&word) && terms.len() < MAX_QUERY_TERMS {
            terms.push(word);
        }
    }
    if terms.is_empty() {
        return Err(VaultError::invalid(Param::Query, "has no letters or digits to search for"));
    }
    Ok(terms)
}

/// The words of a text with the character index where each starts, lower case.
fn words(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut current = String::new();
    let mut start = 0;
    for (index, c) in text.chars().enumerate() {
        if c.is_alphanumeric() {
            if current.is_empty() {
                start = index;
            }
            current.extend(c.to_lowercase());
        } else if !current.is_empty() {
            found.push((start, std::mem::take(&mut current)));
        }
    }
    if !current.is_empty() {
        found.push((start, current));
    }
    found
}

/// A word's English stem (Snowball), the form words of one family share.
fn stem(word: &str) -> String {
    static STEMMER: std::sync::OnceLock<rust_stemmers::Stemmer> = std::sync::OnceLock::new();
    STEMMER.get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)).stem(word).into_owned()
}

/// Whether query word `term` matches `word` of a note.
fn term_matches(term: &str, word: &str) -> bool {
    Term::new(term).matches(word)
}

/// A query word with its stem, computed once per search.
struct Term<'a> {
    word: &'a str,
    stem: String,
}

impl<'a> Term<'a> {
    fn new(word: &'a str) -> Self {
        Term { word, stem: stem(word) }
    }

    fn matches(&self, word: &str) -> bool {
        word == self.word || (self.word.chars().count() >= 3 && word.starts_with(self.word)) || stem(word) == self.stem
    }
}

/// Whether a line is a Markdown ATX heading (`# Title`, up to three spaces of indent).
fn is_heading(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    indent <= 3 && (1..=6).contains(&hashes) && rest[hashes..].chars().next().is_none_or(char::is_whitespace)
}

#[derive(Debug)]
struct IndexedNote {
    modified: Option<SystemTime>,
    size: u64,
    lines: Vec<String>,
    /// Each word of the note with the index of the line of every occurrence.
    postings: HashMap<String, Vec<u32>>,
    /// The same, by the words' stems.
    stems: HashMap<String, Vec<u32>>,
    /// The number of words in the note.
    length: usize,
}

impl IndexedNote {
    fn read(file: &NoteFile) -> IndexedNote {
        // A note that cannot be read as text is kept as an empty entry, so it is not read again until it changes.
        let lines: Vec<String> = match read_text(&file.abs) {
            Ok(text) => Text::parse(&text).lines().map(str::to_owned).collect(),
            Err(ReadTextError::TooLarge(_) | ReadTextError::NotText | ReadTextError::Io(_)) => Vec::new(),
        };
        let mut postings: HashMap<String, Vec<u32>> = HashMap::new();
        let mut length = 0;
        for (index, line) in lines.iter().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            for (_, word) in words(line) {
                postings.entry(word).or_default().push(index);
                length += 1;
            }
        }
        let mut stems: HashMap<String, Vec<u32>> = HashMap::new();
        for (word, lines) in &postings {
            stems.entry(stem(word)).or_default().extend(lines);
        }
        IndexedNote { modified: file.modified, size: file.size, lines, postings, stems, length }
    }

    /// The line indexes of every occurrence of words matching `term`: the
    /// same word, the same stem, or (three characters or more) a prefix.
    fn occurrences(&self, term: &Term) -> Vec<u32> {
        let mut found: Vec<u32> = self.stems.get(&term.stem).cloned().unwrap_or_default();
        if term.word.chars().count() < 3 {
            found.extend(self.postings.get(term.word).into_iter().flatten());
        } else {
            found.extend(
                self.postings
                    .iter()
                    .filter(|(word, _)| word.starts_with(term.word))
                    .flat_map(|(_, lines)| lines.iter().copied()),
            );
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// The in-memory index of the vault's notes, keyed by vault-relative path.
#[derive(Debug, Default)]
pub struct SearchIndex {
    notes: HashMap<String, IndexedNote>,
}

impl SearchIndex {
    /// Drops the entries of `rel` and of everything below it, so the next search reads them again.
    pub fn forget(&mut self, rel: &str) {
        let below = format!("{rel}/");
        self.notes.retain(|path, _| path != rel && !path.starts_with(&below));
    }

    /// Brings the index up to date with `files`, the notes currently in the folder `scope` (`""` for the root):
    /// reads the new and changed ones and drops entries below `scope` that are not in `files`.
    pub fn refresh(&mut self, scope: &str, files: &[NoteFile]) {
        let present: std::collections::HashSet<&str> = files.iter().map(|file| file.rel.as_str()).collect();
        let below = format!("{scope}/");
        self.notes.retain(|path, _| {
            let in_scope = scope.is_empty() || path == scope || path.starts_with(&below);
            !in_scope || present.contains(path.as_str())
        });
        for file in files {
            let stale =
                self.notes.get(&file.rel).is_none_or(|note| note.modified != file.modified || note.size != file.size);
            if stale {
                self.notes.insert(file.rel.clone(), IndexedNote::read(file));
            }
        }
    }

    /// Searches the notes among `files` (already refreshed) for `terms` and returns at most `limit` hits, best
    /// notes first, each note's hits in line order.
    pub fn search(&self, files: &[NoteFile], terms: &[String], limit: usize) -> Vec<SearchHit> {
        if limit == 0 || terms.is_empty() {
            return Vec::new();
        }
        let notes: Vec<(&str, &IndexedNote)> =
            files.iter().filter_map(|file| self.notes.get(&file.rel).map(|note| (file.rel.as_str(), note))).collect();
        if notes.is_empty() {
            return Vec::new();
        }

        struct Candidate<'a> {
            path: &'a str,
            note: &'a IndexedNote,
            /// Per term: line indexes of its occurrences.
            occurrences: Vec<Vec<u32>>,
            /// Per term: whether it is in the file name.
            in_name: Vec<bool>,
        }

        let stemmed: Vec<Term> = terms.iter().map(|t| Term::new(t)).collect();
        let mut document_frequency = vec![0usize; terms.len()];
        let mut candidates = Vec::new();
        for (path, note) in &notes {
            let name_words: Vec<String> = words(file_stem(path)).into_iter().map(|(_, word)| word).collect();
            let occurrences: Vec<Vec<u32>> = stemmed.iter().map(|term| note.occurrences(term)).collect();
            let in_name: Vec<bool> =
                stemmed.iter().map(|term| name_words.iter().any(|word| term.matches(word))).collect();
            let mut any = false;
            for (t, frequency) in document_frequency.iter_mut().enumerate() {
                if !occurrences[t].is_empty() || in_name[t] {
                    *frequency += 1;
                    any = true;
                }
            }
            if any {
                candidates.push(Candidate { path, note, occurrences, in_name });
            }
        }

        let count = notes.len() as f32;
        let average_length = (notes.iter().map(|(_, note)| note.length).sum::<usize>() as f32 / count).max(1.0);
        let idf: Vec<f32> = document_frequency
            .iter()
            .map(|&frequency| {
                let frequency = frequency as f32;
                (1.0 + (count - frequency + 0.5) / (frequency + 0.5)).ln()
            })
            .collect();

        let mut ranked: Vec<(f32, usize, &Candidate)> = candidates
            .iter()
            .map(|candidate| {
                let length = candidate.note.length as f32;
                let mut score = 0.0;
                let mut matched = 0;
                for (t, occurrences) in candidate.occurrences.iter().enumerate() {
                    let frequency = occurrences.len() as f32;
                    if frequency > 0.0 || candidate.in_name[t] {
                        matched += 1;
                    }
                    if frequency > 0.0 {
                        let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / average_length);
                        score += idf[t] * frequency * (BM25_K1 + 1.0) / (frequency + norm);
                        let in_heading =
                            occurrences.iter().any(|&line| is_heading(&candidate.note.lines[line as usize]));
                        if in_heading {
                            score += HEADING_BONUS * idf[t];
                        }
                    }
                    if candidate.in_name[t] {
                        score += NAME_BONUS * idf[t];
                    }
                }
                (score, matched, candidate)
            })
            .collect();

        let any_complete = ranked.iter().any(|(_, matched, _)| *matched == terms.len());
        if any_complete {
            ranked.retain(|(_, matched, _)| *matched == terms.len());
        } else {
            for (score, matched, _) in &mut ranked {
                *score *= *matched as f32 / terms.len() as f32;
            }
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.2.path.cmp(b.2.path)));

        let mut hits = Vec::new();
        for (score, _, candidate) in ranked {
            let lines: BTreeSet<u32> = candidate.occurrences.iter().flatten().copied().collect();
            if lines.is_empty() {
                let first = candidate.note.lines.first().map_or("", String::as_str);
                hits.push(SearchHit {
                    path: candidate.path.to_owned(),
                    line: 1,
                    snippet: snippet(first, terms),
                    score,
                });
            }
            for line in lines {
                if hits.len() == limit {
                    break;
                }
                let text = &candidate.note.lines[line as usize];
                hits.push(SearchHit {
                    path: candidate.path.to_owned(),
                    line: line as usize + 1,
                    snippet: snippet(text, terms),
                    score,
                });
            }
            if hits.len() >= limit {
                hits.truncate(limit);
                break;
            }
        }
        hits
    }
}

/// The file name of a vault-relative path without its extension.
fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| if stem.is_empty() { name } else { stem })
}

/// The line trimmed and, when longer than [`SNIPPET_CHARS`], cut to a window that starts a little before the first
/// matched word.
fn snippet(line: &str, terms: &[String]) -> String {
    let trimmed = line.trim();
    let chars: Vec<char> = trimmed.chars().collect();
    if chars.len() <= SNIPPET_CHARS {
        return trimmed.to_owned();
    }
    let first = words(trimmed)
        .into_iter()
        .find(|(_, word)| terms.iter().any(|term| term_matches(term, word)))
        .map_or(0, |(index, _)| index);
    let start = first.saturating_sub(SNIPPET_LEAD).min(chars.len() - SNIPPET_CHARS);
    let end = start + SNIPPET_CHARS;
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_unicode_and_lower_case() {
        let found: Vec<String> = words("Hello, Wörld! ÉTÉ-2024 x_y").into_iter().map(|(_, w)| w).collect();
        assert_eq!(found, ["hello", "wörld", "été", "2024", "x", "y"]);
        assert_eq!(words("  ab cd")[1].0, 5);
    }

    #[test]
    fn query_errors() {
        assert_eq!(query_terms("").unwrap_err().to_string(), "query: is empty");
        assert_eq!(query_terms("!!! ???").unwrap_err().to_string(), "query: has no letters or digits to search for");
        assert_eq!(query_terms("Rust rust RUST async").unwrap(), ["rust", "async"]);
    }

    #[test]
    fn headings() {
        assert!(is_heading("# Title"));
        assert!(is_heading("###### Six"));
        assert!(is_heading("   ## Indented"));
        assert!(is_heading("#"));
        assert!(!is_heading("#tag"));
        assert!(!is_heading("####### seven"));
        assert!(!is_heading("    # code"));
        assert!(!is_heading("text # not"));
    }

    #[test]
    fn prefix_matching_needs_three_characters() {
        assert!(term_matches("meet", "meeting"));
        assert!(term_matches("me", "me"));
        assert!(!term_matches("me", "meeting"));
    }

    #[test]
    fn words_of_one_family_match_by_their_stem() {
        assert!(term_matches("mountains", "mountain"));
        assert!(term_matches("running", "runs"));
        assert!(term_matches("studies", "studying"));
        assert!(!term_matches("mountains", "mount"));
    }

    #[test]
    fn snippets_center_on_the_first_match() {
        let line = format!("{} needle {}", "a".repeat(300), "b".repeat(300));
        let cut = snippet(&line, &["needle".to_owned()]);
        assert!(cut.starts_with('…') && cut.ends_with('…'));
        assert!(cut.contains("needle"));
        assert_eq!(cut.chars().count(), SNIPPET_CHARS + 2);
        assert_eq!(snippet("   short line  ", &["x".to_owned()]), "short line");
        let start = format!("needle {}", "b".repeat(300));
        assert!(snippet(&start, &["needle".to_owned()]).starts_with("needle"));
    }

    #[test]
    fn note_names() {
        assert!(is_note_name("a.md"));
        assert!(is_note_name("a.MD"));
        assert!(is_note_name("a.markdown"));
        assert!(is_note_name("a.txt"));
        assert!(!is_note_name("a.png"));
        assert!(!is_note_name("md"));
        assert_eq!(file_stem("x/meeting-notes.md"), "meeting-notes");
        assert_eq!(file_stem(".md"), ".md");
    }
}
