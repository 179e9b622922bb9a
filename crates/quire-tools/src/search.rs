//! Ranking tools for a capability query (searchTools).
//!
//! Words and short phrases fold onto concepts through one vocabulary: the
//! nouns people use for what a tool works on (menu, top bar → `navItem`;
//! to-do list, journal → `note`) and the verbs for what it does (reword,
//! tweak → `update`; scrap, bin → `delete`; clone → `copy`), so "change the
//! menu link" and "updateNavItem" meet on `update` + `navItem`. Words take
//! their plain form first (dropped → drop, photos → photo, copied → copy),
//! then a word of the vocabulary they mean by WordNet (alter → change,
//! written → write; `search_wordnet.rs`, generated), the verb a noun of
//! doing comes from by its Snowball stem (relocation → relocate), or the
//! word one slip of the keyboard away (pubish → publish). A tool's score
//! sums, for each query concept, the strongest place the tool carries it:
//! what it works on and its action (strong), its name, its tags, its search
//! phrases, then its description (weak); a tool that works on none of the
//! things named, or does none of the actions asked, scores lower.
//!
//! Cues of English weigh the query's concepts (`fold`): the verb opening a
//! clause, else the first, is what is asked, not what someone did ("I
//! dropped a photo in uploads, add it"); a question asks to read; a verb
//! after a determiner is a noun ("the edits"); "not" and "without" negate
//! ("shouldn't be visible" unpublishes); a thing named just before another
//! only qualifies it ("the hero picture"), as does what a thing is about or
//! for, and where a change is made once what it changes is named ("the
//! gallery on the about page"); what is changed on a page that is not its
//! setting is its sections' content ("the phone number on the contact
//! page"); a capitalised word inside a sentence, or words in quotes, are a
//! label ("rename Home to Start"); a question about nothing of the site is
//! for the web. No I/O; a query over the whole catalog takes microseconds.
//! With an embedding model, searchTools fuses this ranking with the tools'
//! similarity (`rank_tools`).

#[path = "search_wordnet.rs"]
mod wordnet;

use crate::embed::{Embedder, MIN_SIMILARITY, fuse, normalise, query_vector};
use crate::subject::Subject;
use crate::tool::{Category, Tool};
use quire_core::model::EntityKind;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex};

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
    "did",
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
    "could",
    "should",
    "have",
    "has",
    "had",
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
    "every",
    "each",
    "currently",
    "site",
    "website",
    "s",
    "t",
    "don",
    "doesn",
    "didn",
    "isn",
    "won",
    "ll",
    "re",
    "ve",
    "m",
    "d",
    "here",
    "them",
    "they",
    "their",
    "these",
    "those",
    "he",
    "she",
    "her",
    "his",
    "him",
    "if",
    "or",
    "but",
    "not",
    "no",
    "yet",
    "still",
    "too",
    "very",
    "really",
    "much",
    "more",
    "up",
    "out",
    "off",
    "down",
    "away",
    "over",
    "under",
    "again",
    "will",
    "go",
    "going",
    "got",
    "take",
    "bring",
    "way",
    "thing",
    "things",
    "stuff",
    "bit",
    "okay",
    "ok",
    "hey",
    "hi",
    "thanks",
    "thank",
    "sure",
    "right",
    "well",
    "maybe",
    "anything",
    "something",
    "everything",
    "when",
    "why",
    "whether",
    "all",
];

