//! The starter section templates and the field sets of the seeded
//! collections. Every site starts with these; editors may add their own.

use crate::fields::{FieldDef, FieldKind::*};

/// A section template as shipped: key, name, description and fields.
#[derive(Debug, Clone)]
pub struct StarterTemplate {
    /// Stable key (`hero`), used by sections as `templateKey`.
    pub key: &'static str,
    /// Display name.
    pub name: &'static str,
    /// What the section is for.
    pub description: &'static str,
    /// Its fields.
    pub fields: Vec<FieldDef>,
}

fn text(name: &str, max: u32) -> FieldDef {
    FieldDef::new(name, Text).max_length(max)
}

fn heading() -> FieldDef {
    text("heading", 120).describe("Section title")
}

/// Marks the fields of `fields` that hold words a reader reads localised
/// (text, markdown, links and lists have a value per locale; images,
/// numbers, selects, dates and switches one for every locale).
fn localized(fields: Vec<FieldDef>) -> Vec<FieldDef> {
    fields
        .into_iter()
        .map(|f| match f.kind {
            Text | Markdown | Link | List | Object => f.localized(),
            _ => f,
        })
        .collect()
}

/// The ten starter templates of the product: hero, text, image-text,
/// feature-grid, cta, faq, pricing, testimonials, gallery, contact; their
/// words localised (see [`localized`]).
pub fn starter_templates() -> Vec<StarterTemplate> {
    let mut templates = shipped();
    for template in &mut templates {
        template.fields = localized(std::mem::take(&mut template.fields));
    }
    templates
}

fn shipped() -> Vec<StarterTemplate> {
    vec![
        StarterTemplate {
            key: "hero",
            name: "Hero",
            description: "Full-width opening banner with heading, subheading, background image and a call to action.",
            fields: vec![
                heading().required(),
                text("subheading", 240),
                FieldDef::new("backgroundImage", Image),
                FieldDef::new("cta", Link).describe("Primary button"),
            ],
        },
        StarterTemplate {
            key: "text",
            name: "Text",
            description: "A block of rich text with an optional heading.",
            fields: vec![heading(), FieldDef::new("body", Markdown).required().max_length(20_000)],
        },
        StarterTemplate {
            key: "image-text",
            name: "Image and text",
            description: "An image beside a block of text.",
            fields: vec![
                heading(),
                FieldDef::new("body", Markdown).required().max_length(10_000),
                FieldDef::new("image", Image).required(),
                FieldDef::new("imagePosition", Select).options(&["left", "right"]),
                FieldDef::new("cta", Link),
            ],
        },
        StarterTemplate {
            key: "feature-grid",
            name: "Feature grid",
            description: "A grid of features, each with a title, description and icon.",
            fields: vec![
                heading(),
                text("intro", 400),
                FieldDef::new("features", List).required().items(1, 12).of(FieldDef::new("feature", Object).fields(
                    vec![
                        text("title", 80).required(),
                        text("description", 300),
                        text("icon", 40).describe("Icon name, e.g. bolt"),
                    ],
                )),
                FieldDef::new("columns", Number).range(1.0, 4.0),
            ],
        },
        StarterTemplate {
            key: "cta",
            name: "Call to action",
            description: "A short pitch with one prominent button.",
            fields: vec![heading().required(), text("body", 300), FieldDef::new("button", Link).required()],
        },
        StarterTemplate {
            key: "faq",
            name: "FAQ",
            description: "Questions and answers.",
            fields: vec![
                heading(),
                FieldDef::new("items", List).required().items(1, 30).of(FieldDef::new("qa", Object).fields(vec![
                    text("question", 200).required(),
                    FieldDef::new("answer", Markdown).required().max_length(4_000),
                ])),
            ],
        },
        StarterTemplate {
            key: "pricing",
            name: "Pricing",
            description: "Pricing tiers with price, period, features and a button each.",
            fields: vec![
                heading(),
                text("intro", 400),
                FieldDef::new("tiers", List).required().items(1, 6).of(FieldDef::new("tier", Object).fields(vec![
                    text("name", 60).required(),
                    text("price", 30).required().describe("Display price, e.g. $19"),
                    text("period", 30).describe("e.g. per month"),
                    FieldDef::new("features", List).items(0, 20).of(text("feature", 120)),
                    FieldDef::new("highlighted", Boolean),
                    FieldDef::new("cta", Link),
                ])),
            ],
        },
        StarterTemplate {
            key: "testimonials",
            name: "Testimonials",
            description: "Quotes from customers.",
            fields: vec![
                heading(),
                FieldDef::new("items", List).required().items(1, 12).of(FieldDef::new("quote", Object).fields(vec![
                    text("quote", 600).required(),
                    text("author", 80).required(),
                    text("role", 80),
                    FieldDef::new("avatar", Image),
                ])),
            ],
        },
        StarterTemplate {
            key: "gallery",
            name: "Gallery",
            description: "A grid of images with captions.",
            fields: vec![
                heading(),
                FieldDef::new("images", List).required().items(1, 48).of(FieldDef::new("photo", Object)
                    .fields(vec![FieldDef::new("image", Image).required(), text("caption", 200)])),
                FieldDef::new("columns", Number).range(1.0, 6.0),
            ],
        },
        StarterTemplate {
            key: "contact",
            name: "Contact",
            description: "Contact details and an optional contact form.",
            fields: vec![
                heading(),
                FieldDef::new("body", Markdown).max_length(4_000),
                text("email", 254),
                text("phone", 40),
                text("address", 300),
                FieldDef::new("showForm", Boolean),
            ],
        },
    ]
}

/// Fields of a posts collection: the markdown body and an optional cover.
pub fn post_fields() -> Vec<FieldDef> {
    localized(vec![
        FieldDef::new("body", Markdown).required().max_length(200_000).describe("The post, in markdown"),
        FieldDef::new("cover", Image).describe("Cover image; keep in step with featuredImage"),
    ])
}

/// Fields of the seeded testimonials collection.
pub fn testimonial_fields() -> Vec<FieldDef> {
    localized(vec![
        text("quote", 600).required(),
        text("author", 80).required(),
        text("role", 80),
        FieldDef::new("rating", Number).range(1.0, 5.0),
    ])
}
