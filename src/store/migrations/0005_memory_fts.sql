-- Full-text index of memory chunks (custom migration: drizzle-kit knows no virtual tables).
-- External content: the text lives once, in memory_chunks; triggers keep the index in step
-- inside the same transaction as every chunk insert and delete.
CREATE VIRTUAL TABLE `memory_fts` USING fts5(text, content='memory_chunks', content_rowid='id', tokenize='porter unicode61');
--> statement-breakpoint
CREATE TRIGGER `memory_chunks_fts_insert` AFTER INSERT ON `memory_chunks` BEGIN
  INSERT INTO memory_fts(rowid, text) VALUES (new.id, new.text);
END;
--> statement-breakpoint
CREATE TRIGGER `memory_chunks_fts_delete` AFTER DELETE ON `memory_chunks` BEGIN
  INSERT INTO memory_fts(memory_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
--> statement-breakpoint
CREATE TRIGGER `memory_chunks_fts_update` AFTER UPDATE ON `memory_chunks` BEGIN
  INSERT INTO memory_fts(memory_fts, rowid, text) VALUES ('delete', old.id, old.text);
  INSERT INTO memory_fts(rowid, text) VALUES (new.id, new.text);
END;