/// Word or phrase (a few words, each in its plain form) → the concepts it
/// stands for: the one table of the verbs and nouns people use. A word may
/// stand for a thing and an action at once ("trash" is the archive and
/// deleting). Things are named as tools' subjects (`page`, `navItem`,
/// `stockPhoto`); actions are those of [`ACTIONS`]. Stopwords count inside
/// a phrase ("get rid of", "to do").
///
/// `verb … particle` is a phrasal verb whose words may stand apart ("take
/// the FAQ off"). An action marked `?` counts only when the text says no
/// other ("we need a page"); one marked `^` only when the word opens a
/// request ("Draft an article", not "the drafts").
const VOCABULARY: &[(&str, &[&str])] = &[
    // pages
    ("page", &["page"]),
    ("landing", &["page"]),
    ("subpage", &["page"]),
    ("homepage", &["page"]),
    ("home", &["page"]),
    ("tree", &["page"]),
    ("sitemap", &["page"]),
    ("hierarchy", &["page"]),
    ("structure", &["page"]),
    ("structured", &["page"]),
    ("slug", &["page"]),
    ("seo", &["page", "seo"]),
    ("meta", &["page", "seo"]),
    ("metadata", &["page", "seo"]),
    ("indexing", &["page", "seo"]),
    ("index", &["page", "seo"]),
    ("noindex", &["page", "seo"]),
    ("search engine", &["page", "seo"]),
    ("url", &["url"]),
    ("address", &["url"]),
    ("web address", &["url"]),
    ("permalink", &["url", "page"]),
    ("live at", &["url", "?update"]),
    ("child", &["page"]),
    ("children", &["page"]),
    ("parent", &["page"]),
    ("child of", &["page", "move"]),
    ("path", &["url"]),
    // posts
    ("post", &["post"]),
    ("blog", &["post"]),
    ("article", &["post"]),
    ("news", &["post"]),
    ("story", &["post"]),
    ("blogpost", &["post"]),
    ("write up", &["post", "create"]),
    ("writeup", &["post"]),
    ("announcement", &["post"]),
    ("announce", &["post", "create"]),
    ("excerpt", &["post", "field"]),
    ("author", &["post"]),
    ("byline", &["post"]),
    ("cover", &["post", "field"]),
    ("draft", &["draft", "^create"]),
    ("news item", &["post"]),
    ("blog entry", &["post"]),
    ("cover image", &["post", "cover", "field"]),
    ("featured image", &["post", "cover", "field"]),
    // navigation
    ("navigation", &["navItem"]),
    ("nav", &["navItem"]),
    ("menu", &["navItem"]),
    ("link", &["navItem", "^create"]),
    ("header", &["navItem"]),
    ("footer", &["navItem"]),
    ("navbar", &["navItem"]),
    ("submenu", &["navItem"]),
    ("menu item", &["navItem"]),
    ("nav item", &["navItem"]),
    ("top bar", &["navItem"]),
    ("topbar", &["navItem"]),
    ("top navigation", &["navItem"]),
    ("sidebar", &["navItem"]),
    ("breadcrumb", &["navItem"]),
    ("dropdown", &["navItem"]),
    // images
    ("image", &["image"]),
    ("photo", &["image"]),
    ("photograph", &["image"]),
    ("picture", &["image"]),
    ("pic", &["image"]),
    ("media", &["image"]),
    ("img", &["image"]),
    ("graphic", &["image"]),
    ("illustration", &["image"]),
    ("shot", &["image"]),
    ("screenshot", &["image"]),
    ("headshot", &["image"]),
    ("portrait", &["image"]),
    ("thumbnail", &["image"]),
    ("icon", &["image"]),
    ("logo", &["image"]),
    ("png", &["image"]),
    ("jpg", &["image"]),
    ("jpeg", &["image"]),
    ("gif", &["image"]),
    ("webp", &["image"]),
    ("svg", &["image"]),
    ("alt", &["image", "alt", "field"]),
    ("alt text", &["image", "alt", "field"]),
    ("screen reader", &["image", "alt"]),
    ("accessibility", &["image", "alt"]),
    ("accessible", &["image", "alt"]),
    ("upload", &["image", "create"]),
    ("uploaded", &["image"]),
    ("attached", &["image"]),
    ("attachment", &["image"]),
    ("library", &["image"]),
    // sections
    ("section", &["section"]),
    ("block", &["section"]),
    ("component", &["section"]),
    ("module", &["section"]),
    ("hero", &["section"]),
    ("faq", &["section"]),
    ("gallery", &["section"]),
    ("cta", &["section"]),
    ("call to action", &["section"]),
    ("banner", &["section"]),
    ("heading", &["section"]),
    ("headline", &["section"]),
    ("subtitle", &["section"]),
    ("subheading", &["section"]),
    ("intro", &["section"]),
    ("paragraph", &["field"]),
    ("sentence", &["field"]),
    ("title", &["field"]),
    ("description", &["field"]),
    ("caption", &["image", "field"]),
    ("slider", &["section"]),
    ("carousel", &["section"]),
    ("strip", &["section"]),
    ("card", &["section"]),
    ("what s on", &["read", "section"]),
    ("what is on", &["read", "section"]),
    ("button", &["section"]),
    ("form", &["section"]),
    ("table", &["section"]),
    ("pricing table", &["section"]),
    ("question and answer", &["section"]),
    ("questions and answers", &["section"]),
    // section templates
    ("template", &["sectionTemplate"]),
    ("layout", &["sectionTemplate"]),
    ("schema", &["sectionTemplate"]),
    ("field", &["sectionTemplate"]),
    ("type", &["sectionTemplate"]),
    ("kind", &["sectionTemplate"]),
    ("option", &["sectionTemplate"]),
    ("go into", &["sectionTemplate"]),
    ("go in", &["sectionTemplate"]),
    // collection entries
    ("entry", &["entry"]),
    ("item", &["entry"]),
    ("record", &["entry", "^create"]),
    ("collection", &["entry"]),
    ("testimonial", &["entry"]),
    ("quote", &["entry"]),
    ("review", &["entry"]),
    ("product", &["entry"]),
    ("member", &["entry"]),
    ("staff", &["entry"]),
    // the archive
    ("archive", &["archive"]),
    ("archived", &["archive"]),
    ("archive it", &["archive", "delete"]),
    ("archive them", &["archive", "delete"]),
    ("trash", &["archive", "^delete"]),
    ("bin", &["archive", "^delete"]),
    ("trash it", &["delete"]),
    ("bin it", &["delete"]),
    ("trash them", &["delete"]),
    ("bin them", &["delete"]),
    ("in the bin", &["archive"]),
    ("in the trash", &["archive"]),
    ("in the archive", &["archive"]),
    ("deleted", &["archive"]),
    ("deletion", &["archive"]),
    ("recycle", &["archive"]),
    ("removed", &["archive"]),
    ("thrown away", &["archive"]),
    ("trashed", &["archive"]),
    ("binned", &["archive"]),
    ("history", &["archive"]),
    // publishing
    ("publish", &["publish"]),
    ("published", &["publish"]),
    ("live", &["publish", "document"]),
    ("go live", &["publish", "document"]),
    ("push live", &["publish", "document"]),
    ("public", &["document", "?publish"]),
    ("visitor", &["document"]),
    ("visible", &["document", "publish"]),
    ("unpublish", &["unpublish"]),
    ("unpublished", &["unpublish"]),
    ("offline", &["unpublish", "document"]),
    ("take down", &["unpublish"]),
    ("take … down", &["unpublish"]),
    ("take … offline", &["unpublish"]),
    ("off the site", &["unpublish", "document"]),
    ("off the public site", &["unpublish", "document"]),
    ("off the live site", &["unpublish", "document"]),
    ("pull … from", &["unpublish"]),
    ("withdraw", &["unpublish"]),
    ("hide … from", &["unpublish", "document"]),
    ("pull", &["unpublish"]),
    ("discard", &["discard"]),
    ("go back", &["discard"]),
    ("throw away", &["discard", "delete"]),
    ("throw … away", &["discard", "delete"]),
    ("abandon", &["discard"]),
    ("cancel", &["discard"]),
    ("forget", &["discard"]),
    ("give up", &["discard"]),
    ("scrap", &["delete"]),
    ("edits", &["update"]),
    // releases
    ("release", &["release"]),
    ("stage", &["release", "update"]),
    ("staged", &["release"]),
    ("launch", &["release", "^publish"]),
    ("bundle", &["release", "^create"]),
    ("rollout", &["release"]),
    ("together", &["release"]),
    ("ship", &["publish"]),
    ("push", &["^publish"]),
    ("group", &["^create"]),
    ("roll … back", &["revert", "restore"]),
    ("roll back", &["revert", "restore"]),
    ("rollback", &["revert", "restore"]),
    ("revert", &["revert", "restore"]),
    // notes and folders
    ("notebook", &["note"]),
    ("vault", &["vault"]),
    ("in the vault", &["vault", "folder"]),
    ("in my vault", &["vault"]),
    ("markdown", &["note"]),
    ("md", &["note"]),
    ("txt", &["note"]),
    ("file", &["note", "^move"]),
    ("memo", &["note"]),
    ("journal", &["note"]),
    ("diary", &["note"]),
    ("checklist", &["note"]),
    ("todo", &["note"]),
    ("to do", &["note"]),
    ("to do list", &["note"]),
    ("task", &["note"]),
    ("minute", &["note"]),
    ("shopping list", &["note"]),
    ("jot", &["note", "create"]),
    ("take a note", &["note", "create"]),
    ("make a note", &["note", "create"]),
    ("my list", &["note"]),
    ("packing list", &["note"]),
    ("reading list", &["note"]),
    ("wish list", &["note"]),
    ("grocery list", &["note"]),
    ("to my list", &["note", "append"]),
    ("to the list", &["note", "append"]),
    ("to my note", &["note", "append"]),
    ("to the note", &["note", "append"]),
    ("to my to do list", &["note", "append"]),
    ("jot down", &["note", "create"]),
    ("write down", &["note", "create"]),
    ("note down", &["note", "create"]),
    ("tick off", &["note", "update"]),
    ("cross off", &["note", "update"]),
    ("tick … off", &["note", "update"]),
    ("cross … off", &["note", "update"]),
    ("append", &["update", "append"]),
    ("to the end", &["append"]),
    ("line", &["line", "field"]),
    ("folder", &["folder"]),
    ("directory", &["folder"]),
    ("dir", &["folder"]),
    ("subfolder", &["folder"]),
    ("tidy away", &["note", "delete"]),
    ("tidy … away", &["note", "delete"]),
    ("clear out", &["delete"]),
    ("clean up", &["delete"]),
    ("editor", &["open"]),
    ("screen", &["open"]),
    ("on screen", &["open"]),
    ("on my screen", &["open"]),
    ("pull up", &["open"]),
    ("bring up", &["open"]),
    ("pull … up", &["open"]),
    ("bring … up", &["open"]),
    ("open", &["open"]),
    ("mention", &["search"]),
    ("talk about", &["search"]),
    ("grep", &["search"]),
    ("contain", &["search"]),
    ("where did i write", &["search", "note"]),
    ("did i write", &["read", "note"]),
    ("i wrote", &["read", "note"]),
    // the outside world
    ("online", &["external"]),
    ("internet", &["external"]),
    ("web", &["external"]),
    ("outside", &["external"]),
    ("stock", &["stockPhoto"]),
    ("unsplash", &["stockPhoto"]),
    ("pexels", &["stockPhoto"]),
    ("royalty", &["stockPhoto"]),
    ("royalty free", &["stockPhoto"]),
    ("licence", &["stockPhoto"]),
    ("license", &["stockPhoto"]),
    ("photographer", &["stockPhoto"]),
    ("google", &["webResult", "external"]),
    ("bing", &["webResult", "external"]),
    ("research", &["webResult"]),
    ("look up", &["webResult", "read"]),
    ("find out", &["webResult", "read"]),
    ("competitor", &["webResult"]),
    ("web page", &["webPage", "external"]),
    ("webpage", &["webPage", "external"]),
    ("https", &["webPage", "url"]),
    ("http", &["webPage", "url"]),
    ("www", &["webPage", "url"]),
    ("this link", &["webPage", "url"]),
    ("that link", &["webPage", "url"]),
    ("scrape", &["webPage", "read"]),
    ("summarise", &["webPage", "read"]),
    ("summarize", &["webPage", "read"]),
    ("summary", &["field"]),
    ("gist", &["webPage", "read"]),
    ("main point", &["webPage", "read"]),
    ("api", &["httpResponse"]),
    ("endpoint", &["httpResponse"]),
    ("json", &["httpResponse"]),
    ("webhook", &["httpResponse", "send"]),
    ("request", &["httpResponse"]),
    ("send", &["send"]),
    ("notify", &["send"]),
    ("submit", &["send"]),
    ("ping", &["send"]),
    ("trigger", &["send"]),
    ("fire", &["send"]),
    ("capability", &["tool"]),
    ("discover", &["tool"]),
    // reading
    ("get", &["read"]),
    ("find", &["read", "search"]),
    ("list", &["read"]),
    ("show", &["read"]),
    ("read", &["read"]),
    ("fetch", &["read"]),
    ("search", &["read", "search"]),
    ("look", &["read"]),
    ("look for", &["read", "search"]),
    ("look through", &["read", "search"]),
    ("go through", &["read", "search"]),
    ("view", &["read"]),
    ("see", &["read"]),
    ("browse", &["read"]),
    ("which", &["read"]),
    ("what", &["read"]),
    ("where", &["read"]),
    ("who", &["read"]),
    ("display", &["read"]),
    ("lookup", &["read"]),
    ("check", &["read"]),
    ("inspect", &["read"]),
    ("exist", &["read"]),
    ("available", &["read"]),
    ("latest", &["read"]),
    ("overview", &["read"]),
    ("tell", &["?read"]),
    ("tell me", &["read"]),
    ("tell us", &["read"]),
    ("do we have", &["read"]),
    ("have we got", &["read"]),
    ("is there", &["read"]),
    // creating
    ("new", &["?create"]),
    ("need", &["?create"]),
    ("want", &["?create"]),
    ("like", &["?create"]),
    ("stick", &["create"]),
    ("set … up", &["create"]),
    ("spin … up", &["create"]),
    ("create", &["create"]),
    ("add", &["create"]),
    ("make", &["create"]),
    ("write", &["create"]),
    ("insert", &["create"]),
    ("compose", &["create"]),
    ("register", &["create"]),
    ("put", &["create"]),
    ("build", &["create"]),
    ("start", &["create"]),
    ("set up", &["create"]),
    ("spin up", &["create"]),
    ("put together", &["create"]),
    ("prepare", &["create"]),
    ("generate", &["create"]),
    ("save", &["create"]),
    ("store", &["create"]),
    // changing
    ("update", &["update"]),
    ("edit", &["update"]),
    ("change", &["update"]),
    ("modify", &["update"]),
    ("rename", &["update", "move"]),
    ("set", &["update"]),
    ("move", &["update", "move"]),
    ("relocate", &["update", "move"]),
    ("reorder", &["update", "move"]),
    ("attach", &["update"]),
    ("replace", &["update"]),
    ("hide", &["update"]),
    ("fix", &["update"]),
    ("tweak", &["update"]),
    ("adjust", &["update"]),
    ("swap", &["update"]),
    ("retitle", &["update"]),
    ("tag", &["update", "field"]),
    ("tagged", &["field"]),
    ("describe", &["update"]),
    ("sort", &["update"]),
    ("reposition", &["update"]),
    ("show/hide", &["update"]),
    ("correct", &["update"]),
    ("reword", &["update"]),
    ("rewrite", &["update"]),
    ("rephrase", &["update"]),
    ("shorten", &["update"]),
    ("trim", &["update"]),
    ("lengthen", &["update"]),
    ("improve", &["update"]),
    ("polish", &["update"]),
    ("proofread", &["update"]),
    ("point", &["update"]),
    ("nest", &["update"]),
    ("categorise", &["update"]),
    ("categorize", &["update"]),
    ("switch", &["update"]),
    ("toggle", &["update"]),
    ("typo", &["update"]),
    ("wrong", &["?update"]),
    ("fill in", &["update", "propose"]),
    ("give", &["?update"]),
    ("make … say", &["update"]),
    ("include", &["update"]),
    ("exclude", &["update"]),
    ("stop", &["update"]),
    // removing
    ("delete", &["delete"]),
    ("remove", &["delete"]),
    ("drop", &["delete"]),
    ("destroy", &["delete"]),
    ("erase", &["delete"]),
    ("rid", &["delete"]),
    ("get rid", &["delete"]),
    ("takedown", &["delete"]),
    ("ditch", &["delete"]),
    ("kill", &["delete"]),
    ("nuke", &["delete"]),
    ("purge", &["delete"]),
    ("lose", &["delete"]),
    ("take out", &["delete"]),
    ("take off", &["delete"]),
    ("take … off", &["delete"]),
    ("take … out", &["delete"]),
    ("get … out", &["delete"]),
    ("get … off", &["delete"]),
    ("drop … onto", &["create"]),
    ("drop … into", &["create"]),
    ("don t need", &["delete"]),
    ("doesn t need", &["delete"]),
    ("no longer need", &["delete"]),
    ("can go", &["delete"]),
    ("should go", &["delete"]),
    ("must go", &["delete"]),
    ("has to go", &["delete"]),
    // bringing back, copying, importing
    ("restore", &["restore"]),
    ("undelete", &["restore"]),
    ("recover", &["restore"]),
    ("undo", &["restore", "revert"]),
    ("unarchive", &["restore"]),
    ("retrieve", &["restore"]),
    ("bring back", &["restore"]),
    ("get back", &["restore"]),
    ("put back", &["restore"]),
    ("bring … back", &["restore"]),
    ("get … back", &["restore"]),
    ("put … back", &["restore"]),
    ("make a copy", &["copy"]),
    ("make a duplicate", &["copy"]),
    ("bring … into", &["import"]),
    ("copy", &["copy"]),
    ("duplicate", &["copy"]),
    ("clone", &["copy"]),
    ("import", &["import"]),
    ("download", &["import"]),
    // what is wrong with a thing asks for a change ("the tagline feels dated")
    ("outdated", &["?update"]),
    ("out of date", &["?update"]),
    ("dated", &["?update"]),
    ("stale", &["?update"]),
    ("too long", &["?update"]),
    ("too short", &["?update"]),
    ("sloppy", &["?update"]),
    ("incorrect", &["?update"]),
    ("misspelled", &["?update"]),
    ("misspelt", &["?update"]),
    ("spelling", &["?update"]),
    ("instead", &["update"]),
    ("rather than", &["update"]),
    ("from now on", &["update"]),
    ("freshen", &["update"]),
    ("tone … down", &["update"]),
    ("tone down", &["update"]),
    ("bump", &["update"]),
    ("credit", &["update"]),
    ("mark", &["update"]),
    ("go up", &["update"]),
    ("should say", &["update"]),
    ("should mention", &["update"]),
    ("lock", &["update"]),
    ("protect", &["update"]),
    ("sit", &["?update"]),
    ("live under", &["page", "?update"]),
    ("live in the", &[]),
    ("live in my", &[]),
    ("top level", &["page", "move"]),
    ("can t find", &[]),
    ("can t tell", &["?update"]),
    // removing, in other words
    ("disappear", &["delete"]),
    ("clean out", &["delete"]),
    ("clean … out", &["delete"]),
    ("clear … out", &["delete"]),
    ("clear away", &["delete"]),
    ("clear … away", &["delete"]),
    ("put … away", &["delete"]),
    ("done with", &["delete"]),
    ("finished with", &["delete"]),
    ("strip … off", &["delete"]),
    ("strip … out", &["delete"]),
    ("unlist", &["unpublish"]),
    ("delist", &["unpublish"]),
    ("call off", &["discard"]),
    ("call … off", &["discard"]),
    // wanting a thing back
    ("need … back", &["restore"]),
    ("want … back", &["restore"]),
    ("have … back", &["restore"]),
    ("didn t mean to", &["restore"]),
    ("by mistake", &["restore"]),
    ("accidentally", &["restore"]),
    // going public
    ("go public", &["publish", "document"]),
    ("go out", &["publish"]),
    ("let … see", &["publish", "document"]),
    ("the world", &["document"]),
    ("send … live", &["publish"]),
    ("go ahead", &["publish"]),
    ("flip the switch", &["publish"]),
    // changes that go out together
    ("at the same time", &["release"]),
    ("in one go", &["release"]),
    ("all at once", &["release"]),
    ("batch", &["release", "^create"]),
    ("campaign", &["release"]),
    ("lined up", &["release"]),
    ("line up", &["release", "create"]),
    ("line … up", &["release", "create"]),
    ("queue", &["release"]),
    ("queued", &["release"]),
    ("schedule", &["release", "^create"]),
    ("scheduled", &["release"]),
    ("plan", &["?create"]),
    // notes and files
    ("as done", &["note", "update"]),
    ("tick", &["note", "update"]),
    ("strike", &["update"]),
    ("filename", &["note", "move"]),
    ("file name", &["note", "move"]),
    ("keep", &["?create"]),
    ("keep … out", &["update"]),
    ("keep a note", &["note", "create"]),
    ("starting point", &["copy"]),
    ("second copy", &["copy"]),
    ("based on", &["copy"]),
    // what a page says, and what shows it
    ("tagline", &["section"]),
    ("strapline", &["section"]),
    ("slogan", &["section"]),
    ("wording", &["field"]),
    ("the copy", &["section"]),
    ("our copy", &["section"]),
    ("copy out", &["read"]),
    ("opening line", &["section"]),
    ("map", &["section"]),
    ("timeline", &["section"]),
    ("video", &["section"]),
    ("feature", &["section"]),
    ("row", &["section"]),
    ("countdown", &["section"]),
    ("background", &["section"]),
    ("building block", &["section"]),
    ("could use", &["create"]),
    // a page's settings, named by where they show
    ("share image", &["page", "seo"]),
    ("social", &["page", "seo"]),
    ("preview text", &["page", "seo"]),
    ("search result", &["page", "seo"]),
    ("browser tab", &["page", "seo"]),
    // posts, collections and the outside world
    ("piece", &["post"]),
    ("pen", &["create"]),
    ("category", &["field"]),
    ("free to use", &["stockPhoto"]),
    ("stock photo", &["stockPhoto"]),
    ("stock picture", &["stockPhoto"]),
    ("stock image", &["stockPhoto"]),
    ("free stock", &["stockPhoto"]),
    ("never mind", &["discard"]),
    ("unpublished change", &["draft", "discard"]),
    ("unsaved", &["draft"]),
    ("to the bottom", &["append"]),
    ("free photo", &["stockPhoto"]),
    ("free picture", &["stockPhoto"]),
    ("free image", &["stockPhoto"]),
    ("source", &["webResult"]),
    ("key point", &["webPage", "read"]),
    ("health check", &["httpResponse"]),
    // a page's settings, shared
    ("preview card", &["page", "seo"]),
    ("social card", &["page", "seo"]),
    ("share card", &["page", "seo"]),
    ("link preview", &["page", "seo"]),
    ("open graph", &["page", "seo"]),
    ("in google", &["page", "seo"]),
    ("on google", &["page", "seo"]),
    ("google to find", &["page", "seo"]),
    ("site map", &["page"]),
    ("somewhere on the site", &["page"]),
    ("place on the site", &["page"]),
    ("room on the site", &["page"]),
    ("show up", &[]),
    ("shipping", &[]),
    ("optimise", &["update"]),
    ("optimize", &["update"]),
    // asking to be told
    ("rundown", &["read"]),
    ("give me", &["?read"]),
    ("remind me", &["read"]),
    // making, in other words
    ("put up", &["create"]),
    ("whip up", &["create"]),
    ("knock up", &["create"]),
    ("draw up", &["create"]),
    ("throw together", &["create"]),
    ("come up with", &["create"]),
    ("embed", &["section", "create"]),
    ("write about", &["post", "create"]),
    ("blog about", &["post", "create"]),
    // changing, in other words
    ("refresh", &["update"]),
    ("redo", &["update"]),
    ("rework", &["update"]),
    ("revamp", &["update"]),
    ("overhaul", &["update"]),
    ("spruce", &["update"]),
    ("simplify", &["update"]),
    ("clarify", &["update"]),
    ("cut … down", &["update"]),
    ("cut down", &["update"]),
    ("broken", &["?update"]),
    ("dead", &["?update"]),
    ("mistake", &["?update"]),
    ("inaccurate", &["?update"]),
    ("weird", &["?update"]),
    ("boring", &["?update"]),
    ("bland", &["?update"]),
    ("dull", &["?update"]),
    ("jazz … up", &["update"]),
    ("jazz up", &["update"]),
    ("404", &["?update"]),
    ("should be", &["?update"]),
    ("should be able", &[]),
    ("live version", &["discard", "document"]),
    ("live one", &["discard", "document"]),
    ("published version", &["discard", "document"]),
    ("published one", &["discard", "document"]),
    ("get … up", &["create"]),
    ("pop", &["^create"]),
    ("could do with", &["?create"]),
    ("need work", &["?update"]),
    ("need attention", &["?update"]),
    ("slot", &["^create"]),
    ("can go public", &["publish", "document"]),
    ("can go live", &["publish", "document"]),
    ("should go live", &["publish", "document"]),
    ("take … away", &["delete"]),
    ("take away", &["delete"]),
    ("turn … into", &["create"]),
    ("label", &["navItem", "field", "^update"]),
    // more ways to change, make, remove and bring back
    ("expand", &["update"]),
    ("extend", &["update"]),
    ("beef up", &["update"]),
    ("flesh out", &["update"]),
    ("flesh … out", &["update"]),
    ("elaborate", &["update"]),
    ("soften", &["update"]),
    ("sharpen", &["update"]),
    ("streamline", &["update"]),
    ("highlight", &["update"]),
    ("unhide", &["update"]),
    ("enable", &["update"]),
    ("disable", &["update"]),
    ("turn on", &["update"]),
    ("turn off", &["update"]),
    ("turn … on", &["update"]),
    ("turn … off", &["update"]),
    ("pin", &["update"]),
    ("translate", &["update"]),
    ("localise", &["update"]),
    ("localize", &["update"]),
    ("relabel", &["update"]),
    ("rearrange", &["update", "move"]),
    ("reshuffle", &["update", "move"]),
    ("reorganise", &["update", "move"]),
    ("reorganize", &["update", "move"]),
    ("postpone", &["update"]),
    ("delay", &["update"]),
    ("begin", &["create"]),
    ("produce", &["create"]),
    ("retire", &["delete"]),
    ("sunset", &["delete"]),
    ("decommission", &["delete"]),
    ("deprecate", &["delete"]),
    ("nix", &["delete"]),
    ("eliminate", &["delete"]),
    ("reinstate", &["restore"]),
    ("resurrect", &["restore"]),
    ("revive", &["restore"]),
    ("republish", &["publish"]),
    ("deploy", &["publish"]),
    ("private", &["document", "?unpublish"]),
    ("invisible", &["document", "?unpublish"]),
    ("grab", &["read"]),
    ("log", &["note", "^create"]),
    // more names of things, as people call them
    ("privacy policy", &["page"]),
    ("terms and conditions", &["page"]),
    ("terms of service", &["page"]),
    ("cookie policy", &["page"]),
    ("imprint", &["page"]),
    ("impressum", &["page"]),
    ("legal notice", &["page"]),
    ("microsite", &["page"]),
    ("widget", &["section"]),
    ("panel", &["section"]),
    ("tile", &["section"]),
    ("teaser", &["section"]),
    ("callout", &["section"]),
    ("slideshow", &["section"]),
    ("iframe", &["section"]),
    ("popup", &["section"]),
    ("modal", &["section"]),
    ("bullet", &["section"]),
    ("announcement bar", &["section"]),
    ("selfie", &["image"]),
    ("mockup", &["image"]),
    ("asset", &["image"]),
    ("imagery", &["image"]),
    ("listicle", &["post"]),
    ("recap", &["post"]),
    ("roundup", &["post"]),
    ("case study", &["post"]),
    ("standfirst", &["post", "field"]),
    ("lede", &["post", "field"]),
    ("hamburger", &["navItem"]),
    ("quick link", &["navItem"]),
    ("social link", &["navItem"]),
    ("social icon", &["navItem"]),
    ("listing", &["entry"]),
    ("reminder", &["note"]),
    ("scratchpad", &["note"]),
    ("notepad", &["note"]),
    ("agenda", &["note"]),
    ("brain dump", &["note"]),
    ("changeset", &["release"]),
    ("shutterstock", &["stockPhoto"]),
    ("getty", &["stockPhoto"]),
    ("istock", &["stockPhoto"]),
    ("wikipedia", &["webResult", "external"]),
    ("slack", &["httpResponse", "send"]),
    ("zapier", &["httpResponse", "send"]),
    ("crm", &["httpResponse"]),
    ("catalogue", &["entry"]),
    ("catalog", &["entry"]),
    ("let s have", &["create"]),
    ("can we have", &["create"]),
    ("can we get", &["create"]),
    ("could we get", &["create"]),
    ("could we have", &["create"]),
    ("would look", &["?create"]),
    ("would be nice", &["?create"]),
    ("would be good", &["?create"]),
    ("would be great", &["?create"]),
    ("somewhere in my", &["folder"]),
    ("place in my", &["folder"]),
    ("space in my", &["folder"]),
    ("google show", &["page", "seo"]),
    ("call it", &["update"]),
    ("call them", &["update"]),
    ("pop … open", &["open"]),
    ("which note", &["note", "search"]),
    ("strange", &["?update"]),
    ("ugly", &["?update"]),
    ("awful", &["?update"]),
    ("terrible", &["?update"]),
    ("confusing", &["?update"]),
    ("clunky", &["?update"]),
    ("messy", &["?update"]),
    ("is now", &["?update"]),
    ("are now", &["?update"]),
    ("now cost", &["?update"]),
    // removing, in other words
    ("wipe", &["delete"]),
    ("cut", &["^delete"]),
    ("axe", &["delete"]),
    ("chuck", &["delete"]),
    ("zap", &["delete"]),
    ("get shot of", &["delete"]),
    ("get shot", &["delete"]),
    ("come out", &["delete"]),
    ("pointless", &["?delete"]),
    ("redundant", &["?delete"]),
    ("obsolete", &["?delete"]),
    ("unnecessary", &["?delete"]),
    ("irrelevant", &["?delete"]),
    ("no longer relevant", &["delete"]),
    ("anymore", &["?delete"]),
    ("any more", &["?delete"]),
    // publishing and giving drafts up
    ("push … out", &["publish"]),
    ("off the website", &["unpublish", "document"]),
    ("be on the site", &["document", "?publish"]),
    ("be on the website", &["document", "?publish"]),
    ("throw out", &["discard", "delete"]),
    ("throw … out", &["discard", "delete"]),
    ("reset", &["discard"]),
    // what sections hold
    ("grid", &["section"]),
    ("accordion", &["section"]),
    ("column", &["section"]),
    ("divider", &["section"]),
    ("spacer", &["section"]),
    ("youtube", &["section"]),
    ("vimeo", &["section"]),
    ("signup", &["section"]),
    ("opening", &[]),
    // images
    ("snap", &["image"]),
    ("artwork", &["image"]),
    ("diagram", &["image"]),
    ("visual", &["image"]),
    ("poster", &["image"]),
    ("infographic", &["image"]),
    ("avatar", &["image"]),
    ("favicon", &["image"]),
    ("blind", &["image", "alt"]),
    ("cover picture", &["post", "cover", "field"]),
    ("cover photo", &["post", "cover", "field"]),
    // posts
    ("press release", &["post"]),
    ("reader", &["post"]),
    // navigation
    ("reachable", &["navItem", "?create"]),
    ("get to", &["navItem", "?create"]),
    ("bottom of every page", &["navItem"]),
    ("top of every page", &["navItem"]),
    // what collections list
    ("event", &["entry"]),
    ("workshop", &["entry"]),
    ("webinar", &["entry"]),
    ("course", &["entry"]),
    ("upcoming", &["entry"]),
    ("head of", &["entry"]),
    ("director", &["entry"]),
    ("manager", &["entry"]),
    ("designer", &["entry"]),
    ("developer", &["entry"]),
    ("engineer", &["entry"]),
    ("intern", &["entry"]),
    ("founder", &["entry"]),
    ("ceo", &["entry"]),
    ("meetup", &["entry"]),
    ("job", &["entry"]),
    ("vacancy", &["entry"]),
    ("profile", &["entry"]),
    ("bio", &["entry"]),
    ("hire", &["entry"]),
    ("team", &["entry"]),
    ("team list", &["entry"]),
    ("staff list", &["entry"]),
    ("partner", &["entry"]),
    ("sponsor", &["entry"]),
    ("speaker", &["entry"]),
    // the site's assistants, what they are told and who may use them
    ("agent", &["agent"]),
    ("assistant", &["agent"]),
    ("bot", &["agent"]),
    ("chatbot", &["agent"]),
    ("ai", &["agent"]),
    ("ai helper", &["agent"]),
    ("helper", &["agent"]),
    ("copilot", &["agent"]),
    ("prompt", &["agent"]),
    ("system prompt", &["agent"]),
    ("instruction", &["agent"]),
    ("chat with", &["agent"]),
    ("talk to", &["agent"]),
    ("deactivate", &["delete"]),
    ("switch off", &["unpublish", "delete"]),
    ("switch … off", &["unpublish", "delete"]),
    ("take back", &["restore", "revert"]),
    ("take … back", &["restore", "revert"]),
    ("shut … down", &["delete"]),
    ("shut down", &["delete"]),
    // what agents write by: voice, style, audience
    ("context", &["context"]),
    ("voice", &["context"]),
    ("tone", &["context"]),
    ("tone of voice", &["context"]),
    ("brand voice", &["context"]),
    ("brand", &["context"]),
    ("brand guide", &["context"]),
    ("style", &["context"]),
    ("style guide", &["context"]),
    ("style sheet", &["context"]),
    ("house style", &["context"]),
    ("guideline", &["context"]),
    ("guide", &["context"]),
    ("audience", &["context"]),
    ("glossary", &["context"]),
    ("persona", &["context"]),
    ("sound", &["context"]),
    ("write for", &["context"]),
    ("writing for", &["context"]),
    // work saved by one session and picked up by another
    ("workspace", &["workspace"]),
    ("session", &["workspace"]),
    ("progress", &["workspace"]),
    ("in progress", &["workspace"]),
    ("unfinished", &["workspace"]),
    ("work", &["workspace"]),
    ("so far", &["workspace"]),
    ("where we got to", &["workspace"]),
    ("where we are", &["workspace"]),
    ("where we stopped", &["workspace"]),
    ("where i was", &["workspace"]),
    ("what i was doing", &["workspace"]),
    ("working on", &["workspace"]),
    ("left off", &["workspace", "resume"]),
    ("where were we", &["workspace", "resume"]),
    ("park", &["workspace", "create"]),
    ("parked", &["workspace"]),
    ("stash", &["workspace", "create"]),
    ("bookmark", &["workspace", "create"]),
    ("remember", &["create"]),
    ("resume", &["resume"]),
    ("load", &["resume"]),
    ("continue", &["resume"]),
    ("carry on", &["resume"]),
    ("keep going", &["resume"]),
    ("going again", &["resume"]),
    ("pick up", &["resume"]),
    ("pick … up", &["resume"]),
    // the form the person has on screen, and values proposed into it
    ("this form", &["form"]),
    ("the form", &["form"]),
    ("in the form", &["form"]),
    ("box", &["form"]),
    ("this screen", &["form"]),
    ("looking at", &["form"]),
    ("got open", &["form"]),
    ("have open", &["form"]),
    ("propose", &["propose"]),
    ("suggest", &["propose"]),
    ("suggested", &["propose"]),
    ("prefill", &["propose", "form"]),
    ("fill", &["propose", "update"]),
    ("fill out", &["propose", "update"]),
    // what a collection's entries carry: what is for sale
    ("sold out", &["entry", "?delete"]),
    ("sell", &["entry", "?create"]),
    ("stockist", &["entry"]),
    // notes
    ("note", &["note", "^create"]),
    ("httpget", &["httpResponse", "read"]),
    ("httppost", &["httpResponse", "send"]),
];

