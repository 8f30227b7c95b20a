CREATE TABLE `memory_owners` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `memory_owners_user` ON `memory_owners` (`user_id`);--> statement-breakpoint
ALTER TABLE `memory_chunks` ADD `owner` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Hand-written below: number the users that have chunks, then rebuild the full-text index
-- with the owner number as a second column (see schema.ts, memoryOwners).
INSERT INTO `memory_owners` (`user_id`) SELECT DISTINCT `user_id` FROM `memory_chunks` ORDER BY `user_id`;
--> statement-breakpoint
DROP TRIGGER `memory_chunks_fts_insert`;
--> statement-breakpoint
DROP TRIGGER `memory_chunks_fts_delete`;
--> statement-breakpoint
DROP TRIGGER `memory_chunks_fts_update`;
--> statement-breakpoint
UPDATE `memory_chunks` SET `owner` = (SELECT `id` FROM `memory_owners` o WHERE o.`user_id` = `memory_chunks`.`user_id`);
--> statement-breakpoint
DROP TABLE `memory_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `memory_fts` USING fts5(text, owner, content='memory_chunks', content_rowid='id', tokenize='porter unicode61');
--> statement-breakpoint
INSERT INTO `memory_fts` (`memory_fts`) VALUES ('rebuild');
--> statement-breakpoint
CREATE TRIGGER `memory_chunks_fts_insert` AFTER INSERT ON `memory_chunks` BEGIN
  INSERT INTO memory_fts(rowid, text, owner) VALUES (new.id, new.text, new.owner);
END;
--> statement-breakpoint
CREATE TRIGGER `memory_chunks_fts_delete` AFTER DELETE ON `memory_chunks` BEGIN
  INSERT INTO memory_fts(memory_fts, rowid, text, owner) VALUES ('delete', old.id, old.text, old.owner);
END;
--> statement-breakpoint
CREATE TRIGGER `memory_chunks_fts_update` AFTER UPDATE ON `memory_chunks` BEGIN
  INSERT INTO memory_fts(memory_fts, rowid, text, owner) VALUES ('delete', old.id, old.text, old.owner);
  INSERT INTO memory_fts(rowid, text, owner) VALUES (new.id, new.text, new.owner);
END;
