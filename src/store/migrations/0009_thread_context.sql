ALTER TABLE `threads` ADD `compaction_seq` integer;--> statement-breakpoint
ALTER TABLE `threads` ADD `context_seq` integer DEFAULT 0 NOT NULL;