/// The concepts that name what a tool works on.
const ENTITIES: &[&str] = &[
    "page",
    "post",
    "navItem",
    "image",
    "section",
    "sectionTemplate",
    "entry",
    "archive",
    "note",
    "folder",
    "release",
    "document",
    "stockPhoto",
    "webResult",
    "webPage",
    "httpResponse",
    "external",
    "agent",
    "context",
    "workspace",
    "form",
];

/// Words that open a question: reading is asked, not a change.
const QUESTIONS: &[&str] =
    &["is", "are", "do", "does", "did", "have", "has", "what", "which", "who", "where", "when", "how", "any"];

/// Words that open a request phrased as a question ("can you add …?").
const REQUESTS: &[&str] = &["can", "could", "would", "will", "please"];

/// Words said before a request ("please, can you …").
const POLITE: &[&str] = &[
    "please", "can", "could", "would", "you", "i", "want", "to", "let", "lets", "s", "us", "just", "now", "ok", "okay",
    "hey", "hi", "also", "then", "quickly",
];

/// Names a capitalised word keeps the meaning of.
const PROPER: &[&str] = &["unsplash", "pexels", "google", "bing", "markdown", "i"];

/// Words that may stand between a preposition and its noun.
const DETERMINERS: &[&str] = &["the", "a", "an", "our", "my", "your", "this", "that", "these", "those", "its", "their"];

