//! The demo site, seeded on first start and by `quire seed`: idempotent, so
//! running it again adds only what is missing.

use crate::{ChangeFilter, Result, Scope, Store, StoreError};
use quire_core::access::Group;
use quire_core::input::*;
use quire_core::model::*;
use quire_core::templates::{starter_templates, testimonial_fields};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Slug of the demo site.
pub const DEMO_SITE: &str = "demo";

/// What a seed run did.
#[derive(Debug, Clone, Default)]
pub struct SeedReport {
    /// The production scope of the demo site.
    pub scope: Option<Scope>,
    /// Records created by this run (0 when everything was there).
    pub created: usize,
}

/// Makes sure every environment of the site has the starter templates.
pub async fn ensure_templates(store: &Store, scope: &Scope) -> Result<usize> {
    let ctx = ChangeContext::system();
    let mut created = 0;
    for t in starter_templates() {
        if store.template(scope, t.key).await.is_ok() {
            continue;
        }
        store
            .create_template(
                &ctx,
                scope,
                NewTemplate {
                    key: t.key.into(),
                    name: t.name.into(),
                    description: Some(t.description.into()),
                    fields: t.fields,
                },
            )
            .await?;
        created += 1;
    }
    Ok(created)
}

/// A starter agent: alias, name, description, tool selectors, prompt and
/// the groups that may use it (none: every group).
struct Starter {
    alias: &'static str,
    name: &'static str,
    description: &'static str,
    tools: &'static [&'static str],
    prompt: &'static str,
    groups: &'static [Group],
}

/// The agents every environment starts with. The editor is for the groups
/// that write: a viewer is not offered an agent whose work is changing the
/// site.
const AGENTS: &[Starter] = &[
    Starter {
        alias: "editor",
        name: "Editor",
        description: "Edits the site: pages, sections, posts, images, navigation and entries.",
        tools: &["category:internal", "!tag:vault", "browseImages", "importImage"],
        prompt: "You are the site's editor: make the smallest change that does what the user asked.",
        groups: &[Group::Admin, Group::Editor, Group::Author],
    },
    Starter {
        alias: "researcher",
        name: "Researcher",
        description: "Reads the site and the web to answer questions; changes nothing.",
        tools: &["read", "!tag:vault", "tag:web"],
        prompt: "You research and answer from the site and the web: searchWeb (mode deep for questions that need pages read), fetchContent for a given page, and cite the URLs you used. You cannot change content; say so when asked to, and suggest the editor agent.",
        groups: &[],
    },
    Starter {
        alias: "notes",
        name: "Notes",
        description: "Keeps the notes vault: reads, writes, reorganises and searches markdown notes.",
        tools: &["tag:vault"],
        prompt: "You keep the user's markdown notes. Read a note before editing it and edit by line numbers.",
        groups: &[],
    },
];

