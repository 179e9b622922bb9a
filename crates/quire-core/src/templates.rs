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

/// A field with the label editors read and its help.
fn field(def: FieldDef, label: &str, help: &str) -> FieldDef {
    def.label(label).describe(help)
}

fn heading() -> FieldDef {
    field(text("heading", 120), "Heading", "The section's title, shown above its content.")
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
                field(text("subheading", 240), "Subheading", "A sentence under the heading."),
                field(FieldDef::new("backgroundImage", Image), "Background image", "Shown behind the heading."),
                field(
                    FieldDef::new("cta", Link),
                    "Call to action",
                    "The banner's main button: its words and where it leads.",
                ),
            ],
        },
        StarterTemplate {
            key: "text",
            name: "Text",
            description: "A block of rich text with an optional heading.",
            fields: vec![
                heading(),
                field(FieldDef::new("body", Markdown).required().max_length(20_000), "Body", "In markdown."),
            ],
        },
        StarterTemplate {
            key: "image-text",
            name: "Image and text",
            description: "An image beside a block of text.",
            fields: vec![
                heading(),
                field(FieldDef::new("body", Markdown).required().max_length(10_000), "Body", "In markdown."),
                field(FieldDef::new("image", Image).required(), "Image", "Shown beside the text."),
                field(
                    FieldDef::new("imagePosition", Select).options(&["left", "right"]),
                    "Image position",
                    "Which side of the text the image is on.",
                ),
                field(FieldDef::new("cta", Link), "Call to action", "A button under the text (optional)."),
            ],
        },
        StarterTemplate {
            key: "feature-grid",
            name: "Feature grid",
            description: "A grid of features, each with a title, description and icon.",
            fields: vec![
                heading(),
                field(text("intro", 400), "Introduction", "A sentence or two above the grid."),
                field(
                    FieldDef::new("features", List).required().items(1, 12).of(FieldDef::new("feature", Object)
                        .label("Feature")
                        .fields(vec![
                            field(text("title", 80).required(), "Title", "The feature's name."),
                            field(text("description", 300), "Description", "What it does, in a sentence."),
                            field(text("icon", 40), "Icon", "Icon name, e.g. bolt"),
                        ])),
                    "Features",
                    "From 1 to 12.",
                ),
                field(FieldDef::new("columns", Number).range(1.0, 4.0), "Columns", "How many side by side (1 to 4)."),
            ],
        },
        StarterTemplate {
            key: "cta",
            name: "Call to action",
            description: "A short pitch with one prominent button.",
            fields: vec![
                heading().required(),
                field(text("body", 300), "Text", "The pitch, in a sentence or two."),
                field(FieldDef::new("button", Link).required(), "Button", "Its words and where it leads."),
            ],
        },
        StarterTemplate {
            key: "faq",
            name: "FAQ",
            description: "Questions and answers.",
            fields: vec![
                heading(),
                field(
                    FieldDef::new("items", List).required().items(1, 30).of(FieldDef::new("qa", Object)
                        .label("Question and answer")
                        .fields(vec![
                            field(text("question", 200).required(), "Question", "As a reader would ask it."),
                            field(
                                FieldDef::new("answer", Markdown).required().max_length(4_000),
                                "Answer",
                                "In markdown.",
                            ),
                        ])),
                    "Questions",
                    "From 1 to 30.",
                ),
            ],
        },
        StarterTemplate {
            key: "pricing",
            name: "Pricing",
            description: "Pricing tiers with price, period, features and a button each.",
            fields: vec![
                heading(),
                field(text("intro", 400), "Introduction", "A sentence or two above the tiers."),
                field(
                    FieldDef::new("tiers", List).required().items(1, 6).of(FieldDef::new("tier", Object)
                        .label("Tier")
                        .fields(vec![
                            field(text("name", 60).required(), "Name", "The tier's name, e.g. Pro."),
                            field(text("price", 30).required(), "Price", "Display price, e.g. $19"),
                            field(text("period", 30), "Period", "e.g. per month"),
                            field(
                                FieldDef::new("features", List).items(0, 20).of(text("feature", 120).label("Feature")),
                                "Features",
                                "What the tier includes, one per item.",
                            ),
                            field(FieldDef::new("highlighted", Boolean), "Highlighted", "Shown as the one to choose."),
                            field(FieldDef::new("cta", Link), "Call to action", "The tier's button."),
                        ])),
                    "Tiers",
                    "From 1 to 6.",
                ),
            ],
        },
        StarterTemplate {
            key: "testimonials",
            name: "Testimonials",
            description: "Quotes from customers.",
            fields: vec![
                heading(),
                field(
                    FieldDef::new("items", List).required().items(1, 12).of(FieldDef::new("quote", Object)
                        .label("Testimonial")
                        .fields(vec![
                            field(text("quote", 600).required(), "Quote", "The customer's words."),
                            field(text("author", 80).required(), "Author", "Who said it."),
                            field(text("role", 80), "Role", "Their role or company."),
                            field(FieldDef::new("avatar", Image), "Photo", "A portrait of the author."),
                        ])),
                    "Testimonials",
                    "From 1 to 12.",
                ),
            ],
        },
        StarterTemplate {
            key: "gallery",
            name: "Gallery",
            description: "A grid of images with captions.",
            fields: vec![
                heading(),
                field(
                    FieldDef::new("images", List).required().items(1, 48).of(FieldDef::new("photo", Object)
                        .label("Photo")
                        .fields(vec![
                            field(FieldDef::new("image", Image).required(), "Image", "From the media library."),
                            field(text("caption", 200), "Caption", "Shown under the image."),
                        ])),
                    "Images",
                    "From 1 to 48.",
                ),
                field(FieldDef::new("columns", Number).range(1.0, 6.0), "Columns", "How many side by side (1 to 6)."),
            ],
        },
        StarterTemplate {
            key: "contact",
            name: "Contact",
            description: "Contact details and an optional contact form.",
            fields: vec![
                heading(),
                field(FieldDef::new("body", Markdown).max_length(4_000), "Body", "In markdown."),
                field(text("email", 254), "Email", "The address readers write to."),
                field(text("phone", 40), "Phone", "As it should be dialled, e.g. +49 30 123456."),
                field(text("address", 300), "Address", "The postal address."),
                field(FieldDef::new("showForm", Boolean), "Show a contact form", "Whether the site shows a form."),
            ],
        },
    ]
}

