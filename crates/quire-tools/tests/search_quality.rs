//! searchTools quality: recall@1 and recall@5 over queries as a model writes them
//! (keywords) and as a user says them (natural requests), and the ranking
//! fused with an embedding model's. Run with --nocapture to see the figures
//! and the misses.

use quire_core::access::Group;
use quire_core::model::Surface;
use quire_store::Scope;
use quire_tools::embed::{EmbedFuture, Embedder};
use quire_tools::search::{Learning, RequestWords, SearchIndex};
use quire_tools::{CallContext, Category, Registry, Services, catalog};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    ("publish page", "publishContent"),
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
    ("publish post", "publishContent"),
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
    // pages
    ("Show me all the pages on the site", "getPage"),
    ("Which pages are under About?", "getPage"),
    ("What does the home page look like?", "getPage"),
    ("Is there already a page for our refund policy?", "getPage"),
    ("What's the URL of the contact page?", "getPage"),
    ("Give me an overview of how the site is structured", "getPage"),
    ("Does the site have a privacy policy yet?", "getPage"),
    ("What's the slug of the about us page?", "getPage"),
    ("Make a new landing page for our spring sale", "createPage"),
    ("Add a careers page under About", "createPage"),
    ("We need a page for the summer workshop", "createPage"),
    ("Set up a contact us page", "createPage"),
    ("Spin up a landing page for the webinar", "createPage"),
    ("Start a new page called Partners", "createPage"),
    ("Change the title of the pricing page", "updatePage"),
    ("Move the team page to the top level", "updatePage"),
    ("Set the SEO description for the contact page", "updatePage"),
    ("Publish the careers page", "publishContent"),
    ("Move the page to a new URL", "updatePage"),
    ("Change the address of the about page to /company", "updatePage"),
    ("Rename the Services page to What we do", "updatePage"),
    ("The meta title of the home page is too long, shorten it", "updatePage"),
    ("Put the FAQ page under Support", "updatePage"),
    ("Give the contact page a better search engine description", "updatePage"),
    ("Stop search engines from indexing the thank-you page", "updatePage"),
    ("Get rid of the old promo page", "deletePage"),
    ("Please delete the test page", "deletePage"),
    ("We don't need the 2019 event page any more, delete it", "deletePage"),
    ("Scrap the draft landing page", "deletePage"),
    ("Bin the duplicate about page", "deletePage"),
    // section templates and sections
    ("What kinds of sections can I add?", "getSectionTemplate"),
    ("Which fields does the hero block have?", "getSectionTemplate"),
    ("What block types are available for pages?", "getSectionTemplate"),
    ("What options does the pricing component take?", "getSectionTemplate"),
    ("Which layouts can I choose from?", "getSectionTemplate"),
    ("What blocks are on the pricing page?", "getSection"),
    ("Show me the sections of the home page", "getSection"),
    ("What's the current text in the hero on the homepage?", "getSection"),
    ("Read me the FAQ content on the support page", "getSection"),
    ("What's in the banner at the top of the about page?", "getSection"),
    ("Add a pricing section with three tiers to the home page", "createSection"),
    ("Put an FAQ at the bottom of the pricing page", "createSection"),
    ("Insert a gallery of team photos on the about page", "createSection"),
    ("Add a call to action block to the services page", "createSection"),
    ("Give the home page a hero with a sign-up button", "createSection"),
    ("Stick a testimonials strip under the hero", "createSection"),
    ("Add a questions and answers block to the support page", "createSection"),
    ("Change the hero heading to Welcome", "updateSection"),
    ("Replace the hero image with the team photo", "updateSection"),
    ("Hide the testimonials block for now", "updateSection"),
    ("Move the call to action section above the FAQ", "updateSection"),
    ("Change the button text in the banner to Sign up", "updateSection"),
    ("Update the prices in the pricing table", "updateSection"),
    ("Reword the intro paragraph on the homepage", "updateSection"),
    ("Swap the order of the first two blocks on the about page", "updateSection"),
    ("The hero's subtitle has a typo, fix it", "updateSection"),
    ("Take the FAQ section off the page", "deleteSection"),
    ("Remove the newsletter sign-up block from the home page", "deleteSection"),
    ("Drop the gallery from the about page", "deleteSection"),
    ("The pricing page doesn't need the comparison table block any more", "deleteSection"),
    // images
    ("Do we have a photo of the office?", "getImage"),
    ("Find me a picture of the team", "getImage"),
    ("Which images are in our library?", "getImage"),
    ("Have we got any shots of the product?", "getImage"),
    ("Look for a picture with a dog in our media", "getImage"),
    ("Show me the logos we uploaded", "getImage"),
    ("Add the photo I uploaded to the media library", "createImage"),
    ("I just uploaded a screenshot, save it to the library", "createImage"),
    ("Put this PNG into our media", "createImage"),
    ("Store the attached picture so we can use it", "createImage"),
    ("Describe the hero picture for screen readers", "updateImage"),
    ("Tag the studio photo with office", "updateImage"),
    ("Write alt text for the team photo", "updateImage"),
    ("The caption on the beach picture is wrong", "updateImage"),
    ("Categorise the product shots as catalogue", "updateImage"),
    ("Delete that blurry picture", "deleteImage"),
    ("Get rid of the duplicate logo", "deleteImage"),
    ("Remove the old headshots from the media", "deleteImage"),
    ("That photo of the office is outdated, bin it", "deleteImage"),
    // posts
    ("What blog posts do we have?", "getPost"),
    ("Show me the drafts on the blog", "getPost"),
    ("What did we put on the blog last month?", "getPost"),
    ("Find the article about pricing changes", "getPost"),
    ("Which stories are still unpublished?", "getPost"),
    ("Read me the latest news item", "getPost"),
    ("Write a blog post about our new release", "createPost"),
    ("Draft an article about approvals", "createPost"),
    ("Announce the new office on the blog", "createPost"),
    ("Put together a news item about the award", "createPost"),
    ("Compose a short write-up of the conference for the blog", "createPost"),
    ("Start a post about our summer plans", "createPost"),
    ("Publish the roadmap post", "publishContent"),
    ("Fix the typo in the title of the hello post", "updatePost"),
    ("Give the launch article a cover image", "updatePost"),
    ("Add a paragraph to the end of the launch article", "updatePost"),
    ("Change the author of the hiring post", "updatePost"),
    ("Update the excerpt of the welcome article", "updatePost"),
    ("Tag the conference write-up on the blog with events", "updatePost"),
    ("Remove the roadmap article from the blog", "deletePost"),
    ("Delete the duplicate welcome post", "deletePost"),
    ("Scrap the blog entry about the old pricing", "deletePost"),
    // navigation
    ("What links are in the footer?", "getNavItem"),
    ("Show me the main menu", "getNavItem"),
    ("What's in the site's top bar?", "getNavItem"),
    ("Which pages appear in the navigation?", "getNavItem"),
    ("Where does the Shop link in the menu point to?", "getNavItem"),
    ("Add the pricing page to the header menu", "createNavItem"),
    ("Put a link to our docs in the footer", "createNavItem"),
    ("Add Careers to the top navigation", "createNavItem"),
    ("Link to the new blog from the main menu", "createNavItem"),
    ("Add Instagram to the footer links", "createNavItem"),
    ("Rename the Blog link in the menu to News", "updateNavItem"),
    ("Reorder the header menu so Contact comes last", "updateNavItem"),
    ("Point the Docs menu item at the new URL", "updateNavItem"),
    ("Nest the Team link under About in the menu", "updateNavItem"),
    ("Change the label of the contact link in the header", "updateNavItem"),
    ("Remove the legal link from the footer", "deleteNavItem"),
    ("Take Shop out of the main menu", "deleteNavItem"),
    ("Drop the Twitter link from the footer", "deleteNavItem"),
    // collections
    ("List our customer testimonials", "getEntry"),
    ("Which team members are in the staff collection?", "getEntry"),
    ("What products are in the catalogue collection?", "getEntry"),
    ("Find the testimonial from Maya", "getEntry"),
    ("Add a testimonial from Lee, our new client", "createEntry"),
    ("Add Priya to the team members collection", "createEntry"),
    ("Put a new product in the products collection", "createEntry"),
    ("Record a new customer quote from Acme", "createEntry"),
    ("Change the rating on Maya's testimonial", "updateEntry"),
    ("Update Sam's job title in the team collection", "updateEntry"),
    ("Correct the price of the blue mug in products", "updateEntry"),
    ("Delete the testimonial from Tom", "deleteEntry"),
    ("Remove Jo from the staff collection, she left", "deleteEntry"),
    ("Take the discontinued product out of the catalogue collection", "deleteEntry"),
    // publishing
    ("Make the new pricing page live", "publishContent"),
    ("Push my changes to the homepage live", "publishContent"),
    ("Go live with the new about page", "publishContent"),
    ("Let visitors see the drafts I finished", "publishContent"),
    ("Take the pricing page offline but keep it", "unpublishContent"),
    ("Pull the roadmap post from the public site", "unpublishContent"),
    ("Unpublish the event page", "unpublishContent"),
    ("Throw away my changes to the homepage", "discardDraft"),
    ("Forget the edits I made to the pricing page and keep what is live", "discardDraft"),
    ("Go back to the published version of the contact page", "discardDraft"),
    // releases
    ("What's in the spring launch?", "getRelease"),
    ("Show me the releases", "getRelease"),
    ("Which changes are bundled to go out together?", "getRelease"),
    ("Is anything queued up for the Friday launch?", "getRelease"),
    ("Prepare a launch for the new product line", "createRelease"),
    ("Set up a bundle of changes to ship together next week", "createRelease"),
    ("Start a release for the autumn campaign", "createRelease"),
    ("Add the new pricing page to the spring launch", "updateRelease"),
    ("Take the about page out of the release", "updateRelease"),
    ("Rename the release to Summer launch", "updateRelease"),
    ("Ship the spring launch", "publishRelease"),
    ("Publish everything in the release now", "publishRelease"),
    ("Launch the autumn campaign release", "publishRelease"),
    ("Roll back yesterday's launch", "revertRelease"),
    ("The launch broke things, undo it", "revertRelease"),
    ("Revert the spring release", "revertRelease"),
    ("Cancel the summer launch, we're not doing it", "discardRelease"),
    ("Abandon the release for the campaign", "discardRelease"),
    // archive
    ("What did we delete recently?", "getArchive"),
    ("Show me what's in the trash", "getArchive"),
    ("Who deleted the careers page?", "getArchive"),
    ("Is the old pricing page in the bin?", "getArchive"),
    ("Bring back the page I deleted yesterday", "restoreArchive"),
    ("Undo the deletion of the pricing page", "restoreArchive"),
    ("Recover the removed blog post", "restoreArchive"),
    ("I deleted the wrong menu link, get it back", "restoreArchive"),
    ("Undelete the team photo", "restoreArchive"),
    // notes
    ("What did I write in my launch note?", "readNote"),
    ("Read me my meeting notes from Monday", "readNote"),
    ("What's in my ideas file?", "readNote"),
    ("Show me the first lines of the todo note", "readNote"),
    ("Save these meeting minutes as a new note", "writeNote"),
    ("Start a note for the offsite planning", "writeNote"),
    ("Jot down: call Ana about the deck", "writeNote"),
    ("Create a to-do list in my vault", "writeNote"),
    ("Make a markdown file with the interview questions", "writeNote"),
    ("Write down my ideas for the newsletter", "writeNote"),
    ("Add a line to the end of my todo note", "updateNote"),
    ("Add 'buy milk' to my to-do list", "updateNote"),
    ("Append today's decisions to the meeting notes", "updateNote"),
    ("Replace line 4 of the ideas note", "updateNote"),
    ("Tick off 'send invoice' in my tasks file", "updateNote"),
    ("What notes do I have in the projects folder?", "listFolder"),
    ("What's in my vault?", "listFolder"),
    ("Show me the files in the meetings directory", "listFolder"),
    ("List everything in the inbox folder", "listFolder"),
    ("Make a folder for client notes", "createFolder"),
    ("Create a directory called 2024 in the vault", "createFolder"),
    ("Set up a new folder for the research", "createFolder"),
    ("Move the kickoff note into the archive folder of meetings", "moveItem"),
    ("Rename the file ideas.md to backlog.md", "moveItem"),
    ("Put the draft note in the projects folder", "moveItem"),
    ("Rename my notes folder to journal", "moveItem"),
    ("File the call notes under clients/acme", "moveItem"),
    ("Duplicate the meeting template note", "copyNote"),
    ("Make a copy of the weekly plan note", "copyNote"),
    ("Clone my checklist for next week", "copyNote"),
    ("Remove the old draft note", "archiveItem"),
    ("Delete the scratch file in my vault", "archiveItem"),
    ("Clear out the old meeting notes folder", "archiveItem"),
    ("Tidy away last year's journal", "archiveItem"),
    ("Show me that note on my screen", "openNote"),
    ("Open the todo list in the editor", "openNote"),
    ("Pull up my ideas note so I can edit it", "openNote"),
    ("Which note mentions the pricing copy?", "searchNotes"),
    ("Where did I write about the venue?", "searchNotes"),
    ("Find my notes that mention Ana", "searchNotes"),
    ("Search my vault for the word invoice", "searchNotes"),
    // the outside world
    ("Find a picture online of a mountain lake", "browseImages"),
    ("Look for a free stock photo of people working", "browseImages"),
    ("We need a nice photo of a coffee shop, search Unsplash", "browseImages"),
    ("Get me some royalty-free images of the sea", "browseImages"),
    ("Use that Pexels photo on our site", "importImage"),
    ("Download the second stock photo into our library", "importImage"),
    ("Bring the Unsplash shot into the media", "importImage"),
    ("Look up the latest news about AI regulation", "searchWeb"),
    ("Google the opening hours of the British Museum", "searchWeb"),
    ("Research what competitors charge for hosting", "searchWeb"),
    ("Find out online what the population of Lisbon is", "searchWeb"),
    ("Summarise the article at this link", "fetchContent"),
    ("Read https://example.com/blog/post and tell me the main points", "fetchContent"),
    ("What does the page at example.com/about say?", "fetchContent"),
    ("Grab the text of that web page", "fetchContent"),
    ("Call the weather API for Paris", "httpGet"),
    ("Get the JSON from our status endpoint", "httpGet"),
    ("Check what the public API returns for product 42", "httpGet"),
    ("Send this data to our Zapier webhook", "httpPost"),
    ("Notify Slack through the incoming webhook", "httpPost"),
    ("Post the form results to the CRM endpoint", "httpPost"),
    // written after the first tuning, as a check, then tuned on
    ("can you tell me which pages we have under Services", "getPage"),
    ("I need a new page for the autumn menu", "createPage"),
    ("change the about page's web address to /who-we-are", "updatePage"),
    ("the old events page can go", "deletePage"),
    ("what goes into a testimonial slider block?", "getSectionTemplate"),
    ("what's written in the intro on the home page?", "getSection"),
    ("add a contact form block at the end of the contact page", "createSection"),
    ("make the hero headline say Hello there", "updateSection"),
    ("lose the video block on the about page", "deleteSection"),
    ("any pictures of our storefront in the library?", "getImage"),
    ("add the uploaded banner.jpg to our images", "createImage"),
    ("fill in the missing alt text on the team photo", "updateImage"),
    ("trash the blurry team shot", "deleteImage"),
    ("list the articles we wrote this year", "getPost"),
    ("write up the product launch as a blog article", "createPost"),
    ("change the category of the hiring post to jobs", "updatePost"),
    ("take the old hiring post off the blog for good", "deletePost"),
    ("what's in the footer navigation?", "getNavItem"),
    ("add a Contact link to the top menu", "createNavItem"),
    ("move the Pricing link to the right of Features in the header", "updateNavItem"),
    ("remove the Careers link from the navigation", "deleteNavItem"),
    ("show me all team members in the collection", "getEntry"),
    ("add a new FAQ question to the faq collection", "createEntry"),
    ("edit the title of the product called Mug", "updateEntry"),
    ("remove the outdated partner from the partners collection", "deleteEntry"),
    ("push the new homepage to the public site", "publishContent"),
    ("take the summer sale page down but don't delete it", "unpublishContent"),
    ("undo my unsaved draft edits to the about page and keep the live one", "discardDraft"),
    ("what's going out in the next release?", "getRelease"),
    ("group the pricing changes into a launch for Monday", "createRelease"),
    ("include the contact page in the Monday release", "updateRelease"),
    ("go ahead and ship the Monday release", "publishRelease"),
    ("the Monday release was a mistake, roll it back", "revertRelease"),
    ("scrap the Monday release, we won't ship it", "discardRelease"),
    ("what have we thrown away lately?", "getArchive"),
    ("restore the post I removed by mistake", "restoreArchive"),
    ("what's in the note called roadmap?", "readNote"),
    ("new note: ideas for the spring campaign", "writeNote"),
    ("add 'email the printer' to my tasks note", "updateNote"),
    ("which files are in my notes?", "listFolder"),
    ("make a new folder called clients", "createFolder"),
    ("rename ideas.md to someday.md", "moveItem"),
    ("copy the invoice template note to a new one for March", "copyNote"),
    ("get rid of the scratch note", "archiveItem"),
    ("open my shopping list on screen", "openNote"),
    ("search my notes for anything about the budget", "searchNotes"),
    ("find me a royalty free photo of a forest", "browseImages"),
    ("import that Unsplash photo of the forest", "importImage"),
    ("what are people saying online about static site generators?", "searchWeb"),
    ("give me the gist of https://example.org/post", "fetchContent"),
    ("query the exchange rate API", "httpGet"),
    ("fire the webhook with the new order", "httpPost"),
    // a second check
    ("how many pages do we have in total?", "getPage"),
    ("is the pricing page a child of products?", "getPage"),
    ("I'd like a page about our history", "createPage"),
    ("add a sub-page called Team below Company", "createPage"),
    ("the contact page should live at /get-in-touch", "updatePage"),
    ("can you make the FAQ page a child of Help?", "updatePage"),
    ("please remove the page called Old Offers", "deletePage"),
    ("what does a pricing block need?", "getSectionTemplate"),
    ("list the section types", "getSectionTemplate"),
    ("what's on the about page right now?", "getSection"),
    ("add a newsletter signup block to the blog page", "createSection"),
    ("put three feature cards under the hero on the home page", "createSection"),
    ("change the CTA button to say Book a demo", "updateSection"),
    ("move the gallery block to the bottom of the page", "updateSection"),
    ("delete the second hero from the landing page", "deleteSection"),
    ("do we have any images of the warehouse?", "getImage"),
    ("show me every picture tagged summer", "getImage"),
    ("add this screenshot to the media library", "createImage"),
    ("give the warehouse photo a better description", "updateImage"),
    ("the team photo needs alt text", "updateImage"),
    ("remove the duplicate product shot", "deleteImage"),
    ("what was the last thing we posted on the blog?", "getPost"),
    ("find blog posts mentioning sustainability", "getPost"),
    ("blog about our new partnership with Acme", "createPost"),
    ("write a short news piece about the office move", "createPost"),
    ("set the featured image of the partnership post", "updatePost"),
    ("change the hiring post's excerpt", "updatePost"),
    ("delete the test article", "deletePost"),
    ("what's in the main navigation?", "getNavItem"),
    ("add a Pricing entry to the footer menu", "createNavItem"),
    ("make a new menu link to the careers page", "createNavItem"),
    ("rename Home to Start in the menu", "updateNavItem"),
    ("make the Contact link open the new contact page", "updateNavItem"),
    ("get rid of the Blog link in the header", "deleteNavItem"),
    ("what testimonials are published?", "getEntry"),
    ("add a new team member named Ola to the team collection", "createEntry"),
    ("Ola's job title changed to Head of Design, update the team collection", "updateEntry"),
    ("remove the 2-star review from the testimonials collection", "deleteEntry"),
    ("publish the new FAQ page", "publishContent"),
    ("make the menu changes live", "publishContent"),
    ("take the careers page off the public site but keep the draft", "unpublishContent"),
    ("revert the homepage to the live version", "discardDraft"),
    ("list all releases that are scheduled", "getRelease"),
    ("create a release called Black Friday", "createRelease"),
    ("stage the new pricing page in the Black Friday release", "updateRelease"),
    ("publish the Black Friday release", "publishRelease"),
    ("undo the Black Friday release", "revertRelease"),
    ("cancel the Black Friday release", "discardRelease"),
    ("show the trash can", "getArchive"),
    ("restore the FAQ section I removed", "restoreArchive"),
    ("show me what my standup note says", "readNote"),
    ("take a note: the printer is broken", "writeNote"),
    ("add today's standup to the end of my log note", "updateNote"),
    ("list the notes in my work folder", "listFolder"),
    ("new folder called archive-2023 in my notes", "createFolder"),
    ("move standup.md into the work folder", "moveItem"),
    ("make a duplicate of my packing list", "copyNote"),
    ("archive my old journal notes", "archiveItem"),
    ("display the standup note in my editor", "openNote"),
    ("look through my notes for the wifi password", "searchNotes"),
    ("search stock photos for a sunset over the city", "browseImages"),
    ("import photo 12345 from Pexels", "importImage"),
    ("search the internet for the best CMS for small shops", "searchWeb"),
    ("fetch https://example.com/pricing and summarise it", "fetchContent"),
    ("make a GET request to the status API", "httpGet"),
    ("send the new signups to our webhook", "httpPost"),
    // a third check
    ("pull up a list of every page", "getPage"),
    ("we should have a page for the new shop", "createPage"),
    ("retitle the services page to Our services", "updatePage"),
    ("kill the old landing page", "deletePage"),
    ("which fields can I fill in on a gallery block?", "getSectionTemplate"),
    ("read the hero copy on the homepage", "getSection"),
    ("drop a testimonials slider onto the about page", "createSection"),
    ("the hero text on the home page is outdated, rewrite it", "updateSection"),
    ("get the banner off the pricing page", "deleteSection"),
    ("is there a good photo of our founders?", "getImage"),
    ("upload this logo to the library", "createImage"),
    ("the product shot needs a caption", "updateImage"),
    ("delete every photo of the old office", "deleteImage"),
    ("show the five newest blog posts", "getPost"),
    ("could you draft a blog post on remote work?", "createPost"),
    ("the intro of the remote work article is too long, trim it", "updatePost"),
    ("the remote work article should go", "deletePost"),
    ("what does the header menu link to?", "getNavItem"),
    ("stick the blog in the top menu", "createNavItem"),
    ("move the About link to the end of the menu", "updateNavItem"),
    ("take Contact off the footer menu", "deleteNavItem"),
    ("which products are in the shop collection?", "getEntry"),
    ("add a review from Sam to the testimonials", "createEntry"),
    ("change Sam's review to five stars", "updateEntry"),
    ("delete Sam's review", "deleteEntry"),
    ("put the shop page live", "publishContent"),
    ("hide the shop page from the public but keep it", "unpublishContent"),
    ("throw away the unpublished edits on the shop page", "discardDraft"),
    ("which releases are waiting?", "getRelease"),
    ("bundle the shop changes into a release", "createRelease"),
    ("publish the shop launch", "publishRelease"),
    ("what's in the archive?", "getArchive"),
    ("restore the shop page", "restoreArchive"),
    ("what's in my groceries note?", "readNote"),
    ("write a note with today's todo items", "writeNote"),
    ("cross 'milk' off my groceries list", "updateNote"),
    ("what's in the recipes folder?", "listFolder"),
    ("start a folder for recipes", "createFolder"),
    ("rename groceries.md to shopping.md", "moveItem"),
    ("copy the recipes note", "copyNote"),
    ("throw the groceries note away", "archiveItem"),
    ("open the recipes note for me", "openNote"),
    ("which of my notes talk about pasta?", "searchNotes"),
    ("find stock images of pasta", "browseImages"),
    ("save the pasta photo from Unsplash to our media", "importImage"),
    ("search online for pasta recipes", "searchWeb"),
    ("what does this link say: https://example.com/pasta", "fetchContent"),
    ("call https://api.example.com/v1/recipes and show me the JSON", "httpGet"),
    ("post the order to https://hooks.example.com/new", "httpPost"),
    // a fourth check
    ("do we already have a terms and conditions page?", "getPage"),
    ("spin up a page for the spring webinar under Events", "createPage"),
    ("the careers page title has a typo", "updatePage"),
    ("nuke the placeholder page", "deletePage"),
    ("what goes in a team grid section?", "getSectionTemplate"),
    ("show me the content of the hero on the pricing page", "getSection"),
    ("add a logo strip to the home page", "createSection"),
    ("swap the hero background for the sunset photo", "updateSection"),
    ("get rid of the empty text block on the about page", "deleteSection"),
    ("find pictures of the new van", "getImage"),
    ("register the image I just dropped in uploads", "createImage"),
    ("the van photo's alt text is wrong", "updateImage"),
    ("trash every blurry van shot", "deleteImage"),
    ("any drafts on the blog I haven't finished?", "getPost"),
    ("I want a blog post about the van launch", "createPost"),
    ("add a cover to the van article", "updatePost"),
    ("get rid of the duplicate van article", "deletePost"),
    ("which links does the footer have?", "getNavItem"),
    ("put a Shop link in the header", "createNavItem"),
    ("the Shop link should point to /store", "updateNavItem"),
    ("drop Shop from the header", "deleteNavItem"),
    ("show all partners in the partners collection", "getEntry"),
    ("add Globex to the partners collection", "createEntry"),
    ("update Globex's logo in the partners collection", "updateEntry"),
    ("Globex isn't a partner anymore, remove them from the collection", "deleteEntry"),
    ("make the store page public", "publishContent"),
    ("unpublish the van article but keep the draft", "unpublishContent"),
    ("scrap my edits to the store page, keep the live version", "discardDraft"),
    ("what will go out with the van launch?", "getRelease"),
    ("start a launch for the van", "createRelease"),
    ("ship the van launch now", "publishRelease"),
    ("roll the van launch back", "revertRelease"),
    ("what got deleted this week?", "getArchive"),
    ("bring the van article back", "restoreArchive"),
    ("read my van ideas note", "readNote"),
    ("jot a note about the van insurance", "writeNote"),
    ("append 'call the garage' to my van note", "updateNote"),
    ("what's in the van folder?", "listFolder"),
    ("make a folder called van", "createFolder"),
    ("move the van note into projects", "moveItem"),
    ("duplicate the van note", "copyNote"),
    ("archive the van folder", "archiveItem"),
    ("open the van note", "openNote"),
    ("find the note where I wrote the garage's number", "searchNotes"),
    ("find a free photo of a van on Unsplash", "browseImages"),
    ("bring that Unsplash van photo into our library", "importImage"),
    ("what do reviewers say online about electric vans?", "searchWeb"),
    ("summarise https://example.com/van-review", "fetchContent"),
    ("hit the public API at https://api.example.com/vans and show me the result", "httpGet"),
    ("send the van order to the supplier's webhook", "httpPost"),
];