/// Makes sure an environment has the starter agents, as this version
/// defines them: creates those missing, and brings up to date those no
/// person has changed (every change to them was the system's), so a site
/// seeded by an earlier version gets the tools added since. An agent a
/// person edited is theirs and left alone. Each update is logged and can be
/// undone like any other. Answers how many agents were created or updated.
pub async fn ensure_agents(store: &Store, scope: &Scope) -> Result<usize> {
    let ctx = ChangeContext::system();
    let mut changed = 0;
    for Starter { alias, name, description, tools, prompt, groups } in AGENTS {
        let tools: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
        let agent = match store.agent(scope, alias).await {
            Ok(agent) => agent,
            Err(StoreError::NotFound { .. }) => {
                let input = NewAgent {
                    alias: alias.to_string(),
                    name: name.to_string(),
                    description: Some(description.to_string()),
                    system_prompt: Some(prompt.to_string()),
                    tools: Some(tools),
                    allowed_groups: Some(groups.to_vec()),
                    ..NewAgent::default()
                };
                store.create_agent(&ctx, scope, input).await?;
                changed += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        if agent.description == *description
            && agent.system_prompt == *prompt
            && agent.tools == tools
            && agent.allowed_groups == *groups
        {
            continue;
        }
        let filter =
            ChangeFilter { entity: Some(EntityKind::Agent), entity_id: Some(agent.id.clone()), ..Default::default() };
        let history = store.changes(scope, &filter, 100, None).await?;
        if history.next_cursor.is_some() || history.items.iter().any(|c| c.actor != ctx.actor) {
            continue;
        }
        let patch = AgentPatch {
            description: Some(description.to_string()),
            system_prompt: Some(prompt.to_string()),
            tools: Some(tools),
            allowed_groups: Some(groups.to_vec()),
            ..AgentPatch::default()
        };
        store.update_agent(&ctx, scope, &agent.id, &patch, Some(agent.version)).await?;
        changed += 1;
    }
    Ok(changed)
}

/// [`ensure_agents`] in every environment of every site (at start-up).
pub async fn ensure_agents_everywhere(store: &Store) -> Result<usize> {
    let mut changed = 0;
    for site in store.sites().await? {
        for env in &site.environments {
            changed += ensure_agents(store, &Scope::new(&site.id, env)).await?;
        }
    }
    Ok(changed)
}

/// Where the demo images are kept, by key `<site id>/<file name>`: a folder
/// (`Path`), or the media storage of a serving process.
pub trait SeedFiles: Sync {
    /// The bytes stored under `key`, if any.
    fn read(&self, key: &str) -> impl std::future::Future<Output = Option<Vec<u8>>> + Send;
    /// Stores `bytes` under `key`; the error says what failed.
    fn write(
        &self,
        key: &str,
        bytes: Vec<u8>,
    ) -> impl std::future::Future<Output = std::result::Result<(), String>> + Send;
}

impl SeedFiles for Path {
    async fn read(&self, key: &str) -> Option<Vec<u8>> {
        tokio::fs::read(self.join(key)).await.ok()
    }

    async fn write(&self, key: &str, bytes: Vec<u8>) -> std::result::Result<(), String> {
        let path = self.join(key);
        if let Some(dir) = path.parent() {
            tokio::fs::create_dir_all(dir).await.map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        tokio::fs::write(&path, bytes).await.map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Seeds the demo site into the database and its images into `uploads_dir`.
pub async fn seed_demo(store: &Store, uploads_dir: &Path) -> Result<SeedReport> {
    seed_demo_into(store, uploads_dir).await
}

/// Seeds the demo site into the database and its images into `files`.
pub async fn seed_demo_into<F: SeedFiles + ?Sized>(store: &Store, files: &F) -> Result<SeedReport> {
    let site = match store.site(DEMO_SITE).await {
        Ok(site) => site,
        Err(StoreError::NotFound { .. }) => {
            // Production is seeded, and staging made as its copy: the two
            // share their records' lineage, so they compare and promote.
            let site = store.create_site(DEMO_SITE, "Quire Demo", &["production"]).await?;
            let mut report = seed_site_into(store, &site, files).await?;
            let (_, copy) = store
                .create_environment(&ChangeContext::system(), &site.id, "staging", "Staging", Some("production"))
                .await?;
            report.created += copy.map_or(0, |p| p.items.len());
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    seed_site_into(store, &site, files).await
}

/// Seeds the demo content into `site` (made beforehand, with its
/// environments): templates and agents in each environment, the pages,
/// posts, menus and images in its first environment; what is there already stays.
pub async fn seed_site_into<F: SeedFiles + ?Sized>(store: &Store, site: &Site, files: &F) -> Result<SeedReport> {
    let mut report = SeedReport::default();
    for env in &site.environments {
        report.created += ensure_templates(store, &Scope::new(&site.id, env)).await?;
        report.created += ensure_agents(store, &Scope::new(&site.id, env)).await?;
    }
    let first = site.environments.first().map_or("production", String::as_str);
    let scope = Scope::new(&site.id, first);
    let mut seeder = Seeder { store, scope: scope.clone(), ctx: ChangeContext::system(), created: 0 };
    seeder.content(files).await?;
    report.created += seeder.created;
    report.scope = Some(scope);
    Ok(report)
}

struct Seeder<'a> {
    store: &'a Store,
    scope: Scope,
    ctx: ChangeContext,
    created: usize,
}

/// A demo image: file name, alt text, two gradient colours.
const IMAGES: &[(&str, &str, [u8; 3], [u8; 3])] = &[
    ("hero-dawn.png", "Abstract dawn gradient over a horizon", [255, 149, 94], [72, 52, 212]),
    ("team-table.png", "The team around a table, stylised", [34, 193, 195], [253, 187, 45]),
    ("studio-desk.png", "A quiet studio desk, stylised", [131, 58, 180], [252, 176, 69]),
    ("product-grid.png", "Product screens in a grid, stylised", [17, 153, 142], [56, 239, 125]),
];

impl Seeder<'_> {
    /// German beside English, and the home page in German, published.
    async fn german(&mut self, home: &Page) -> Result<()> {
        let locales = self.store.site_locales(&self.scope.site_id).await?;
        if !locales.iter().any(|l| l.tag == "de") {
            let mut wanted = locales;
            wanted.push(SiteLocale { tag: "de".into(), fallback: None, is_default: false });
            self.store.set_site_locales(&self.scope.site_id, wanted).await?;
        }
        if !self.store.translations(&self.scope, EntityKind::Page, &home.id).await?.translations.is_empty() {
            return Ok(());
        }
        let sections = self.store.sections(&self.scope, &home.id, 10, None).await?.items;
        let mut german = serde_json::Map::new();
        for section in sections {
            let words = match section.template_key.as_str() {
                "hero" => {
                    json!({"heading": "Ihre Website, im Gespräch bearbeitet", "subheading": "Quire ist ein Headless-CMS mit einem Agenten, der fragt, bevor er etwas löscht.", "cta": {"label": "Preise ansehen", "href": "/pricing"}})
                }
                "cta" => {
                    json!({"heading": "Mit einem Befehl starten", "body": "Programm starten, Website öffnen, mit ihr sprechen."})
                }
                _ => continue,
            };
            german.insert(section.id, words);
        }
        let fields = json!({ "name": "Startseite", "meta": { "title": "Quire — Inhalte mit einem umsichtigen Agenten" }, "sections": german });
        self.store.put_translation(&self.ctx, &self.scope, EntityKind::Page, &home.id, "de", fields, true).await?;
        self.created += 1;
        Ok(())
    }

    async fn content<F: SeedFiles + ?Sized>(&mut self, files: &F) -> Result<()> {
        let mut urls = Vec::new();
        for (name, alt, a, b) in IMAGES {
            urls.push(self.image(files, name, alt, *a, *b).await?);
        }
        let (hero_img, team_img, studio_img, product_img) = (&urls[0], &urls[1], &urls[2], &urls[3]);

        let home = self.page("home", "Home", None, true, "Quire — content with a careful agent").await?;
        let about = self.page("about", "About", None, false, "About us").await?;
        let team = self.page("team", "Our team", Some(&about.id), false, "Meet the team").await?;
        let pricing = self.page("pricing", "Pricing", None, false, "Simple pricing").await?;
        let blog_page = self.page("blog", "Blog", None, false, "Notes from the team").await?;
        let contact = self.page("contact", "Contact", None, false, "Get in touch").await?;

        self.sections(&home, vec![
            ("hero", json!({"heading": "Your site, edited by conversation", "subheading": "Quire is a headless CMS with an agent that asks before it deletes anything.", "backgroundImage": {"url": hero_img.1, "imageId": hero_img.0, "alt": "Abstract dawn gradient"}, "cta": {"label": "See pricing", "href": "/pricing"}})),
            ("feature-grid", json!({"heading": "Why teams pick Quire", "features": [
                {"title": "One tool registry", "description": "REST, MCP, CLI and the agent share the same tools.", "icon": "layers"},
                {"title": "Nothing is lost", "description": "Deletes archive, every change is logged and reversible.", "icon": "shield"},
                {"title": "Fast", "description": "A single binary on SQLite serves thousands of requests per second.", "icon": "bolt"}]})),
            ("testimonials", json!({"heading": "What editors say", "items": [
                {"quote": "I asked for a pricing page and got one I only had to tweak.", "author": "Maya Lind", "role": "Editor"}]})),
            ("cta", json!({"heading": "Start in one command", "body": "Run the binary, open the site, talk to it.", "button": {"label": "Contact us", "href": "/contact"}})),
        ]).await?;
        self.sections(&about, vec![
            ("text", json!({"heading": "Our story", "body": "Quire started as a notebook of **careful** ideas about editing websites with an assistant.\n\nWe still keep that notebook."})),
            ("image-text", json!({"heading": "Where we work", "body": "A small studio with big windows.", "image": {"url": studio_img.1, "imageId": studio_img.0}, "imagePosition": "right"})),
        ]).await?;
        self.sections(&team, vec![
            ("image-text", json!({"heading": "The people", "body": "Five people who like tidy content models.", "image": team_img.1, "imagePosition": "left"})),
            ("gallery", json!({"heading": "Around the studio", "images": [
                {"image": team_img.1, "caption": "Planning"}, {"image": studio_img.1, "caption": "The desk"}], "columns": 2})),
        ]).await?;
        self.sections(&pricing, vec![
            ("pricing", json!({"heading": "Plans", "tiers": [
                {"name": "Solo", "price": "$0", "period": "forever", "features": ["One site", "SQLite"], "cta": {"label": "Start", "href": "/contact"}},
                {"name": "Team", "price": "$29", "period": "per month", "features": ["Five sites", "Approvals", "MCP"], "highlighted": true, "cta": {"label": "Try Team", "href": "/contact"}},
                {"name": "Scale", "price": "Talk to us", "features": ["PostgreSQL", "Replicas", "S3 media"], "cta": {"label": "Contact", "href": "/contact"}}]})),
            ("faq", json!({"heading": "Questions", "items": [
                {"question": "Can the agent delete my pages?", "answer": "Only after a person approves, and even then it archives them."},
                {"question": "Do I need an LLM?", "answer": "Only for chat. REST, MCP and the CLI work without one."}]})),
        ]).await?;
        self.sections(&blog_page, vec![
            ("hero", json!({"heading": "The Quire blog", "subheading": "Release notes and how-tos.", "backgroundImage": product_img.1})),
        ]).await?;
        self.sections(&contact, vec![
            ("contact", json!({"heading": "Talk to us", "body": "We answer within a day.", "email": "hello@quire.example", "phone": "+1 555 0100", "showForm": true})),
        ]).await?;

        let blog = self.collection("blog", "Blog", CollectionKind::Posts, None).await?;
        let testimonials = self
            .collection("testimonials", "Testimonials", CollectionKind::Entries, Some(testimonial_fields()))
            .await?;
        let post1 = self.entry(&blog, "hello-quire", "Hello, Quire", EntryStatus::Published,
            json!({"body": "# Hello\n\nQuire is live. This post was seeded with the demo site.", "cover": hero_img.1}),
            Some("Announcements"), &["release"], Some(hero_img.1.as_str())).await?;
        for (slug, title, status, body, category, tags) in [
            (
                "approvals-explained",
                "How approvals keep your content safe",
                EntryStatus::Published,
                "Destructive actions are previewed first, then a person approves.\n\n- preview\n- approve\n- archive",
                Some("Guides"),
                &["agent", "safety"][..],
            ),
            (
                "mcp-in-five-minutes",
                "Connect an MCP client in five minutes",
                EntryStatus::Published,
                "Point your client at `quire mcp` and list the tools.",
                Some("Guides"),
                &["mcp"],
            ),
            ("roadmap-draft", "Roadmap (draft)", EntryStatus::Draft, "Work in progress.", None, &[]),
        ] {
            self.entry(&blog, slug, title, status, json!({ "body": body }), category, tags, None).await?;
        }
        for (slug, quote, author, role, rating) in [
            ("maya", "Editing by conversation finally feels safe.", "Maya Lind", "Editor", 5),
            ("tom", "The change log saved a launch.", "Tom Ode", "Developer", 5),
            ("ana", "Fast, and nothing disappears.", "Ana Ruiz", "Marketing lead", 4),
        ] {
            self.entry(
                &testimonials,
                slug,
                author,
                EntryStatus::Published,
                json!({"quote": quote, "author": author, "role": role, "rating": rating}),
                None,
                &[],
                None,
            )
            .await?;
        }

        let link = |label: &str, target_type, target_id: Option<&str>, url: Option<&str>| NewNavItem {
            label: label.into(),
            target_type,
            target_id: target_id.map(Into::into),
            url: url.map(Into::into),
            parent_id: None,
            sort_order: None,
            visible: None,
        };
        let page = |label: &str, id: &str| link(label, NavTargetType::Page, Some(id), None);
        let header = self.navigation("header", "Header", Some(8)).await?;
        if self.store.nav_items(&self.scope, &header.id, None, 1, None).await?.items.is_empty() {
            self.nav(&header.id, page("Home", &home.id)).await?;
            let about_item = self.nav(&header.id, page("About", &about.id)).await?;
            self.nav(&header.id, NewNavItem { parent_id: Some(about_item.id), ..page("Team", &team.id) }).await?;
            self.nav(&header.id, page("Pricing", &pricing.id)).await?;
            self.nav(&header.id, page("Blog", &blog_page.id)).await?;
            self.nav(&header.id, page("Contact", &contact.id)).await?;
        }
        let footer = self.navigation("footer", "Footer", None).await?;
        if self.store.nav_items(&self.scope, &footer.id, None, 1, None).await?.items.is_empty() {
            for item in [
                link("Latest post", NavTargetType::Entry, Some(&post1.id), None),
                page("Contact", &contact.id),
                link("Source", NavTargetType::Url, None, Some("https://github.com/quire-cms/quire")),
                link("Legal", NavTargetType::Placeholder, None, None),
            ] {
                self.nav(&footer.id, item).await?;
            }
        }
        self.german(&home).await?;
        self.memory(&about, &team).await
    }

    /// The site's brand voice, and a workspace saved while the about pages
    /// were being reworked.
    async fn memory(&mut self, about: &Page, team: &Page) -> Result<()> {
        let found = self.store.context(&self.scope, "brand-voice").await;
        let input = NewContext {
            key: "brand-voice".into(),
            name: "Brand voice".into(),
            description: Some("How the site speaks: for any text written for the public site.".into()),
            body: "Plain, warm and exact. Short sentences; one idea each.\n\
                   - Say \"we\" for the team and \"you\" for the reader.\n\
                   - No superlatives and no exclamation marks.\n\
                   - Name the thing: \"the archive\", not \"our powerful safety features\"."
                .into(),
        };
        made(&mut self.created, found, self.store.create_context(&self.ctx, &self.scope, input)).await?;
        if self.store.workspace(&self.scope, "About pages rework").await.is_err() {
            let input = WorkspaceInput {
                name: "About pages rework".into(),
                goal: Some("Make the about pages say who we are in the brand voice.".into()),
                summary: Some("Our story is rewritten. Next: the team page's introduction, then its photo.".into()),
                records: Some(vec![
                    WorkspaceRecord { kind: EntityKind::Page, id: about.id.clone() },
                    WorkspaceRecord { kind: EntityKind::Page, id: team.id.clone() },
                ]),
                notes: Some(Vec::new()),
            };
            self.store.save_workspace(&self.ctx, &self.scope, input, None).await?;
            self.created += 1;
        }
        Ok(())
    }

    /// Writes a gradient PNG (if missing) and records it; returns (id, url).
    async fn image<F: SeedFiles + ?Sized>(
        &mut self,
        files: &F,
        name: &str,
        alt: &str,
        a: [u8; 3],
        b: [u8; 3],
    ) -> Result<(String, String)> {
        // Each site's files are kept under its id.
        let site = &self.scope.site_id;
        let url = format!("/uploads/{site}/{name}");
        let existing = self.store.images(&self.scope, None, 100, None).await?;
        let key = format!("{site}/{name}");
        let bytes = match files.read(&key).await {
            Some(bytes) => bytes,
            None => {
                let png = gradient_png(640, 360, a, b)?;
                files.write(&key, png.clone()).await.map_err(StoreError::Corrupt)?;
                png
            }
        };
        if let Some(img) = existing.items.iter().find(|i| i.url == url) {
            return Ok((img.id.clone(), url));
        }
        let img = self
            .store
            .create_image(
                &self.ctx,
                &self.scope,
                NewImage {
                    url: url.clone(),
                    filename: name.into(),
                    mime: Some("image/png".into()),
                    width: Some(640),
                    height: Some(360),
                    bytes: Some(bytes.len() as i64),
                    content_hash: Some(hex::encode(Sha256::digest(&bytes))),
                    alt: Some(alt.into()),
                    description: None,
                    tags: Some(vec!["demo".into()]),
                    categories: None,
                    source: Some(ImageSource::Upload),
                    attribution: None,
                },
            )
            .await?;
        self.created += 1;
        Ok((img.id, url))
    }

    async fn page(
        &mut self,
        slug: &str,
        name: &str,
        parent: Option<&str>,
        protected: bool,
        title: &str,
    ) -> Result<Page> {
        let found = self.store.page_by_slug(&self.scope, slug).await;
        let input = NewPage {
            name: name.into(),
            slug: slug.into(),
            parent_id: parent.map(str::to_string),
            is_protected: Some(protected),
            meta: Some(json!({"title": title, "description": format!("{name} — Quire demo site")})),
            indexing: Some(true),
            sort_order: None,
            status: Some(PublishStatus::Published),
        };
        made(&mut self.created, found, self.store.create_page(&self.ctx, &self.scope, input)).await
    }

    async fn sections(&mut self, page: &Page, sections: Vec<(&str, Value)>) -> Result<()> {
        if !self.store.sections(&self.scope, &page.id, 1, None).await?.items.is_empty() {
            return Ok(());
        }
        for (key, content) in sections {
            self.store
                .create_section(
                    &self.ctx,
                    &self.scope,
                    &page.id,
                    NewSection {
                        template_key: key.into(),
                        content: Some(content),
                        sort_order: None,
                        status: Some(PublishStatus::Published),
                        hidden: None,
                    },
                )
                .await?;
            self.created += 1;
        }
        Ok(())
    }

    async fn collection(
        &mut self,
        slug: &str,
        name: &str,
        kind: CollectionKind,
        fields: Option<Vec<quire_core::fields::FieldDef>>,
    ) -> Result<Collection> {
        let found = self.store.collection(&self.scope, slug).await;
        let input = NewCollection { slug: slug.into(), name: name.into(), kind, fields };
        made(&mut self.created, found, self.store.create_collection(&self.ctx, &self.scope, input)).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn entry(
        &mut self,
        c: &Collection,
        slug: &str,
        title: &str,
        status: EntryStatus,
        content: Value,
        category: Option<&str>,
        tags: &[&str],
        featured: Option<&str>,
    ) -> Result<Entry> {
        let found = self.store.entry_by_slug(&self.scope, &c.id, slug).await;
        let input = NewEntry {
            slug: slug.into(),
            title: title.into(),
            content: Some(content),
            status: Some(status),
            author: Some("Quire Team".into()),
            category: category.map(str::to_string),
            tags: Some(tags.iter().map(|t| t.to_string()).collect()),
            excerpt: Some(format!("{title}.")),
            featured_image: featured.map(str::to_string),
        };
        made(&mut self.created, found, self.store.create_entry(&self.ctx, &self.scope, &c.id, input)).await
    }

    async fn navigation(&mut self, key: &str, name: &str, max: Option<i64>) -> Result<Navigation> {
        let found = self.store.navigation(&self.scope, key).await;
        let input = NewNavigation { key: key.into(), name: name.into(), max_items: max };
        made(&mut self.created, found, self.store.create_navigation(&self.ctx, &self.scope, input)).await
    }

    async fn nav(&mut self, navigation: &str, item: NewNavItem) -> Result<NavItem> {
        self.created += 1;
        self.store.create_nav_item(&self.ctx, &self.scope, navigation, item).await
    }
}

/// The record `found`, when the lookup found it; otherwise the one `create`
/// makes, counted in `created`.
async fn made<T>(created: &mut usize, found: Result<T>, create: impl Future<Output = Result<T>>) -> Result<T> {
    if let Ok(record) = found {
        return Ok(record);
    }
    *created += 1;
    create.await
}

/// A diagonal two-colour gradient, encoded as PNG.
fn gradient_png(width: u32, height: u32, a: [u8; 3], b: [u8; 3]) -> Result<Vec<u8>> {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        let t = (x as f32 / width as f32 + y as f32 / height as f32) / 2.0;
        let mix = |i: usize| (a[i] as f32 * (1.0 - t) + b[i] as f32 * t) as u8;
        image::Rgb([mix(0), mix(1), mix(2)])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .map_err(|e| StoreError::Corrupt(format!("png encoding failed: {e}")))?;
    Ok(out.into_inner())
}

/// Bulk content for benchmarks: `pages` pages and `posts` posts of about
/// 2 KB of markdown each, in the given scope's `blog` collection.
pub async fn seed_bench(store: &Store, scope: &Scope, pages: usize, posts: usize) -> Result<()> {
    let ctx = ChangeContext::system();
    let paragraph = "Quire keeps every change in a log and archives instead of deleting. ".repeat(30);
    for i in 0..pages {
        let slug = format!("bench-page-{i}");
        if store.page_by_slug(scope, &slug).await.is_ok() {
            continue;
        }
        let page = store
            .create_page(
                &ctx,
                scope,
                NewPage {
                    name: format!("Bench page {i}"),
                    slug,
                    status: Some(PublishStatus::Published),
                    ..Default::default()
                },
            )
            .await?;
        store
            .create_section(
                &ctx,
                scope,
                &page.id,
                NewSection {
                    template_key: "text".into(),
                    content: Some(
                        json!({"heading": format!("Section of page {i}"), "body": paragraph[..400].to_string()}),
                    ),
                    status: Some(PublishStatus::Published),
                    ..Default::default()
                },
            )
            .await?;
    }
    let blog = store.collection(scope, "blog").await?;
    for i in 0..posts {
        let slug = format!("bench-post-{i}");
        if store.entry_by_slug(scope, &blog.id, &slug).await.is_ok() {
            continue;
        }
        store
            .create_entry(
                &ctx,
                scope,
                &blog.id,
                NewEntry {
                    slug,
                    title: format!("Bench post {i}"),
                    content: Some(json!({"body": format!("# Post {i}\n\n{paragraph}")})),
                    status: Some(if i % 2 == 0 { EntryStatus::Published } else { EntryStatus::Draft }),
                    ..Default::default()
                },
            )
            .await?;
    }
    Ok(())
}