/// Words that may stand before a noun without naming a thing.
const ADJECTIVES: &[&str] = &[
    "new", "old", "main", "next", "last", "first", "whole", "quick", "short", "long", "big", "small", "little", "brief",
];

/// Nouns that name a record of any kind: after another thing's name, that
/// thing is what is meant ("an image record").
const GENERIC: &[&str] = &["item", "record", "entry", "object"];

/// The concepts that say what to do.
const ACTIONS: &[&str] = &[
    "read",
    "create",
    "update",
    "delete",
    "restore",
    "move",
    "copy",
    "open",
    "search",
    "publish",
    "unpublish",
    "discard",
    "revert",
    "import",
    "send",
    "resume",
    "propose",
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
        ("publish", "publish"),
        ("unpublish", "unpublish"),
        ("discard", "discard"),
        ("revert", "revert"),
        ("read", "read"),
        ("write", "create"),
        ("list", "read"),
        ("move", "move"),
        ("copy", "copy"),
        ("archive", "delete"),
        ("open", "open"),
        ("browse", "read"),
        ("import", "import"),
        ("fetch", "read"),
        ("httpGet", "read"),
        ("httpPost", "send"),
        ("save", "create"),
        ("load", "resume"),
        ("propose", "propose"),
    ] {
        if name.starts_with(prefix) {
            return action;
        }
    }
    "other"
}

/// The vocabulary by key, and every word its keys use.
struct Vocabulary {
    concepts: HashMap<&'static str, &'static [&'static str]>,
    /// Phrasal verbs whose words may stand apart ("take the FAQ off"): first
    /// word → (second word, concepts).
    split: HashMap<&'static str, Vec<(&'static str, &'static [&'static str])>>,
    words: HashSet<&'static str>,
    longest: usize,
    /// Each long word of the vocabulary with one letter left out (not among
    /// its last two) → that word; `None` where two words share the form.
    slips: HashMap<String, Option<&'static str>>,
    /// Words the vocabulary does not say → the word of it they mean
    /// ("alter" → change, "removal" → remove, "written" → write), from
    /// WordNet (`search_wordnet.rs`).
    aliases: HashMap<&'static str, &'static str>,
    /// Each word's stem (Snowball English) → the shortest word of the
    /// vocabulary with that stem, for longer words of the same family
    /// ("relocation" meets relocate).
    stems: HashMap<String, &'static str>,
}

/// The shortest word a changed letter is read as a slip in (catagory →
/// category; shorter, a changed letter makes other words: working,
/// wording).
const MIN_CHANGED_LEN: usize = 8;

/// `word` with its `i`th byte unknown (ASCII words only).
fn changed(word: &str, i: usize) -> String {
    let mut w = String::with_capacity(word.len());
    w.push_str(&word[..i]);
    w.push('?');
    w.push_str(&word[i + 1..]);
    w
}

/// The shortest word a slip of the keyboard is looked for in.
const MIN_SLIP_LEN: usize = 5;

/// `word` without its `i`th byte (ASCII words only).
fn without(word: &str, i: usize) -> String {
    let mut w = String::with_capacity(word.len());
    w.push_str(&word[..i]);
    w.push_str(&word[i + 1..]);
    w
}

static VOCAB: LazyLock<Vocabulary> = LazyLock::new(|| {
    let mut concepts = HashMap::new();
    let mut split: HashMap<_, Vec<_>> = HashMap::new();
    for &(key, cs) in VOCABULARY {
        match key.split_once(" … ") {
            Some((verb, particle)) => split.entry(verb).or_default().push((particle, cs)),
            None => {
                concepts.insert(key, cs);
            }
        }
    }
    let words: HashSet<&'static str> =
        VOCABULARY.iter().flat_map(|(k, _)| k.split(' ')).filter(|w| *w != "…").collect();
    let longest = VOCABULARY.iter().map(|(k, _)| k.split(' ').count()).max().unwrap_or(1);
    let mut slips: HashMap<String, Option<&'static str>> = HashMap::new();
    for &w in &words {
        if w.len() > MIN_SLIP_LEN && w.bytes().all(|b| b.is_ascii_lowercase()) {
            for i in 0..w.len() - 2 {
                slips.entry(without(w, i)).and_modify(|e| *e = e.filter(|known| *known == w)).or_insert(Some(w));
                if w.len() >= MIN_CHANGED_LEN {
                    slips.entry(changed(w, i)).and_modify(|e| *e = e.filter(|known| *known == w)).or_insert(Some(w));
                }
            }
        }
    }
    let aliases: HashMap<&'static str, &'static str> =
        wordnet::SYNONYMS.iter().chain(wordnet::IRREGULAR).copied().collect();
    let mut stems: HashMap<String, &'static str> = HashMap::new();
    for &w in &words {
        if w.len() >= MIN_STEM_LEN && w.bytes().all(|b| b.is_ascii_lowercase()) && !STOPWORDS.contains(&w) {
            let e = stems.entry(stem(w)).or_insert(w);
            if w.len() < e.len() {
                *e = w;
            }
        }
    }
    Vocabulary { concepts, split, words, longest, slips, aliases, stems }
});

/// The shortest word whose stem is looked up.
const MIN_STEM_LEN: usize = 4;

/// A word's stem, Snowball's English stemmer (as the notes' search).
fn stem(word: &str) -> String {
    static STEMMER: LazyLock<rust_stemmers::Stemmer> =
        LazyLock::new(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English));
    STEMMER.stem(word).into_owned()
}

/// The word of the vocabulary `word` is one slip of the keyboard from (a
/// letter left out or added, or two swapped, not among the last two, whose
/// changes are most often a word's ending): "pubish" → publish. A letter
/// changed is a slip only in a long word: in a short one it makes other
/// words (working, wording).
fn slip(word: &str) -> Option<&'static str> {
    if word.len() < MIN_SLIP_LEN || !word.bytes().all(|b| b.is_ascii_lowercase()) || STOPWORDS.contains(&word) {
        return None;
    }
    if let Some(&Some(w)) = VOCAB.slips.get(word) {
        return Some(w);
    }
    if word.len() >= MIN_CHANGED_LEN
        && let Some(w) = (0..word.len() - 2).find_map(|i| VOCAB.slips.get(&changed(word, i)).copied().flatten())
    {
        return Some(w);
    }
    let known = |w: &str| VOCAB.words.get(w).copied().filter(|w| w.len() >= MIN_SLIP_LEN);
    (0..word.len() - 2).find_map(|i| {
        let mut swapped = word.as_bytes().to_vec();
        swapped.swap(i, i + 1);
        known(&without(word, i)).or_else(|| std::str::from_utf8(&swapped).ok().and_then(known))
    })
}

/// A word's plain form: itself when the vocabulary knows it, else the
/// vocabulary's word for it (alter → change), else the first of its shorter
/// forms it knows (reworded → reword, dropping → drop, stories → story,
/// copied → copy), else a shorter word of the vocabulary of the same stem
/// (relocation → relocate; not a doer, reviewer → review), else without a
/// plural `s`.
fn plain(word: &str) -> String {
    let known = |w: &str| VOCAB.words.contains(w);
    if known(word) || word.len() <= 3 {
        return word.to_string();
    }
    if let Some(w) = VOCAB.aliases.get(word) {
        return w.to_string();
    }
    let mut candidates: Vec<String> = Vec::with_capacity(6);
    if let Some(s) = word.strip_suffix("ies").or_else(|| word.strip_suffix("ied")) {
        candidates.push(format!("{s}y"));
    }
    for suffix in ["es", "s", "ing", "ed", "d"] {
        if let Some(s) = word.strip_suffix(suffix) {
            candidates.push(s.to_string());
            if suffix == "ing" {
                candidates.push(format!("{s}e"));
            }
            // dropped → drop, scrapping → scrap
            let b = s.as_bytes();
            if (suffix == "ing" || suffix == "ed") && b.len() > 2 && b[b.len() - 1] == b[b.len() - 2] {
                candidates.push(s[..s.len() - 1].to_string());
            }
        }
    }
    if let Some(c) = candidates.iter().find(|c| known(c)) {
        return c.clone();
    }
    if let Some(w) = candidates.iter().find_map(|c| VOCAB.aliases.get(c.as_str())) {
        return w.to_string();
    }
    if let Some(w) = family(word) {
        return w.to_string();
    }
    if let Some(w) = slip(word) {
        return w.to_string();
    }
    match word.strip_suffix('s') {
        Some(s) if !s.ends_with('s') && !s.ends_with('u') && !s.ends_with('i') => s.to_string(),
        _ => word.to_string(),
    }
}

/// The word of the vocabulary a longer word of its family names, when it is
/// the doing of an action (relocation → relocate, improvement → improve);
/// not other relatives (importance is not importing, production no
/// product, optional no option).
fn family(word: &str) -> Option<&'static str> {
    if !["ion", "ions", "ment", "ments"].iter().any(|end| word.ends_with(end)) || word.len() < MIN_STEM_LEN {
        return None;
    }
    let w = *VOCAB.stems.get(&stem(word))?;
    let acts = VOCAB.concepts.get(w).is_some_and(|cs| cs.iter().any(|c| is_action(c.trim_start_matches(['?', '^']))));
    (w.len() < word.len() && acts).then_some(w)
}

/// Whether a whitespace-separated token is a web address.
fn is_address(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_alphanumeric());
    t.contains("://")
        || t.starts_with("www.")
        || t.split_once('/').is_some_and(|(host, _)| {
            host.rsplit_once('.').is_some_and(|(name, tld)| {
                !name.is_empty() && (2..=6).contains(&tld.len()) && tld.chars().all(|c| c.is_ascii_alphabetic())
            })
        })
}

/// The words of a text (see [`words`]).
struct Text {
    /// Lower-case words.
    words: Vec<String>,
    /// Whether each is a name, a label.
    names: Vec<bool>,
    /// Whether each opens a clause: the first, or one after `,` `;` `:` `.`
    /// `!` `?` or a dash.
    clause: Vec<bool>,
}

/// The lower-case words of a text, camelCase split (updateNavItem → update
/// nav item), each web address one word `https`, each path (`/team`)
/// `path` and the methods `GET` and `POST` `httpget` and `httppost`; which
/// are names: a capitalised word inside a sentence ("rename Home to
/// Start") or words in quotes are a label, not the thing their words name;
/// and which open a clause.
fn words(text: &str) -> Text {
    let mut out = Vec::new();
    let mut names = Vec::new();
    let mut clause = Vec::new();
    let mut opens = true;
    let mut after_stop = true;
    let mut quoted = false;
    let mut quotes = Vec::new();
    for token in text.split_whitespace() {
        quoted |= token.starts_with(['\'', '"', '‘', '“']);
        let starts = std::mem::replace(&mut opens, token.ends_with(['.', '!', '?', ':']));
        let fresh = std::mem::replace(
            &mut after_stop,
            token.ends_with(['.', '!', '?', ':', ',', ';']) || matches!(token, "-" | "–" | "—"),
        );
        let before = out.len();
        let bare = token.trim_matches(|c: char| !c.is_alphanumeric());
        if is_address(token) {
            out.push("https".to_string());
            // an address of an API says so
            let t = token.to_lowercase();
            if t.contains("://api.") || t.starts_with("api.") || t.contains("/api/") || t.contains(".json") {
                out.push("api".to_string());
            }
        } else if token.starts_with('/') && token.chars().nth(1).is_some_and(char::is_alphanumeric) {
            out.push("path".to_string());
        } else if token.contains(['£', '$', '€']) && token.chars().any(|c| c.is_ascii_digit()) {
            // "£38" is a price
            out.push("price".to_string());
        } else if matches!(bare, "GET" | "POST") {
            out.push(format!("http{}", bare.to_lowercase()));
        } else {
            let mut chars = bare.chars();
            let name = !starts
                && chars.next().is_some_and(char::is_uppercase)
                && bare.chars().count() > 1
                && chars.all(char::is_lowercase)
                && !PROPER.contains(&bare.to_lowercase().as_str());
            // updateNavItem is three words, LinkedIn one
            let camel = bare.chars().next().is_some_and(char::is_lowercase);
            let mut word = String::new();
            let mut prev_lower = false;
            for c in token.chars() {
                if !c.is_alphanumeric() {
                    if !word.is_empty() {
                        out.push(std::mem::take(&mut word));
                    }
                    prev_lower = false;
                    continue;
                }
                if c.is_uppercase() && prev_lower && !word.is_empty() && camel {
                    out.push(std::mem::take(&mut word));
                }
                prev_lower = c.is_lowercase();
                word.extend(c.to_lowercase());
            }
            if !word.is_empty() {
                out.push(word);
            }
            names.resize(out.len(), name && out.len() == before + 1);
        }
        names.resize(out.len(), false);
        clause.resize(out.len(), false);
        quotes.resize(out.len(), quoted);
        if out.len() > before {
            clause[before] = fresh;
        }
        quoted &= !token.trim_end_matches(['.', ',', '!', '?', ':', ';']).ends_with(['\'', '"', '’', '”']);
    }
    // Words in quotes are a label ("rename 'Our team' to 'People'"), unless
    // the quotes hold the whole text.
    if quotes.iter().any(|q| !q) {
        names.iter_mut().zip(&quotes).for_each(|(n, q)| *n |= q);
    }
    Text { words: out, names, clause }
}

