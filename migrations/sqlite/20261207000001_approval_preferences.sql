-- Each person's approval preferences on a site: when a tool that runs for
-- them waits for their approval (`always`, `destructive`, `never`), by tool
-- and by category, with a default. The floor is the server's: destructive
-- calls and outgoing sends ask whatever this says. JSON of
-- { default, categories, tools }; who last changed it, and when.
CREATE TABLE approval_preferences (
    user_id     TEXT NOT NULL REFERENCES users (id),
    site_id     TEXT NOT NULL REFERENCES sites (id),
    preferences TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    updated_by  TEXT NOT NULL,
    PRIMARY KEY (user_id, site_id)
);
