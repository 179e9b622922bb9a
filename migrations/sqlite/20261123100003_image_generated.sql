-- Which of an image's texts (alt, description, tags) a vision model wrote;
-- a person's edit of one takes it off this list.
ALTER TABLE images ADD COLUMN generated TEXT NOT NULL DEFAULT '[]';