fn is_action(concept: &str) -> bool {
    ACTIONS.contains(&concept)
}

fn is_entity(concept: &str) -> bool {
    ENTITIES.contains(&concept)
}

/// What one word or phrase of a text said: where it starts and ends (in
/// words) and its concepts.
struct Group {
    start: usize,
    end: usize,
    concepts: &'static [&'static str],
}

/// The concepts of a text with how much each counts: 1, or less for a
/// thing named only to qualify another ("the hero picture": the picture is
/// what is meant; `modifier`) and for every action after the first (the
/// first verb is what is asked; `later`). A weak action (`?create`) counts
/// only when the text says no other action.
fn fold(text: &str, modifier: f32, later: f32) -> Vec<(String, f32)> {
    fold_as(text, modifier, later, true)
}

/// [`fold`], with what a request implies (`asked`: a question about nothing
/// of the site is for the web, a thing said to be so is to change, …) or
/// without (a tool's description, prose about the tool).
fn fold_as(text: &str, modifier: f32, later: f32, asked: bool) -> Vec<(String, f32)> {
    let Text { words: forms, names, clause } = words(text);
    let words: Vec<String> = forms.iter().map(|w| plain(w)).collect();
    let mut groups: Vec<Group> = Vec::with_capacity(words.len());
    let mut raw: Vec<(usize, String)> = Vec::new();
    let mut taken = vec![false; words.len()];
    let mut i = 0;
    'words: while i < words.len() {
        if taken[i] {
            i += 1;
            continue;
        }
        let word = words[i].as_str();
        if names[i] {
            raw.push((i, word.to_string()));
            i += 1;
            continue;
        }
        if VOCAB.words.contains(word) {
            for n in (2..=VOCAB.longest.min(words.len() - i)).rev() {
                if taken[i..i + n].iter().any(|t| *t) || names[i..i + n].iter().any(|n| *n) {
                    continue;
                }
                let key = words[i..i + n].join(" ");
                if let Some(cs) = VOCAB.concepts.get(key.as_str()) {
                    groups.push(Group { start: i, end: i + n, concepts: cs });
                    i += n;
                    continue 'words;
                }
            }
            if let Some(particles) = VOCAB.split.get(word) {
                for j in i + 2..words.len().min(i + 8) {
                    // a particle that opens a phrase of its own is that phrase's
                    let opens_phrase = (j + 2..=words.len().min(j + VOCAB.longest))
                        .any(|e| VOCAB.concepts.contains_key(words[j..e].join(" ").as_str()));
                    if opens_phrase {
                        continue;
                    }
                    if let Some((_, cs)) = particles.iter().find(|(p, _)| *p == words[j] && !taken[j]) {
                        taken[j] = true;
                        groups.push(Group { start: i, end: i + 1, concepts: cs });
                        i += 1;
                        continue 'words;
                    }
                }
            }
        }
        i += 1;
        if STOPWORDS.contains(&word) {
            continue;
        }
        match VOCAB.concepts.get(word) {
            Some(cs) => groups.push(Group { start: i - 1, end: i, concepts: cs }),
            None => raw.push((i - 1, word.to_string())),
        }
    }
    // Which group each word belongs to.
    let mut owner: Vec<Option<usize>> = vec![None; words.len()];
    for (k, g) in groups.iter().enumerate() {
        owner[g.start..g.end].iter_mut().for_each(|o| *o = Some(k));
    }
    let names_only_things = |k: usize| groups[k].concepts.iter().all(|c| is_entity(c.trim_start_matches(['?', '^'])));
    let how =
        HOW.iter().find(|p| words.len() > p.len() && words.iter().zip(p.iter()).all(|(w, p)| w == p)).map(|p| p.len());
    // "when you share the page …" is a condition, not a question
    let condition = !text.trim_end().ends_with('?')
        && matches!(words.first().map(String::as_str), Some("when" | "if" | "whenever"))
        && words.get(1).is_some_and(|w| SUBJECTS.contains(&w.as_str()) || matches!(w.as_str(), "people" | "visitors"));
    let question = how.is_none()
        && !condition
        && (words.first().is_some_and(|w| QUESTIONS.contains(&w.as_str()))
            || (text.trim_end().ends_with('?')
                && (!words.first().is_some_and(|w| REQUESTS.contains(&w.as_str()))
                    // "can a hero have a video?" asks what may be
                    || words.get(1).is_some_and(|w| matches!(w.as_str(), "a" | "an")))));
    // The word each clause opens with, polite words aside ("please, can you
    // …", "how do I …"), when more follows: a verb there is an instruction.
    let mut openings: Vec<usize> = Vec::new();
    for c in (0..words.len()).filter(|&i| clause[i]) {
        let from = if c == 0 { how.unwrap_or(0) } else { c };
        let end = (c + 1..words.len()).find(|&i| clause[i]).unwrap_or(words.len());
        if let Some(o) = (from..end).find(|&i| !POLITE.contains(&words[i].as_str())).filter(|&o| o + 1 < words.len()) {
            openings.push(o);
        }
    }
    let opens = |k: usize| openings.contains(&groups[k].start);
    // A word after "not" ("shouldn't be visible"), "no longer" or "without"
    // is negated: a wish not to publish asks to unpublish, a thing not
    // needed (or that should not exist) is to go, another action negated is
    // not asked ("unpublish it but don't delete it").
    let negation = |k: usize| {
        let mut p = groups[k].start;
        while p > 0 && groups[k].start - p < 3 && FILLERS.contains(&words[p - 1].as_str()) {
            p -= 1;
        }
        let aux = p.checked_sub(2).map(|i| words[i].as_str());
        match p.checked_sub(1).map(|i| words[i].as_str()) {
            Some("without") => Some(Negation::Without),
            Some("t" | "not" | "never") if aux.is_some_and(|a| WISHES.contains(&a)) => Some(Negation::Wish),
            Some("t" | "not" | "never") => Some(Negation::State),
            Some("longer") if aux == Some("no") => Some(Negation::Wish),
            _ => None,
        }
    };
    // A verb that is also a noun names a thing after a determiner ("the
    // edits", "a write-up", "the staff list"), unless it opens a clause or
    // tells what happened ("the meetup moved").
    let noun = |k: usize| {
        let g = &groups[k];
        // a phrase keeps its meaning ("the file name"), save "a write-up"
        if (g.end > g.start + 1 && words[g.start] != "write")
            || !NOUNS_TOO.contains(&words[g.start].as_str())
            || opens(k)
            || clause[g.start]
            || participle(&forms[g.start])
        {
            return false;
        }
        let mut p = g.start;
        while p > 0 && g.start - p < 4 {
            let w = words[p - 1].as_str();
            let possessive = w == "s" && p >= 2 && owner[p - 2].is_some_and(names_only_things);
            if DETERMINERS.contains(&w) || possessive {
                return true;
            }
            let unknown = !VOCAB.words.contains(w) && !STOPWORDS.contains(&w);
            let thing = owner[p - 1].is_some_and(names_only_things);
            if clause[p] || !(ADJECTIVES.contains(&w) || unknown || thing) {
                return false;
            }
            p -= 1;
        }
        false
    };
    // What someone did is not what they ask ("I dropped a photo in uploads,
    // add it to the library").
    let narrative = |k: usize| {
        if !past(&forms[groups[k].start]) {
            return false;
        }
        let mut p = groups[k].start;
        while p > 0 && groups[k].start - p < 3 {
            let w = words[p - 1].as_str();
            if SUBJECTS.contains(&w) {
                return true;
            }
            if !ASIDES.contains(&w) {
                return false;
            }
            p -= 1;
        }
        false
    };
    // A thing that "gets" something is given it ("could the homepage get a
    // row of logos?").
    let given = |k: usize| {
        words[groups[k].start] == "get"
            && groups[k].end == groups[k].start + 1
            && !clause[groups[k].start]
            && groups[k].start.checked_sub(1).and_then(|p| owner[p]).is_some_and(names_only_things)
    };
    let mut base: Vec<Vec<&'static str>> = groups
        .iter()
        .enumerate()
        .map(|(k, g)| {
            let negated = negation(k);
            // a participle after a determiner or "is" describes ("the
            // unpublished posts", "it's cancelled")
            let after = |set: &[&str]| g.start.checked_sub(1).is_some_and(|p| set.contains(&words[p].as_str()));
            let described = (participle(&forms[g.start]) && (after(DETERMINERS) || after(COPULAS)))
                || (words[g.start] == "open" && after(COPULAS));
            let is_noun = noun(k) || described;
            // "my York list" is a note ("a list of pages" is not)
            if noun(k) && g.end == g.start + 1 && words[g.start] == "list" && words.get(g.end).is_none_or(|w| w != "of")
            {
                return vec!["note"];
            }
            let told = narrative(k);
            // "the public API" says which, "make it public" what to do
            let attributive = matches!(words[g.start].as_str(), "public" | "private" | "visible")
                && words
                    .get(g.end)
                    .is_some_and(|w| !STOPWORDS.contains(&w.as_str()) && !DETERMINERS.contains(&w.as_str()));
            if given(k) {
                return vec!["create"];
            }
            let next = words.get(g.end).map(String::as_str);
            let word = words[g.start].as_str();
            // releasing one's edits publishes them
            if word == "release" && g.end == g.start + 1 && opens(k) {
                return vec!["publish"];
            }
            // "post this to https://…" sends it
            if word == "post"
                && opens(k)
                && (groups.iter().any(|h| h.concepts.contains(&"httpResponse")) || words.iter().any(|w| w == "https"))
            {
                return vec!["send"];
            }
            // "give the page a hero" makes one; "give the post a cover" sets it
            if word == "give" {
                let end = (g.end..words.len()).find(|&i| clause[i]).unwrap_or(words.len());
                let thing = (g.end..end)
                    .find(|&i| matches!(words[i].as_str(), "a" | "an"))
                    .and_then(|a| (a + 1..end).find_map(|i| owner[i]))
                    .filter(|&j| !PARTS.contains(&words[groups[j].start].as_str()))
                    .map(|j| groups[j].concepts);
                if thing.is_some_and(|cs| {
                    cs.iter()
                        .any(|c| matches!(*c, "section" | "page" | "post" | "entry" | "navItem" | "note" | "folder"))
                        && !cs.iter().any(|c| matches!(*c, "field" | "cover" | "seo"))
                }) {
                    return vec!["create"];
                }
            }
            // "what's on my to-do list" reads the list, not a page's blocks
            if word == "what"
                && g.concepts.contains(&"section")
                && groups.iter().any(|h| h.concepts.iter().any(|c| is_entity(c) && !matches!(*c, "page" | "section")))
            {
                return vec!["read"];
            }
            // "include a pricing table" makes one; "include the FAQ page" adds it
            if words[g.start] == "include" && matches!(next, Some("a" | "an")) {
                return vec!["create"];
            }
            // telling others, not oneself, is announcing
            if words[g.start] == "tell" && !matches!(next, Some("me" | "us" | "i") | None) {
                return vec!["?create"];
            }
            g.concepts
                .iter()
                .filter_map(|&c| {
                    let bare = c.trim_start_matches(['?', '^']);
                    if !is_action(bare) {
                        return Some(c);
                    }
                    if (is_noun && !c.starts_with('?')) || (told && c.starts_with('?')) || attributive {
                        return None;
                    }
                    match (negated, bare, words[g.start].as_str()) {
                        (None, ..) => Some(c),
                        (Some(_), "create", "need") => Some("delete"),
                        (Some(Negation::Wish), "read", "exist") => Some("delete"),
                        (Some(Negation::Wish), "publish", _) => Some("unpublish"),
                        (Some(Negation::State), "publish", _) => Some(c),
                        _ => None,
                    }
                })
                .collect()
        })
        .collect();
    // "Make" with a thing already there changes it ("make the banner text
    // shorter", "make Team a dropdown"), or leaves what to do to the word
    // after ("make the page live").
    for k in 0..groups.len() {
        let g = &groups[k];
        let definite =
            words.get(g.end).is_some_and(|w| DEFINITE.contains(&w.as_str())) || names.get(g.end) == Some(&true);
        if g.end == g.start + 1 && words[g.start] == "make" && definite {
            // "make the page live" publishes; "make the link open the new
            // page" changes the link
            let other = base.iter().enumerate().any(|(j, cs)| {
                j != k
                    && cs.iter().any(|c| {
                        matches!(c.trim_start_matches('^'), "publish" | "unpublish")
                            || (c.starts_with('?') && is_action(&c[1..]))
                    })
            });
            base[k] = if other { vec![] } else { vec!["update"] };
        }
    }
    let strong = |cs: &[&str], read: bool| cs.iter().any(|c| is_action(c) && (read || *c != "read"));
    let weak_applies = |k: usize, c: &str| match c.as_bytes().first() {
        Some(b'?') => !question && !base.iter().any(|cs| strong(cs, true)),
        Some(b'^') => !question && opens(k),
        _ => true,
    };
    let mut said: Vec<Vec<&str>> = base
        .iter()
        .enumerate()
        .map(|(k, cs)| cs.iter().filter(|c| weak_applies(k, c)).map(|c| c.trim_start_matches(['?', '^'])).collect())
        .collect();
    let acts = strong;
    // The first verb is what is asked, one opening a clause first; a first
    // "find" or "show" leaves it to the next. In a question, reading is
    // asked ("what did we delete?").
    let reading = || said.iter().position(|cs| cs.contains(&"read"));
    let asks = question && reading().is_none();
    let verbs = |imperative: bool, told: bool| {
        (0..groups.len()).find(|&k| acts(&said[k], false) && (!imperative || opens(k)) && (told || !narrative(k)))
    };
    let first_action = if question { reading() } else { None }
        .or_else(|| verbs(true, false))
        .or_else(|| verbs(false, false))
        .or_else(|| verbs(false, true))
        .or_else(reading);
    // Making a field (alt text, a caption, a line) changes what holds it.
    // Adding to the end of something changes it.
    let block = |f: usize| {
        (f + 1..groups.len()).take_while(|&k| !said[k].contains(&"append")).any(|k| said[k].contains(&"section"))
    };
    // what is made, up to the first preposition ("an image description for
    // the banner photo", "a share image for the pricing page")
    let made = |f: usize| {
        let end =
            (groups[f].end..words.len()).find(|&i| PREPOSITIONS.contains(&words[i].as_str())).unwrap_or(words.len());
        (f + 1..groups.len()).filter(|&k| groups[k].start < end).collect::<Vec<usize>>()
    };
    if let Some(f) = first_action
        && said[f].contains(&"create")
        && (made(f).into_iter().any(|k| said[k].contains(&"field") || said[k].contains(&"seo"))
            || (said.iter().any(|cs| cs.contains(&"append")) && !block(f)))
    {
        said[f] = vec!["update"];
    }
    // Publishing "a" piece is writing one ("let's publish a piece about
    // our menu").
    if let Some(f) = first_action
        && said[f] == ["publish"]
        && words.get(groups[f].end).is_some_and(|w| matches!(w.as_str(), "a" | "an"))
    {
        said[f] = vec!["create"];
    }
    // The word before a group, past determiners, adjectives and words the
    // vocabulary does not know ("into the Black Friday release" → into), and
    // whether an indefinite article was among them (a thing not made yet).
    let before_at = |k: usize| {
        let (mut p, mut indefinite) = (groups[k].start, false);
        let page = groups[k].concepts.contains(&"page");
        while p > 0 && groups[k].start - p < 4 {
            let w = words[p - 1].as_str();
            let unknown = owner[p - 1].is_none_or(|j| groups[j].concepts.is_empty())
                && VOCAB.concepts.get(w).is_none_or(|cs| cs.is_empty())
                && !STOPWORDS.contains(&w);
            // a page's name: "the about page", "the about us page"
            let named = page
                && matches!(w, "about" | "us")
                && p >= 2
                && matches!(words[p - 2].as_str(), "the" | "our" | "about");
            if !DETERMINERS.contains(&w) && !ADJECTIVES.contains(&w) && !unknown && !named {
                break;
            }
            indefinite |= matches!(w, "a" | "an");
            p -= 1;
        }
        (p.checked_sub(1), indefinite)
    };
    let before = |k: usize| {
        let (at, indefinite) = before_at(k);
        (at.map(|b| words[b].as_str()), indefinite)
    };
    // Adding a thing to a release, or taking it out, changes the release
    // ("add the pricing page to the spring launch"): the release is what is
    // changed and the thing only says which; not when the release is a new
    // one ("bundle the shop changes into a release").
    let staged = first_action
        .filter(|&f| said[f].iter().any(|c| matches!(*c, "create" | "delete" | "update" | "move")))
        .and_then(|f| {
            (f + 1..groups.len()).find(|&k| {
                let (word, indefinite) = before(k);
                said[k].contains(&"release")
                    && !indefinite
                    && matches!(word, Some("in" | "into" | "to" | "from" | "of" | "out" | "with"))
            })
        });
    if let (Some(f), Some(_)) = (first_action, staged) {
        said[f] = vec!["update"];
    }
    // Adding a line to a note there is changes it ("put 'renew domain' on
    // my to-do list", "a heading at the top of my ideas note"): the note is
    // what changes.
    let mut target: Option<usize> = None;
    if let Some(f) = first_action
        && said[f] == ["create"]
        && let Some(k) = (f + 1..groups.len()).find(|&k| {
            let (word, indefinite) = before(k);
            let one = !matches!(forms[groups[k].end - 1].as_str(), "notes" | "files");
            let made = (f + 1..k).any(|j| said[j].iter().any(|c| is_entity(c) && !matches!(*c, "section" | "line")));
            said[k].contains(&"note")
                && !indefinite
                && !made
                && (matches!(word, Some("to" | "on" | "onto")) || (one && matches!(word, Some("in" | "into" | "of"))))
        })
    {
        said[f] = vec!["update"];
        target = Some(k);
    }
    // Putting a thing already there (the one named, or by its label) under,
    // above or after another moves it; putting "a" thing there makes it.
    const PLACES: &[&str] =
        &["under", "above", "below", "beneath", "after", "before", "between", "beside", "next", "at"];
    let into_folder = |f: usize| {
        let into = |k: usize| matches!(before(k).0, Some("in" | "into"));
        let folder = (f + 1..groups.len()).any(|k| said[k].contains(&"folder") && into(k))
            && (f + 1..groups.len()).any(|k| said[k].contains(&"note"));
        // a thing put in a category is categorised
        folder || (f + 1..groups.len()).any(|k| words[groups[k].start] == "category" && into(k))
    };
    if let Some(f) = first_action
        && said[f] == ["create"]
        && words
            .get(groups[f].end)
            .is_some_and(|w| matches!(w.as_str(), "the" | "my" | "our" | "this" | "that" | "it" | "them"))
            | names.get(groups[f].end).is_some_and(|n| *n)
        && (words[groups[f].end..].iter().any(|w| PLACES.contains(&w.as_str())) || into_folder(f))
    {
        said[f] = vec!["update", "move"];
    }
    // Hiding a page from search engines is a setting of it.
    if let Some(f) = first_action
        && said[f].contains(&"unpublish")
        && said.iter().any(|cs| cs.contains(&"seo"))
    {
        said[f] = vec!["update"];
    }
    if let Some(f) = first_action {
        let after = |from: usize| words[from..].iter().map(String::as_str).find(|w| !DETERMINERS.contains(w));
        // Removing a thing but keeping it takes it off the site ("remove
        // the events page from the live site but keep the draft").
        let kept = words[groups[f].end..].iter().enumerate().any(|(i, w)| {
            w == "keep" && matches!(after(groups[f].end + i + 1), Some("it" | "them" | "draft" | "this" | "that"))
        });
        // Throwing one's changes away, or undoing them, gives up a draft
        // ("drop my unsaved changes", "undo everything I changed").
        let changes = {
            let mut p = groups[f].end;
            while p < words.len()
                && !CHANGES.contains(&forms[p].as_str())
                && (DETERMINERS.contains(&words[p].as_str())
                    || ADJECTIVES.contains(&words[p].as_str())
                    || owner[p].is_some_and(|j| said[j].is_empty() || said[j] == ["draft"]))
            {
                p += 1;
            }
            forms.get(p).is_some_and(|w| CHANGES.contains(&w.as_str()))
                || (f + 1..groups.len())
                    .any(|k| narrative(k) && matches!(words[groups[k].start].as_str(), "change" | "edit" | "tweak"))
                || (!said[f].contains(&"delete") && (f + 1..groups.len()).any(|k| said[k].contains(&"discard")))
        };
        if said[f].contains(&"delete") && !said[f].contains(&"discard") && kept {
            said[f] = vec!["unpublish"];
        } else if said[f].iter().any(|c| matches!(*c, "delete" | "restore" | "revert"))
            && !said[f].contains(&"discard")
            && changes
        {
            said[f] = vec!["discard"];
        }
        // Adding a stock photo to the library imports it.
        if said[f].contains(&"create") && said.iter().any(|cs| cs.contains(&"stockPhoto")) {
            said[f].push("import");
        }
    }
    let generic = |g: &Group| g.end == g.start + 1 && GENERIC.contains(&words[g.start].as_str());
    let mut out: Vec<(String, f32)> = Vec::with_capacity(groups.len() + raw.len());
    let mut put = |c: &str, w: f32| match out.iter_mut().find(|(k, _)| k == c) {
        Some((_, old)) => *old = old.max(w),
        None => out.push((c.to_string(), w)),
    };
    let names_thing = |k: usize| said[k].iter().any(|c| is_entity(c));
    // What a thing is about, or for once the thing is named, only qualifies
    // it ("a post about our release", "a page for the autumn menu"); "the
    // about page" is a name.
    let aside = |k: usize| {
        let mut p = groups[k].start;
        let mut skipped = 0;
        while p > 0 && skipped < 3 {
            let w = words[p - 1].as_str();
            let unknown = !VOCAB.words.contains(w) && !STOPWORDS.contains(&w);
            if !DETERMINERS.contains(&w) && !ADJECTIVES.contains(&w) && !unknown {
                break;
            }
            p -= 1;
            skipped += 1;
        }
        let before = p.checked_sub(1).map(|b| words[b].as_str());
        let named_before = (0..k).any(|j| said[j].iter().any(|c| is_entity(c)));
        // the thing a change acts on, named after its verb
        let object = first_action
            .filter(|&f| !said[f].contains(&"read"))
            .is_some_and(|f| (f..k).any(|j| said[j].iter().any(|c| is_entity(c))));
        match before {
            Some("about") if p == groups[k].start && matches!(words[p].as_str(), "page" | "us") => false,
            Some("about" | "regarding") => true,
            Some("for") => named_before,
            // a link to a page: the page is where it goes
            Some("to") if k > 0 && said[k - 1].contains(&"navItem") => true,
            // where a change is made, once what it changes is named
            Some("in" | "on" | "at" | "from" | "inside" | "within" | "of") => object,
            _ => false,
        }
    };
    // What is changed, added, read or removed on a page, other than the
    // page's own settings, is its sections' content ("the phone number on the
    // contact page", "what does the homepage say"): the page only says where.
    let crud = first_action
        .is_none_or(|f| said[f].iter().any(|c| matches!(*c, "create" | "update" | "delete" | "read" | "move")));
    let settles = |cs: &[&str]| {
        cs.iter().any(|c| is_entity(c) && !matches!(*c, "page" | "section" | "image" | "entry" | "document"))
            || cs.iter().any(|c| matches!(*c, "seo" | "url"))
    };
    // "The address on the contact page" is what it says, "the address of
    // the page" its setting.
    let soft = |i: usize, on: bool| on && SOFT_ATTRIBUTES.contains(&words[i].as_str());
    let held = |i: usize, on: bool| match owner[i] {
        _ if CONTENT.contains(&words[i].as_str()) || soft(i, on) => true,
        Some(j) => {
            said[j].iter().any(|c| matches!(*c, "section" | "image" | "entry" | "line"))
                || (said[j].contains(&"field") && !ATTRIBUTES.contains(&words[i].as_str()))
        }
        None => {
            let w = words[i].as_str();
            !names[i]
                && !VOCAB.concepts.contains_key(w)
                && !STOPWORDS.contains(&w)
                && !POSITIONS.contains(&w)
                && !ADJECTIVES.contains(&w)
        }
    };
    let attribute = |i: usize, on: bool| {
        !soft(i, on)
            && (ATTRIBUTES.contains(&words[i].as_str())
                || owner[i].is_some_and(|j| settles(&said[j]) || said[j].contains(&"page")))
    };
    let page_of = |k: usize| said[k].contains(&"page") && !settles(&said[k]);
    let mut on_page: Option<usize> = None;
    if crud {
        on_page = (0..groups.len()).filter(|&k| page_of(k)).find(|&k| {
            let (at, indefinite) = before_at(k);
            let Some(q) = at.filter(|&q| !indefinite && PLACE_OF.contains(&words[q].as_str())) else { return false };
            let lo = (0..=q).rev().find(|&i| clause[i]).unwrap_or(0);
            let lo = first_action.map(|f| groups[f].end).filter(|&e| e > lo && e <= q).unwrap_or(lo);
            // "it" stands for what was said before ("our phone number
            // changed, update it on the contact page")
            let pronoun = (lo..q).all(|i| matches!(words[i].as_str(), "it" | "them" | "this" | "that"));
            let lo = if pronoun && lo < q { 0 } else { lo };
            let on = matches!(words[q].as_str(), "on" | "in" | "at" | "inside" | "within");
            let outside = |i: usize| first_action.is_none_or(|f| !(groups[f].start..groups[f].end).contains(&i));
            // "what's (currently) on the pricing page" asks what it holds
            let what_on = question && words[0] == "what" && on;
            (what_on || (lo..q).any(|i| outside(i) && held(i, on))) && !(lo..q).any(|i| outside(i) && attribute(i, on))
        });
        if on_page.is_none() {
            let pages: Vec<usize> = (0..groups.len()).filter(|&k| page_of(k)).collect();
            let said_content = words.iter().any(|w| CONTENT.contains(&w.as_str()));
            let other = (0..groups.len()).any(|k| !page_of(k) && (settles(&said[k]) || said[k].contains(&"page")));
            if said_content && !other && !(0..words.len()).any(|i| ATTRIBUTES.contains(&words[i].as_str())) {
                on_page = pages.first().copied();
            }
        }
    }
    // A thing the request acts on is what is meant; a record named as where
    // it is qualifies it.
    let mut force: Vec<Option<bool>> = vec![None; groups.len()];
    if let Some(k) = on_page {
        force[k] = Some(true);
        (0..k).filter(|&j| said[j].contains(&"entry")).for_each(|j| force[j] = Some(true));
    }
    if let (Some(f), Some(k)) = (first_action, target) {
        force[k] = Some(false);
        (f + 1..k).filter(|&j| names_thing(j)).for_each(|j| force[j] = Some(true));
    }
    // A part changed on a record is the record's ("update the photo on
    // Sam's team profile", "fix the broken link in the festival article").
    if let Some(f) = first_action.filter(|&f| said[f].contains(&"update"))
        && let Some(k) = (f + 1..groups.len()).find(|&k| {
            let (word, indefinite) = before(k);
            // (not "the blog page")
            let page_named =
                groups.get(k + 1).is_some_and(|n| n.start == groups[k].end && said[k + 1].contains(&"page"));
            said[k].iter().any(|c| matches!(*c, "entry" | "post"))
                && !indefinite
                && !page_named
                && matches!(word, Some("in" | "on" | "of" | "from"))
        })
        && (f + 1..k).any(|j| said[j].iter().any(|c| matches!(*c, "image" | "section" | "navItem")))
    {
        force[k] = Some(false);
        (f + 1..k).filter(|&j| names_thing(j)).for_each(|j| force[j] = Some(true));
    }
    // Putting the thing named in a menu links it there ("put the
    // sustainability page in the main menu"): the menu item is made.
    if let Some(f) = first_action.filter(|&f| said[f] == ["create"])
        && let Some(k) = (f + 1..groups.len()).find(|&k| {
            let (word, indefinite) = before(k);
            said[k].contains(&"navItem") && !indefinite && matches!(word, Some("in" | "into" | "to" | "on" | "onto"))
        })
        && words.get(groups[f].end).is_some_and(|w| DEFINITE.contains(&w.as_str()))
    {
        force[k] = Some(false);
        (f + 1..k).filter(|&j| names_thing(j) && !said[j].contains(&"navItem")).for_each(|j| force[j] = Some(true));
    }
    let archived = |k: usize| ARCHIVED.contains(&forms[groups[k].start].as_str());
    let qualifying: Vec<bool> = groups
        .iter()
        .enumerate()
        .map(|(k, g)| {
            // A thing named just before another qualifies it ("the hero
            // picture"), unless that other is a bare record or item ("an
            // image record"), or it says the other was archived ("the
            // deleted posts").
            let next_adjacent = groups.get(k + 1).filter(|n| n.start == g.end && names_thing(k + 1) && names_thing(k));
            let prev_adjacent =
                k.checked_sub(1).filter(|&p| groups[p].end == g.start && names_thing(p) && names_thing(k));
            force[k].unwrap_or_else(|| {
                (next_adjacent.is_some_and(|n| !generic(n)) && !archived(k))
                    || (prev_adjacent.is_some() && (generic(g) || prev_adjacent.is_some_and(archived)))
                    || staged.is_some_and(|r| r != k)
                    || (staged != Some(k) && aside(k))
            })
        })
        .collect();
    // A heading or an intro of a post or an entry is a field of it, not a
    // section of a page.
    let record = (0..groups.len()).any(|k| !qualifying[k] && said[k].iter().any(|c| matches!(*c, "post" | "entry")));
    for (k, g) in groups.iter().enumerate() {
        let part = record && PARTS.contains(&words[g.start].as_str());
        for c in &said[k] {
            let c = if part && *c == "section" { "field" } else { c };
            if is_entity(c) && qualifying[k] {
                put(c, modifier);
            } else if is_action(c) && (asks || first_action.is_some_and(|f| f != k)) && !said[k].contains(&"field") {
                put(c, later);
            } else {
                put(c, 1.0);
            }
        }
    }
    if asks {
        put("read", 1.0);
    }
    if on_page.is_some() {
        put("section", 1.0);
    }
    // Notes listed with no word of what is in them are a folder's ("list all
    // the notes in my vault"; not "my meeting notes").
    let listed = groups.iter().any(|g| {
        matches!(forms[g.start].as_str(), "notes" | "files")
            && g.start.checked_sub(1).is_none_or(|p| LISTING.contains(&words[p].as_str()))
    });
    let reads = asks || first_action.is_some_and(|f| said[f].contains(&"read"));
    if asked && listed && reads && !said.iter().any(|cs| cs.contains(&"search")) {
        put("folder", 1.0);
    }
    // A release named is what goes live, not a document.
    if out.iter().any(|(c, w)| c == "release" && *w >= 1.0) {
        out.retain(|(c, _)| c != "document");
    }
    // A price of a thing no other word names is an entry's ("the oak board
    // is now £45"): a collection lists what is sold.
    if words.iter().any(|w| PRICES.contains(&w.as_str())) && !out.iter().any(|(c, _)| is_entity(c)) {
        out.push(("entry".to_string(), 1.0));
    }
    let things: Vec<&str> = out.iter().map(|(c, _)| c.as_str()).filter(|c| is_entity(c)).collect();
    // A question about a kind of block, on no page, asks what blocks can
    // hold ("can a hero have a video?").
    let any_page = (0..groups.len()).all(|k| !said[k].contains(&"page") || before_at(k).1);
    let kind = question && (things == ["section"] || (any_page && things == ["section", "page"]));
    // A thing described with no verb is to be made ("a short post saying
    // we're closed").
    let acted = out.iter().any(|(c, _)| is_action(c));
    let described = !question && !acted && words.first().is_some_and(|w| matches!(w.as_str(), "a" | "an"));
    // A question about nothing of the site is for the web ("what's the
    // minimum wage this year?").
    let asked_about = question && things.is_empty() && out.iter().all(|(c, _)| !is_action(c) || c == "read");
    let ours = words.iter().any(|w| OURS.contains(&w.as_str()));
    let site = words.iter().any(|w| matches!(w.as_str(), "site" | "website"));
    let bare = out.iter().all(|(c, _)| c == "read");
    let worldly = asked_about && bare && !raw.is_empty() && !ours && !site;
    // One's own thing the vocabulary does not know is a note ("read my plan
    // for next week").
    let mine = things.is_empty()
        && words.windows(2).any(|w| {
            w[0] == "my"
                && (!VOCAB.concepts.contains_key(w[1].as_str())
                    || matches!(w[1].as_str(), "plan" | "list" | "file" | "log"))
                && !STOPWORDS.contains(&w[1].as_str())
        });
    // A thing said to be so, with no verb, is to change ("the address on the
    // contact page is our old one").
    let stated = !question
        && !acted
        && !things.is_empty()
        && words.iter().skip(1).any(|w| matches!(w.as_str(), "is" | "are" | "s"));
    // Reading the vault itself lists it ("list everything in my vault").
    let vault = reads
        && out.iter().any(|(c, _)| c == "vault")
        && !out.iter().any(|(c, _)| c == "search")
        && !things.contains(&"note");
    // Asking whether someone deleted a thing asks the archive.
    let someone = question
        && words.iter().any(|w| matches!(w.as_str(), "someone" | "somebody" | "anyone" | "anybody" | "who"))
        && said.iter().any(|cs| cs.contains(&"delete"));
    // Going public at a time is a schedule ("publish it on Monday at 9am");
    // a time for a thing the vocabulary does not know is an event's ("the
    // pottery class moved to Thursday").
    let timed = words.iter().any(|w| TIMES.contains(&w.as_str()));
    let going_public = out.iter().any(|(c, _)| matches!(c.as_str(), "publish" | "unpublish"));
    let scheduled = timed && going_public && !things.contains(&"release");
    let dated = timed && things.is_empty() && !going_public;
    let implied = [
        ("release", scheduled),
        ("entry", dated),
        ("archive", someone),
        ("folder", vault),
        ("sectionTemplate", kind),
        ("update", stated),
        ("create", described),
        ("webResult", worldly),
        ("page", asked_about && site),
        ("note", mine),
    ];
    for c in implied
        .iter()
        .filter(|(_, said)| asked && *said)
        .map(|(c, _)| c.to_string())
        .chain(raw.into_iter().map(|(_, w)| w))
    {
        if !out.iter().any(|(k, _)| *k == c) {
            out.push((c, 1.0));
        }
    }
    out
}