/// More natural requests, one `request<TAB>tool` a line: a fifth batch,
/// written as editors and site owners speak (see its header).
const PEOPLE: &str = include_str!("search_quality/people.tsv");

/// A sixth batch, written from a plain-language list of what the tools do
/// (see its header): vague wishes, questions, typos, words no tool says.
const BATCH6: &str = include_str!("search_quality/batch6.tsv");

/// A seventh batch, written after the sixth was tuned on: terse requests,
/// several clauses, stories and complaints (see its header).
const BATCH7: &str = include_str!("search_quality/batch7.tsv");

/// An eighth batch, written after the seventh was tuned on: jargon,
/// requests sharing no word with their tool, vague wishes (see its header).
const BATCH8: &str = include_str!("search_quality/batch8.tsv");

/// A ninth batch, written after the eighth was tuned on: very short
/// requests, texting style, two wishes in one, complaints (see its header).
const BATCH9: &str = include_str!("search_quality/batch9.tsv");

/// A tenth batch, written after the ninth was tuned on: the assistants,
/// contexts, saved work and the form on screen in editors' words, and kinds
/// of request earlier batches found weak (see its header).
const BATCH10: &str = include_str!("search_quality/batch10.tsv");

/// An eleventh batch, written after the tenth was tuned on, from a plain
/// list of the catalog's capabilities, in words most tools do not say (see
/// its header).
const BATCH11: &str = include_str!("search_quality/batch11.tsv");

