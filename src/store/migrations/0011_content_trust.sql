CREATE TABLE `agent_files` (
	`user_id` text NOT NULL,
	`path` text NOT NULL,
	`sha256` text NOT NULL,
	`tainted` integer NOT NULL,
	`written_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `path`)
);
--> statement-breakpoint
CREATE TABLE `egress_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`response_id` text NOT NULL,
	`tool` text NOT NULL,
	`destination` text NOT NULL,
	`approved_by` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `egress_log_user` ON `egress_log` (`user_id`,`id`);--> statement-breakpoint
ALTER TABLE `memory_documents` ADD `tainted` integer DEFAULT false NOT NULL;