/// Whether a word is a verb's past form ("dropped", "wrote").
fn past(form: &str) -> bool {
    participle(form) || wordnet::IRREGULAR.iter().any(|(f, _)| *f == form)
}

/// Whether a word has a regular past form's ending ("dropped"; not "need").
fn participle(form: &str) -> bool {
    form.len() > 4 && form.ends_with("ed") && !form.ends_with("eed")
}

/// Words that say what a thing is ("it's cancelled").
const COPULAS: &[&str] = &["is", "s", "are", "was", "were", "been", "be", "re"];

/// How a word is negated: a wish ("shouldn't be visible", "no longer"), a
/// state ("isn't needed") or "without".
#[derive(Clone, Copy, PartialEq)]
enum Negation {
    Wish,
    State,
    Without,
}

/// Words that may stand between "not" and what it negates.
const FILLERS: &[&str] = &["be", "been", "being", "want", "to", "ever", "yet", "really", "even"];

/// Words before "not" that make it a wish.
const WISHES: &[&str] = &["should", "shouldn", "must", "mustn", "don", "do", "need", "needn", "want", "won", "will"];

/// Openings of a request phrased as a question ("how do I add a page?").
const HOW: &[&[&str]] = &[
    &["how", "do", "i"],
    &["how", "do", "we"],
    &["how", "can", "i"],
    &["how", "can", "we"],
    &["how", "would", "i"],
    &["how", "to"],
    &["is", "it", "possible", "to"],
    &["is", "there", "a", "way", "to"],
];

