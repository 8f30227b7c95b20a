-- Full-text search of memory chunks (custom migration: drizzle-kit knows no text search
-- configurations or generated tsvector columns). Words are stemmed as English and, as in
-- SQLite's FTS5 index (porter unicode61), no word is left out as too common: the service
-- drops common words from a query itself, unless they are all it has. PostgreSQL keeps the
-- column in step with the text, and an inverted index over it.
CREATE TEXT SEARCH DICTIONARY "service_english_stem" (TEMPLATE = snowball, Language = english);
--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION "service_english" (COPY = english);
--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION "service_english" ALTER MAPPING REPLACE english_stem WITH "service_english_stem";
--> statement-breakpoint
ALTER TABLE "memory_chunks" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (to_tsvector('service_english'::regconfig, "text")) STORED;
--> statement-breakpoint
CREATE INDEX "memory_chunks_search" ON "memory_chunks" USING gin ("search");