/// The requests of a `request<TAB>tool` file; `#` lines are comments.
fn requests(tsv: &'static str) -> Vec<(&'static str, &'static str)> {
    tsv.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (request, tool) = line.split_once('\t').unwrap_or_else(|| panic!("no tab in {line:?}"));
            (request.trim(), tool.trim())
        })
        .collect()
}

/// Recall@1 and recall@5 of `queries` (tools searchTools answers: the
/// always-active ones left out), the queries missed at 5, and those found
/// in the top 5 but not first.
fn recall(queries: &[(&str, &str)]) -> (f64, f64, Vec<String>, Vec<String>) {
    let tools = catalog();
    recall_of(&SearchIndex::new(&tools), queries)
}

/// [`recall`] by `index`, built from the catalog.
fn recall_of(index: &SearchIndex, queries: &[(&str, &str)]) -> (f64, f64, Vec<String>, Vec<String>) {
    let tools = catalog();
    let (mut at1, mut at5) = (0, 0);
    let (mut misses, mut second) = (Vec::new(), Vec::new());
    for (query, expected) in queries {
        assert!(tools.iter().any(|t| t.name == *expected), "{query:?} is labelled {expected}, no tool of the catalog");
        let top: Vec<&str> = index
            .rank(&tools, query)
            .into_iter()
            .filter(|t| t.category != Category::Default)
            .take(5)
            .map(|t| t.name)
            .collect();
        at1 += usize::from(top.first() == Some(expected));
        if top.contains(expected) {
            at5 += 1;
            if top.first() != Some(expected) {
                second.push(format!("{query:?} → expected {expected}, got {top:?}"));
            }
        } else {
            misses.push(format!("{query:?} → expected {expected}, got {top:?}"));
        }
    }
    let n = queries.len() as f64;
    (at1 as f64 / n, at5 as f64 / n, misses, second)
}