/// Words after "make" that name a thing already there.
const DEFINITE: &[&str] = &["the", "my", "our", "this", "that", "it", "them", "these", "those", "your", "their", "its"];

/// Verbs that are nouns too ("the edits", "a quick update").
const NOUNS_TOO: &[&str] = &[
    "change", "edit", "update", "draft", "list", "link", "upload", "write", "launch", "release", "search", "fix",
    "tweak", "bundle", "batch", "schedule", "plan", "record", "tag", "move", "swap", "switch", "copy", "import",
    "download", "request", "mark", "cut", "drop", "stage", "group", "view", "display", "show", "look", "check",
    "start", "post", "blog", "note", "file", "store",
];

/// Who did something ("I dropped …", "we published …").
const SUBJECTS: &[&str] = &["i", "we", "you", "they", "he", "she", "someone", "somebody"];

/// Words between a subject and what they did.
const ASIDES: &[&str] =
    &["just", "already", "accidentally", "recently", "also", "ve", "have", "had", "d", "mistakenly", "earlier", "only"];

/// One's changes, as a thing ("throw away my changes").
const CHANGES: &[&str] =
    &["changes", "edits", "tweaks", "updates", "alterations", "amendments", "revisions", "modifications"];

/// Words that say a record is archived ("the deleted posts").
const ARCHIVED: &[&str] = &["archived", "deleted", "removed", "trashed", "binned"];

/// Parts of a text that a post or an entry holds as fields.
const PARTS: &[&str] =
    &["heading", "headline", "title", "subtitle", "subheading", "intro", "paragraph", "sentence", "tagline", "opening"];

/// Words that say what a page says.
const CONTENT: &[&str] = &[
    "say",
    "says",
    "said",
    "text",
    "content",
    "words",
    "wording",
    "blurb",
    "paragraph",
    "sentence",
    "written",
    "typo",
    "spelling",
    "mistake",
    "misspelling",
    "grammar",
];

/// A page's own settings, named by their words.
const ATTRIBUTES: &[&str] = &["title", "name", "slug", "description", "url", "address", "meta", "seo"];

/// Settings' words that, said to be on a page, are what it says.
const SOFT_ATTRIBUTES: &[&str] = &["title", "name", "description", "address"];

/// Words of where on a page, not what.
const POSITIONS: &[&str] = &["top", "bottom", "end", "middle", "side", "start", "foot", "head", "left", "right"];

/// Words that end what a verb makes ("an image description for …").
const PREPOSITIONS: &[&str] = &["for", "of", "on", "in", "to", "into", "at", "from", "about", "with", "under"];

/// Words before a place a thing is on, in or taken from.
const PLACE_OF: &[&str] = &["on", "onto", "to", "in", "into", "at", "from", "off", "of", "within", "inside"];

/// Days, months and hours: when a thing happens or goes out.
const TIMES: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "am",
    "pm",
    "midnight",
    "noon",
    "tonight",
    "tomorrow",
];

/// Words of what a thing costs.
const PRICES: &[&str] = &["price", "prices", "cost", "costs", "cheaper", "dearer", "pricier", "expensive", "cheap"];

/// Words that say a question is about one's own site.
const OURS: &[&str] = &["our", "we", "us", "my", "i", "ours", "mine"];

