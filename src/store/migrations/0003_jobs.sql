CREATE TABLE `jobs` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`user_id` text NOT NULL,
	`source` text NOT NULL,
	`sender` text NOT NULL,
	`conversation_id` text NOT NULL,
	`thread_id` text,
	`message` text NOT NULL,
	`metadata` text,
	`status` text NOT NULL,
	`response` text,
	`response_id` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`started_at` text,
	`completed_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_id` ON `jobs` (`id`);--> statement-breakpoint
CREATE INDEX `jobs_status` ON `jobs` (`status`,`seq`);--> statement-breakpoint
CREATE INDEX `jobs_user` ON `jobs` (`user_id`,`seq`);--> statement-breakpoint
CREATE INDEX `jobs_conversation` ON `jobs` (`user_id`,`sender`,`conversation_id`);