#[test]
fn recall_meets_the_bar_on_each_kind() {
    let people = requests(PEOPLE);
    let batch6 = requests(BATCH6);
    let batch7 = requests(BATCH7);
    let batch8 = requests(BATCH8);
    let batch9 = requests(BATCH9);
    let batch10 = requests(BATCH10);
    let batch11 = requests(BATCH11);
    assert!(NATURAL.len() >= 200 && people.len() >= 150 && batch6.len() >= 250 && batch7.len() >= 150);
    assert!(batch8.len() >= 100 && batch9.len() >= 90 && batch10.len() >= 150 && batch11.len() >= 150);
    let natural: Vec<(&str, &str)> = NATURAL
        .iter()
        .copied()
        .chain(people.iter().copied())
        .chain(batch6.iter().copied())
        .chain(batch7.iter().copied())
        .chain(batch8.iter().copied())
        .chain(batch9.iter().copied())
        .chain(batch10.iter().copied())
        .chain(batch11.iter().copied())
        .collect();
    let (keyword1, keyword5, keyword_misses, keyword_second) = recall(KEYWORD);
    let (natural1, natural5, natural_misses, natural_second) = recall(&natural);
    let (people1, people5, _, _) = recall(&people);
    let (batch1, batch5, _, _) = recall(&batch6);
    let (seventh1, seventh5, _, _) = recall(&batch7);
    let (eighth1, eighth5, _, _) = recall(&batch8);
    let (ninth1, ninth5, _, _) = recall(&batch9);
    let (tenth1, tenth5, _, _) = recall(&batch10);
    let (eleventh1, eleventh5, _, _) = recall(&batch11);
    println!("keyword queries: {} recall@1 = {keyword1:.3} recall@5 = {keyword5:.3}", KEYWORD.len());
    println!("natural queries: {} recall@1 = {natural1:.3} recall@5 = {natural5:.3}", natural.len());
    println!("  of which people.tsv: {} recall@1 = {people1:.3} recall@5 = {people5:.3}", people.len());
    println!("  of which batch6.tsv: {} recall@1 = {batch1:.3} recall@5 = {batch5:.3}", batch6.len());
    println!("  of which batch7.tsv: {} recall@1 = {seventh1:.3} recall@5 = {seventh5:.3}", batch7.len());
    println!("  of which batch8.tsv: {} recall@1 = {eighth1:.3} recall@5 = {eighth5:.3}", batch8.len());
    println!("  of which batch9.tsv: {} recall@1 = {ninth1:.3} recall@5 = {ninth5:.3}", batch9.len());
    println!("  of which batch10.tsv: {} recall@1 = {tenth1:.3} recall@5 = {tenth5:.3}", batch10.len());
    println!("  of which batch11.tsv: {} recall@1 = {eleventh1:.3} recall@5 = {eleventh5:.3}", batch11.len());
    for m in keyword_misses.iter().chain(&natural_misses) {
        println!("miss: {m}");
    }
    for m in keyword_second.iter().chain(&natural_second) {
        println!("not first: {m}");
    }
    assert!(keyword5 >= 0.99, "keyword recall@5 {keyword5:.3}: {keyword_misses:#?}");
    assert!(natural5 >= 0.95, "natural recall@5 {natural5:.3}: {natural_misses:#?}");
    assert!(keyword1 >= 0.80, "keyword recall@1 {keyword1:.3}");
    assert!(natural1 >= 0.80, "natural recall@1 {natural1:.3}");
}

