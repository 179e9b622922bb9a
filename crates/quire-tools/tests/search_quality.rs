//! searchTools quality: recall@5 over queries as a model writes them
//! (keywords) and as a user says them (natural requests). Run with
//! --nocapture to see the figures and the misses.

use quire_tools::search::rank;
use quire_tools::{Category, catalog};

/// Short keyword queries, as a model writes them.
const KEYWORD: &[(&str, &str)] = &[
    ("get page", "getPage"),
    ("list pages", "getPage"),
    ("page tree children", "getPage"),
    ("find page by slug", "getPage"),
    ("create page", "createPage"),
    ("new landing page", "createPage"),
    ("add subpage", "createPage"),
    ("update page", "updatePage"),
    ("rename page", "updatePage"),
    ("page seo meta", "updatePage"),
    ("publish page", "updatePage"),
    ("delete page", "deletePage"),
    ("remove page", "deletePage"),
    ("section templates", "getSectionTemplate"),
    ("template fields", "getSectionTemplate"),
    ("block types", "getSectionTemplate"),
    ("get sections", "getSection"),
    ("page sections content", "getSection"),
    ("create section", "createSection"),
    ("add hero block", "createSection"),
    ("add pricing section", "createSection"),
    ("update section", "updateSection"),
    ("edit section content", "updateSection"),
    ("attach image to section", "updateSection"),
    ("reorder sections", "updateSection"),
    ("delete section", "deleteSection"),
    ("remove block", "deleteSection"),
    ("search images", "getImage"),
    ("find photo", "getImage"),
    ("media library", "getImage"),
    ("create image record", "createImage"),
    ("register uploaded image", "createImage"),
    ("image alt text", "updateImage"),
    ("update image tags", "updateImage"),
    ("delete image", "deleteImage"),
    ("list posts", "getPost"),
    ("blog drafts", "getPost"),
    ("create post", "createPost"),
    ("write blog article", "createPost"),
    ("update post", "updatePost"),
    ("publish post", "updatePost"),
    ("post cover image", "updatePost"),
    ("delete post", "deletePost"),
    ("menu items", "getNavItem"),
    ("navigation header", "getNavItem"),
    ("add menu link", "createNavItem"),
    ("create nav item", "createNavItem"),
    ("update nav item", "updateNavItem"),
    ("hide menu link", "updateNavItem"),
    ("delete menu item", "deleteNavItem"),
    ("collection entries", "getEntry"),
    ("list testimonials", "getEntry"),
    ("create entry", "createEntry"),
    ("add testimonial", "createEntry"),
    ("update entry", "updateEntry"),
    ("delete entry", "deleteEntry"),
    ("archive list", "getArchive"),
    ("trash", "getArchive"),
    ("restore archive", "restoreArchive"),
    ("undelete", "restoreArchive"),
    ("read note lines", "readNote"),
    ("write new note", "writeNote"),
    ("append to note", "updateNote"),
    ("replace note lines", "updateNote"),
    ("list vault folder", "listFolder"),
    ("create folder", "createFolder"),
    ("rename note", "moveItem"),
    ("duplicate note", "copyNote"),
    ("archive note", "archiveItem"),
    ("open note in editor", "openNote"),
    ("search notes", "searchNotes"),
];

