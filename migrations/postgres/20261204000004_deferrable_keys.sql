-- The foreign keys of the newest tables are deferrable, as every other
-- one is: an import writes tables in name order and checks the keys when
-- it commits (`SET CONSTRAINTS ALL DEFERRED`).
ALTER TABLE site_locales ALTER CONSTRAINT site_locales_site_id_fkey DEFERRABLE;
ALTER TABLE translations ALTER CONSTRAINT translations_archive_id_fkey DEFERRABLE;
ALTER TABLE translations ALTER CONSTRAINT translations_site_id_env_fkey DEFERRABLE;
ALTER TABLE webhook_deliveries ALTER CONSTRAINT webhook_deliveries_webhook_id_fkey DEFERRABLE;
ALTER TABLE release_items ALTER CONSTRAINT release_items_release_id_fkey DEFERRABLE;
ALTER TABLE release_changes ALTER CONSTRAINT release_changes_release_id_fkey DEFERRABLE;
ALTER TABLE oauth_codes ALTER CONSTRAINT oauth_codes_client_id_fkey DEFERRABLE;
ALTER TABLE oauth_codes ALTER CONSTRAINT oauth_codes_token_id_fkey DEFERRABLE;
ALTER TABLE oauth_tokens ALTER CONSTRAINT oauth_tokens_token_id_fkey DEFERRABLE;