/// Fields of a posts collection: the markdown body and the cover, a copy
/// of the post's featured image. The featured image (an entry's own
/// `featuredImage`) is the post's one image: the back-office edits it
/// alone and writes the cover from it.
pub fn post_fields() -> Vec<FieldDef> {
    localized(vec![
        field(FieldDef::new("body", Markdown).required().max_length(200_000), "Body", "The post, in markdown"),
        field(
            FieldDef::new("cover", Image),
            "Cover",
            "A copy of the post's featuredImage, which is its one image; set featuredImage and the cover follows",
        ),
    ])
}

/// The name of the post's field that copies its featured image.
pub const POST_COVER: &str = "cover";

/// Fields of the seeded testimonials collection.
pub fn testimonial_fields() -> Vec<FieldDef> {
    localized(vec![
        field(text("quote", 600).required(), "Quote", "The customer's words."),
        field(text("author", 80).required(), "Author", "Who said it."),
        field(text("role", 80), "Role", "Their role or company."),
        field(FieldDef::new("rating", Number).range(1.0, 5.0), "Rating", "From 1 to 5."),
    ])
}

/// The shipped definitions a collection's fields were made from: a posts
/// collection's, or the seeded testimonials'; none for the rest.
pub fn shipped_collection_fields(posts: bool, slug: &str) -> Vec<FieldDef> {
    if posts {
        post_fields()
    } else if slug == "testimonials" {
        testimonial_fields()
    } else {
        Vec::new()
    }
}