/// Words before a list of notes ("all the notes", "my files").
const LISTING: &[&str] = &["the", "my", "our", "all", "your", "which", "what", "any"];

/// The concepts a text carries, stopwords removed: the longest phrase of
/// the vocabulary at each word first, then the word, else the word itself
/// in its plain form.
pub fn concepts(text: &str) -> Vec<String> {
    fold(text, 1.0, 1.0).into_iter().map(|(c, _)| c).filter(|c| !c.starts_with('?')).collect()
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
    put(tool.entity.as_str().to_string(), W.entity);
    put(action_of(tool.name).to_string(), W.entity);
    // A release is given up, not deleted: deleting one discards it.
    if tool.entity == Subject::Release && action_of(tool.name) == "discard" {
        put("delete".to_string(), W.name);
    }
    // A note tool its tags say works on folders too (moveItem, archiveItem).
    if tool.entity == Subject::Record(EntityKind::Note) && tool.tags.contains(&"folder") {
        put("folder".to_string(), W.name);
    }
    // A tool of the conversation that is not always offered works on the
    // form the person has on screen (proposeFormValues). It is not found by
    // the records a form edits: a form on screen makes it active anyway, and
    // a search for a page's tools should not offer it.
    if tool.entity == Subject::Conversation && tool.category != Category::Default {
        put("form".to_string(), W.entity);
    }
    // "Online" alone means searching the web; the other outside tools say
    // more (a stock photo, a link, an API).
    if tool.category == Category::External {
        let w = if tool.entity == Subject::WebResult { W.entity } else { W.name };
        put("external".to_string(), w);
    }
    // "nav item" from the name should not also read as a collection item.
    for c in concepts(tool.name) {
        if c != "entry" || tool.entity == Subject::Record(EntityKind::Entry) {
            put(c, W.name);
        }
    }
    for tag in tool.tags {
        for c in concepts(tag) {
            put(c, W.tag);
        }
    }
    for phrase in tool.phrases {
        for c in concepts(phrase) {
            put(c, W.phrase);
        }
    }
    let described = fold_as(tool.description, 1.0, 1.0, false);
    for c in described.into_iter().map(|(c, _)| c).filter(|c| !c.starts_with('?')) {
        put(c, W.description);
    }
    // Publishing publishes, and restoring brings back, many kinds of record.
    let kinds: &[&str] = match tool.entity {
        Subject::Document => &["page", "post", "entry", "navItem"],
        Subject::Archive => &["page", "post", "section", "image", "entry", "navItem"],
        _ => &[],
    };
    let w = if tool.entity == Subject::Document { W.documents } else { W.archived };
    for kind in kinds {
        put(kind.to_string(), w);
    }
    weights
}

/// How much each place counts.
struct Weights {
    entity: f32,
    name: f32,
    tag: f32,
    phrase: f32,
    description: f32,
    documents: f32,
    archived: f32,
    modifier: f32,
    later: f32,
    elsewhere: f32,
    otherwise: f32,
}

const W: Weights = Weights {
    entity: 4.0,
    name: 2.5,
    tag: 2.0,
    phrase: 1.5,
    description: 0.5,
    documents: 2.5,
    archived: 1.0,
    modifier: 0.5,
    later: 0.6,
    elsewhere: 0.6,
    otherwise: 0.9,
};

/// Precomputed concept profiles of a list of tools, built once per registry.
pub struct SearchIndex {
    profiles: Vec<HashMap<String, f32>>,
    names: Vec<String>,
}

impl SearchIndex {
    /// Profiles every tool of `tools` (same order).
    pub fn new(tools: &[Tool]) -> Self {
        Self {
            profiles: tools.iter().map(profile).collect(),
            names: tools.iter().map(|t| t.name.to_lowercase()).collect(),
        }
    }

    /// Every tool of `tools` (the list the index was built from), best match
    /// first (ties keep catalog order); tools that match nothing are left out.
    pub fn rank<'a>(&self, tools: &'a [Tool], query: &str) -> Vec<&'a Tool> {
        self.scores(tools, query).into_iter().map(|(t, _)| t).collect()
    }

    /// [`SearchIndex::rank`] with each tool's score.
    pub fn scores<'a>(&self, tools: &'a [Tool], query: &str) -> Vec<(&'a Tool, f32)> {
        let mut q = fold(query, W.modifier, W.later);
        q.truncate(64);
        let lowered = query.to_lowercase();
        let mut scored: Vec<(f32, usize, &Tool)> = tools
            .iter()
            .zip(&self.profiles)
            .enumerate()
            .map(|(i, (t, p))| (score(t, p, &q, lowered.contains(&self.names[i])), i, t))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().filter(|(s, _, _)| *s > 0.0).map(|(s, _, t)| (t, s)).collect()
    }
}

/// Scores one tool for the query's concepts (each once, with its weight).
fn score(tool: &Tool, profile: &HashMap<String, f32>, query: &[(String, f32)], named: bool) -> f32 {
    let mut total: f32 = query.iter().map(|(c, w)| w * profile.get(c).copied().unwrap_or(0.0)).sum();
    // An exact mention of the tool's name wins outright.
    if named {
        total += 10.0;
    }
    // Without an action word, reading is the safe guess.
    if !query.iter().any(|(c, _)| is_action(c)) && tool.read_only {
        total += 1.0;
    }
    // A query that names things the tool does not work on scores lower.
    let named_things = || query.iter().filter(|(c, _)| is_entity(c));
    let works_on = named_things().any(|(c, _)| profile.get(c).is_some_and(|w| *w >= W.name));
    // (publishing and restoring tools work on many kinds, not on a release)
    let kinds_of = matches!(tool.entity, Subject::Archive | Subject::Document | Subject::Conversation)
        && !named_things().any(|(c, w)| c == "release" && *w >= 1.0);
    if named_things().next().is_some() && !works_on && !kinds_of {
        total *= W.elsewhere;
    }
    // So does one that asks for what the tool does not do.
    let asked = || query.iter().filter(|(c, w)| *w >= 1.0 && is_action(c));
    let does = asked().any(|(c, _)| profile.get(c).is_some_and(|w| *w >= W.name));
    if asked().next().is_some() && !does {
        total *= W.otherwise;
    }
    total
}

/// Ranks `tools` for `query`, building the index on the spot (tests and
/// one-off use; the registry keeps a prebuilt [`SearchIndex`]).
pub fn rank<'a>(tools: &'a [Tool], query: &str) -> Vec<&'a Tool> {
    SearchIndex::new(tools).rank(tools, query)
}

/// The text a tool is embedded from: its name as words, its description,
/// tags and search phrases.
pub fn tool_text(t: &Tool) -> String {
    let mut name = String::new();
    for c in t.name.chars() {
        if c.is_uppercase() {
            name.push(' ');
        }
        name.extend(c.to_lowercase());
    }
    format!("{name}. {} {}. {}.", t.description, t.tags.join(", "), t.phrases.join("; "))
}

/// The unit vector of each of the catalog's tools, by name, for one model.
type ToolVectors = Arc<Vec<(&'static str, Vec<f32>)>>;

/// Each model's [`ToolVectors`]: embedded on the first search that needs
/// them, then kept for the process.
static TOOL_VECTORS: LazyLock<Mutex<HashMap<String, ToolVectors>>> = LazyLock::new(Default::default);

/// The vectors of the registry's tools (`all`) for `embedder`'s model,
/// embedded (in one request) if this process has not yet.
async fn tool_vectors(embedder: &dyn Embedder, all: &[Tool]) -> Result<ToolVectors, String> {
    let cached = TOOL_VECTORS.lock().ok().and_then(|m| m.get(embedder.model()).cloned());
    if let Some(vectors) = cached {
        return Ok(vectors);
    }
    let texts: Vec<String> = all.iter().map(tool_text).collect();
    let vectors = embedder.embed(&texts).await?;
    if vectors.len() != texts.len() {
        return Err(format!("{} vectors for {} tools", vectors.len(), texts.len()));
    }
    let named: ToolVectors = Arc::new(all.iter().map(|t| t.name).zip(vectors.into_iter().map(normalise)).collect());
    if let Ok(mut m) = TOOL_VECTORS.lock() {
        m.insert(embedder.model().to_string(), Arc::clone(&named));
    }
    Ok(named)
}

/// Names of the registry's tools (`all`) by similarity to `query`, best
/// first, none below [`MIN_SIMILARITY`].
pub async fn similar_tools(embedder: &dyn Embedder, all: &[Tool], query: &str) -> Result<Vec<&'static str>, String> {
    let (q, tools) = tokio::join!(query_vector(embedder, query), tool_vectors(embedder, all));
    let (q, tools) = (q?, tools?);
    let mut scored: Vec<(f32, &'static str)> = tools
        .iter()
        .filter(|(_, v)| v.len() == q.len())
        .map(|(name, v)| (v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>(), *name))
        .filter(|(s, _)| *s >= MIN_SIMILARITY)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    Ok(scored.into_iter().map(|(_, name)| name).collect())
}

/// searchTools' ranking of the registry's tools (`all`): the words ranking
/// `lexical` alone without an embedding model (`words`), else fused with
/// the tools' similarity to `query` by reciprocal rank, as content search
/// does (`hybrid`); a model that fails leaves the words ranking to answer.
pub async fn rank_tools<'a>(
    embedder: Option<&dyn Embedder>,
    all: &'a [Tool],
    lexical: Vec<&'a Tool>,
    query: &str,
) -> (Vec<&'a Tool>, &'static str) {
    let Some(embedder) = embedder else {
        return (lexical, "words");
    };
    let similar = match similar_tools(embedder, all, query).await {
        Ok(similar) => similar,
        Err(e) => {
            tracing::warn!(error = %e, "tool similarity unavailable; the words ranking alone answers");
            return (lexical, "words");
        }
    };
    let names: Vec<String> = lexical.iter().map(|t| t.name.to_string()).collect();
    let similar: Vec<String> = similar.into_iter().map(str::to_string).collect();
    let fused = fuse(&[names, similar], all.len());
    let found = fused
        .iter()
        .filter_map(|name| {
            lexical.iter().copied().find(|t| t.name == name).or_else(|| all.iter().find(|t| t.name == name))
        })
        .collect();
    (found, "hybrid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_words_onto_concepts() {
        assert_eq!(concepts("Change the menu links"), ["update", "navItem"]);
        assert_eq!(concepts("updateNavItem"), ["update", "navItem"]);
        assert_eq!(concepts("photos"), ["image"]);
        assert_eq!(concepts("Get rid of the old to-do list"), ["delete", "note", "old"]);
        assert_eq!(concepts("scrapped"), ["delete"]);
        assert_eq!(concepts("summarise https://example.com/a"), ["webPage", "read", "url"]);
        assert_eq!(concepts("take the FAQ section off the page"), ["delete", "section", "page"]);
    }

    fn weight(text: &str, concept: &str) -> f32 {
        fold(text, W.modifier, W.later).into_iter().find(|(c, _)| c == concept).map_or(0.0, |(_, w)| w)
    }

    #[test]
    fn the_words_around_a_concept_weigh_it() {
        // the picture is meant; the hero only says which
        assert_eq!(
            (weight("Replace the hero picture", "section"), weight("Replace the hero picture", "image")),
            (0.5, 1.0)
        );
        // "an image record" is an image
        assert_eq!(weight("create image record", "image"), 1.0);
        // a question asks to read
        assert_eq!((weight("What did we delete?", "read"), weight("What did we delete?", "delete")), (1.0, 0.6));
        // a weak action counts alone, a verb first only when it opens the request
        assert_eq!(weight("We need a page for the shop", "create"), 1.0);
        assert_eq!(weight("Do we need a page?", "create"), 0.0);
        assert_eq!(weight("Draft an article about pricing", "create"), 1.0);
        assert_eq!(weight("Show the drafts", "create"), 0.0);
        // what a post is about only qualifies it
        assert_eq!(weight("Write a post about our new release", "release"), 0.5);
        // a label is not the thing its word names
        assert_eq!(weight("rename Home to Start in the menu", "page"), 0.0);
        // writing a field changes what holds it
        assert_eq!(weight("Write alt text for the team photo", "update"), 1.0);
        // adding to a release changes the release; the page only says what
        let staged = "add the pricing page to the spring launch";
        assert_eq!((weight(staged, "update"), weight(staged, "release"), weight(staged, "page")), (1.0, 1.0, 0.5));
        assert_eq!(weight("bundle the shop changes into a release", "create"), 1.0);
        // putting the one named somewhere moves it; putting "a" thing there makes it
        assert_eq!(weight("Put the FAQ page under Support", "move"), 1.0);
        assert_eq!(weight("Put an FAQ at the bottom of the pricing page", "create"), 1.0);
        // a thing described with no verb is to be made
        assert_eq!(weight("a short news post saying we're closed", "create"), 1.0);
        // what is wrong asks for a change, unless another verb says what to do
        assert_eq!(weight("the homepage tagline is outdated", "update"), 1.0);
        assert_eq!(weight("that photo is outdated, bin it", "update"), 0.0);
    }

    #[test]
    fn a_slip_of_the_keyboard_is_read_as_meant() {
        assert!(concepts("pubish the about page").contains(&"publish".to_string()));
        assert!(concepts("navigaton").contains(&"navItem".to_string()));
        assert!(concepts("pubilsh").contains(&"publish".to_string()));
        assert!(concepts("catagory").contains(&"field".to_string()));
        // in a short word a changed letter makes another word, not a slip
        assert!(!concepts("working").contains(&"field".to_string()));
    }
}