/// An embedding model that knows a word no tool says: "zorblat" means
/// searching the web. Other words count as a hashed bag of words.
#[derive(Debug)]
struct Zorblat {
    model: &'static str,
    calls: AtomicUsize,
    broken: bool,
}

impl Zorblat {
    fn new(model: &'static str, broken: bool) -> Arc<Self> {
        Arc::new(Zorblat { model, calls: AtomicUsize::new(0), broken })
    }
}

impl Embedder for Zorblat {
    fn model(&self) -> &str {
        self.model
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if self.broken {
                return Err("the model is down".to_string());
            }
            let vector = |t: &String| {
                let mut v = vec![0f32; 64];
                if t.contains("zorblat") || t.starts_with("search web.") {
                    v[0] = 10.0;
                }
                for w in t.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2) {
                    if w != "zorblat" {
                        let h = w.bytes().fold(2166136261u32, |h, b| (h ^ u32::from(b)).wrapping_mul(16777619));
                        v[1 + (h % 63) as usize] += 1.0;
                    }
                }
                v
            };
            Ok(texts.iter().map(vector).collect())
        })
    }
}

/// searchTools over a registry with `embedder`: the names it answers.
async fn search_with(embedder: Option<Arc<Zorblat>>, query: &str) -> (Vec<String>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let store = quire_store::testing::open(dir.path()).await.unwrap();
    let mut services = Services::new(store, dir.path());
    services.embedder = embedder.map(|e| e as Arc<dyn Embedder>);
    let registry = Registry::new(services);
    let ctx = CallContext::new("user:admin", Group::Admin, Scope::new("site", ""), Surface::Cli);
    let found = registry.call(&ctx, "searchTools", json!({ "query": query })).await;
    assert_eq!(found["success"], true, "{found}");
    let names = found["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    (names, found)
}

#[tokio::test]
async fn an_embedding_model_joins_the_ranking_and_tools_are_embedded_once() {
    let (words, alone) = search_with(None, "zorblat").await;
    assert!(!words.contains(&"searchWeb".to_string()), "{words:?}");
    let model = Zorblat::new("zorblat-1", false);
    let (hybrid, fused) = search_with(Some(Arc::clone(&model)), "zorblat").await;
    assert_eq!(hybrid[0], "searchWeb", "{hybrid:?}");
    // the answer keeps its shape
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&alone), keys(&fused));
    assert_eq!(keys(&alone["tools"][0]), keys(&fused["tools"][0]));
    // the tools and the query, then the next query alone
    assert_eq!(model.calls.load(Ordering::SeqCst), 2);
    let (again, _) = search_with(Some(Arc::clone(&model)), "zorblat the news").await;
    assert_eq!(model.calls.load(Ordering::SeqCst), 3);
    assert!(again[..5].contains(&"searchWeb".to_string()), "{again:?}");
    // what the words find well stays first
    let (menu, _) = search_with(Some(model), "add a menu link").await;
    assert_eq!(menu[0], "createNavItem", "{menu:?}");
}