/// Natural requests, as a user says them.
const NATURAL: &[(&str, &str)] = &[
    ("Show me all the pages on the site", "getPage"),
    ("Which pages are under About?", "getPage"),
    ("What does the home page look like?", "getPage"),
    ("Make a new landing page for our spring sale", "createPage"),
    ("Add a careers page under About", "createPage"),
    ("Change the title of the pricing page", "updatePage"),
    ("Move the team page to the top level", "updatePage"),
    ("Set the SEO description for the contact page", "updatePage"),
    ("Publish the careers page", "updatePage"),
    ("Get rid of the old promo page", "deletePage"),
    ("Please delete the test page", "deletePage"),
    ("What kinds of sections can I add?", "getSectionTemplate"),
    ("Which fields does the hero block have?", "getSectionTemplate"),
    ("What blocks are on the pricing page?", "getSection"),
    ("Show me the sections of the home page", "getSection"),
    ("Add a pricing section with three tiers to the home page", "createSection"),
    ("Put an FAQ at the bottom of the pricing page", "createSection"),
    ("Insert a gallery of team photos on the about page", "createSection"),
    ("Change the hero heading to Welcome", "updateSection"),
    ("Replace the hero image with the team photo", "updateSection"),
    ("Hide the testimonials block for now", "updateSection"),
    ("Move the call to action section above the FAQ", "updateSection"),
    ("Take the FAQ section off the page", "deleteSection"),
    ("Do we have a photo of the office?", "getImage"),
    ("Find me a picture of the team", "getImage"),
    ("Add the photo I uploaded to the media library", "createImage"),
    ("Describe the hero picture for screen readers", "updateImage"),
    ("Tag the studio photo with office", "updateImage"),
    ("Delete that blurry picture", "deleteImage"),
    ("What blog posts do we have?", "getPost"),
    ("Show me the drafts on the blog", "getPost"),
    ("Write a blog post about our new release", "createPost"),
    ("Draft an article about approvals", "createPost"),
    ("Publish the roadmap post", "updatePost"),
    ("Fix the typo in the title of the hello post", "updatePost"),
    ("Give the launch article a cover image", "updatePost"),
    ("Remove the roadmap article from the blog", "deletePost"),
    ("What links are in the footer?", "getNavItem"),
    ("Show me the main menu", "getNavItem"),
    ("Add the pricing page to the header menu", "createNavItem"),
    ("Put a link to our docs in the footer", "createNavItem"),
    ("Rename the Blog link in the menu to News", "updateNavItem"),
    ("Reorder the header menu so Contact comes last", "updateNavItem"),
    ("Remove the legal link from the footer", "deleteNavItem"),
    ("List our customer testimonials", "getEntry"),
    ("Add a testimonial from Lee, our new client", "createEntry"),
    ("Change the rating on Maya's testimonial", "updateEntry"),
    ("Delete the testimonial from Tom", "deleteEntry"),
    ("What did we delete recently?", "getArchive"),
    ("Show me what's in the trash", "getArchive"),
    ("Bring back the page I deleted yesterday", "restoreArchive"),
    ("Undo the deletion of the pricing page", "restoreArchive"),
    ("Recover the removed blog post", "restoreArchive"),
    ("What did I write in my launch note?", "readNote"),
    ("Save these meeting minutes as a new note", "writeNote"),
    ("Add a line to the end of my todo note", "updateNote"),
    ("What notes do I have in the projects folder?", "listFolder"),
    ("Move the kickoff note into the archive folder of meetings", "moveItem"),
    ("Remove the old draft note", "archiveItem"),
    ("Which note mentions the pricing copy?", "searchNotes"),
    ("Show me that note on my screen", "openNote"),
];

fn recall_at_5(queries: &[(&str, &str)]) -> (f64, Vec<String>) {
    let tools = catalog();
    let mut hits = 0;
    let mut misses = Vec::new();
    for (query, expected) in queries {
        let top: Vec<&str> = rank(&tools, query)
            .into_iter()
            .filter(|t| t.category != Category::Default)
            .take(5)
            .map(|t| t.name)
            .collect();
        if top.contains(expected) {
            hits += 1;
        } else {
            misses.push(format!("{query:?} → expected {expected}, got {top:?}"));
        }
    }
    (hits as f64 / queries.len() as f64, misses)
}

#[test]
fn recall_at_5_meets_the_bar_on_each_kind() {
    assert!(KEYWORD.len() + NATURAL.len() >= 80);
    let (keyword, keyword_misses) = recall_at_5(KEYWORD);
    let (natural, natural_misses) = recall_at_5(NATURAL);
    println!("keyword queries: {} recall@5 = {keyword:.3}", KEYWORD.len());
    println!("natural queries: {} recall@5 = {natural:.3}", NATURAL.len());
    for m in keyword_misses.iter().chain(&natural_misses) {
        println!("miss: {m}");
    }
    assert!(keyword >= 0.95, "keyword recall@5 {keyword:.3}: {keyword_misses:#?}");
    assert!(natural >= 0.95, "natural recall@5 {natural:.3}: {natural_misses:#?}");
}

#[test]
fn top_1_is_mostly_right_too() {
    let tools = catalog();
    let all: Vec<_> = KEYWORD.iter().chain(NATURAL).collect();
    let top1 = all.iter().filter(|(q, e)| rank(&tools, q).first().map(|t| t.name) == Some(*e)).count();
    let share = top1 as f64 / all.len() as f64;
    println!("recall@1 over {} queries = {share:.3}", all.len());
    assert!(share >= 0.7, "recall@1 {share:.3}");
}
