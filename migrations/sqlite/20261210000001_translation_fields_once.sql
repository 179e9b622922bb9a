-- A translation's fields stored once (decision 0050, "Storage"): a
-- translation's create logs it whole, so its working row keeps only the
-- number of that change (`fields_from`) and an empty `fields`, and its
-- published copy copies both; the store reads the fields from the change
-- while `fields` is empty. A later write of the fields keeps them in the
-- row again. The translations written before keep theirs.
ALTER TABLE translations ADD COLUMN fields_from INTEGER;
ALTER TABLE published_translations ADD COLUMN fields_from INTEGER;