#[tokio::test]
async fn a_failing_embedding_model_leaves_the_words_ranking() {
    let (words, _) = search_with(None, "bring back the page I deleted").await;
    let (fallback, _) = search_with(Some(Zorblat::new("zorblat-down", true)), "bring back the page I deleted").await;
    assert_eq!(words, fallback);
    assert_eq!(words[0], "restoreArchive");
}

/// Every tuning request, with the file or table it is in.
fn tuning() -> Vec<(&'static str, (&'static str, &'static str))> {
    let files = [
        ("people", PEOPLE),
        ("batch6", BATCH6),
        ("batch7", BATCH7),
        ("batch8", BATCH8),
        ("batch9", BATCH9),
        ("batch10", BATCH10),
        ("batch11", BATCH11),
    ];
    let tables = KEYWORD.iter().map(|q| ("keyword", *q)).chain(NATURAL.iter().map(|q| ("natural", *q)));
    tables.chain(files.into_iter().flat_map(|(name, tsv)| requests(tsv).into_iter().map(move |q| (name, q)))).collect()
}

#[test]
fn the_table_of_requests_words_is_up_to_date() {
    let all: Vec<(&str, &str)> = tuning().into_iter().map(|(_, q)| q).collect();
    assert!(
        RequestWords::count(&all) == RequestWords::tuning(),
        "src/search_requests.rs is stale: run python3 scripts/search_requests.py"
    );
}

