//! `/api/v1/section-templates`: the shapes sections take.

use quire_core::input::{NewTemplate, TemplatePatch};
use quire_core::model::SectionTemplate;

super::list_query! {
    /// Filters of the template list.
    TemplateQuery {
        /// Only the template with this key.
        key: Option<String>,
    }
}

super::record_handlers! {
    tag = "section-templates", item = "/api/v1/section-templates/{key}" ("key": "Template key or id");

    /// Lists section templates with their fields.
    list: get "/api/v1/section-templates" "listSectionTemplates" (q: TemplateQuery)
        => templates_keyed(q.key.as_deref()) -> [SectionTemplate] "One page of section templates";
    /// Creates a section template (editors and admins).
    create: post "/api/v1/section-templates" "createSectionTemplate"
        => create_template(NewTemplate) -> SectionTemplate "The created template" [409, 422];
    /// Reads a template by key or id.
    read: get "getSectionTemplate" => template -> SectionTemplate "The template";
    /// Changes a template; existing sections are re-validated on their next write.
    update: patch "updateSectionTemplate" => update_template(TemplatePatch) -> SectionTemplate "The changed template";
    /// Archives a template no live section uses.
    archive: delete "archiveSectionTemplate" => SectionTemplate "The archive holding the template";
}
