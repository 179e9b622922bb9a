//! `/api/v1/pages/{id}/sections` and `/api/v1/sections/{id}`: page sections.

use super::Paging;
use quire_core::input::{NewSection, SectionPatch};
use quire_core::model::PageSection;

super::record_handlers! {
    tag = "sections", item = "/api/v1/sections/{id}" ("id": "Section id");

    /// Lists a page's sections in order.
    list: get "/api/v1/pages/{id}/sections" ("id": "Page id") "listSections" (q: Paging)
        => sections() -> [PageSection] "One page of the page's sections in order";
    /// Adds a section to a page; content is validated against the template.
    create: post "/api/v1/pages/{id}/sections" ("id": "Page id") "createSection"
        => create_section(NewSection) -> PageSection "The created section" [404, 409, 422];
    /// Reads a section.
    read: get "getSection" => section -> PageSection "The section";
    /// Changes a section; content merges and the result is re-validated.
    update: patch "updateSection" => update_section(SectionPatch) -> PageSection "The changed section";
    /// Archives a section.
    archive: delete "archiveSection" => Section "The archive holding the section";
}