/// Leave one batch out: the words of the other requests only, measured on
/// the batch they did not learn from, against the concepts alone.
#[test]
fn requests_words_help_on_requests_they_did_not_learn_from() {
    let tools = catalog();
    let all = tuning();
    let learning = Learning::default();
    let alone = SearchIndex::learning(&tools, &RequestWords::default(), &learning);
    let (mut gain1, mut gain5) = (0.0, 0.0);
    for held in ["people", "batch6", "batch7", "batch8", "batch9", "batch10", "batch11"] {
        let (train, test): (Vec<_>, Vec<_>) = all.iter().partition(|(name, _)| *name != held);
        let train: Vec<(&str, &str)> = train.into_iter().map(|e: &(&str, (&str, &str))| e.1).collect();
        let test: Vec<(&str, &str)> = test.into_iter().map(|e: &(&str, (&str, &str))| e.1).collect();
        let learned = SearchIndex::learning(&tools, &RequestWords::count(&train), &learning);
        let (a1, a5, _, _) = recall_of(&alone, &test);
        let (l1, l5, lm, ls) = recall_of(&learned, &test);
        // SHOW=batch11 prints what the words missed in that batch
        if std::env::var("SHOW").is_ok_and(|v| v == held) {
            lm.iter().chain(&ls).for_each(|m| println!("  {m}"));
        }
        println!(
            "{held} held out: {} concepts alone {a1:.3} / {a5:.3}, with the others' words {l1:.3} / {l5:.3}",
            test.len()
        );
        gain1 += l1 - a1;
        gain5 += l5 - a5;
    }
    // the concepts were tuned on every batch, so they flatter themselves;
    // still, the words must not lose on the whole
    assert!(
        gain1 >= 0.0 && gain5 >= 0.0,
        "the words of other requests lose: recall@1 {gain1:+.3}, recall@5 {gain5:+.3}"
    );
}
