CREATE TABLE `routine_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`routine_id` text NOT NULL,
	`user_id` text NOT NULL,
	`scheduled_for` integer NOT NULL,
	`trigger` text NOT NULL,
	`started_at` text NOT NULL,
	`outcome` text NOT NULL,
	`reason` text,
	`job_id` text,
	FOREIGN KEY (`routine_id`) REFERENCES `routines`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `routine_runs_tick` ON `routine_runs` (`routine_id`,`trigger`,`scheduled_for`);--> statement-breakpoint
CREATE INDEX `routine_runs_user` ON `routine_runs` (`user_id`);--> statement-breakpoint
CREATE TABLE `routines` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`schedule` text NOT NULL,
	`timezone` text NOT NULL,
	`prompt` text NOT NULL,
	`conversation` text NOT NULL,
	`callback_url` text,
	`enabled` integer NOT NULL,
	`catch_up` text NOT NULL,
	`anchor_at` integer NOT NULL,
	`next_run_at` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `routines_user` ON `routines` (`user_id`);--> statement-breakpoint
CREATE INDEX `routines_due` ON `routines` (`enabled`,`next_run_at`);--> statement-breakpoint
DROP INDEX `jobs_conversation`;--> statement-breakpoint
ALTER TABLE `jobs` ADD `lane` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `idempotency_key` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `request_hash` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `next_attempt_at` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `trusted` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `memory` text DEFAULT 'full' NOT NULL;--> statement-breakpoint
CREATE INDEX `jobs_lane` ON `jobs` (`lane`,`status`,`seq`);--> statement-breakpoint
CREATE INDEX `jobs_retry` ON `jobs` (`next_attempt_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_idempotency` ON `jobs` (`source`,`idempotency_key`);--> statement-breakpoint
UPDATE `jobs` SET `lane` = `user_id` || char(31) || `source` || char(31) || `sender` || char(31) || `conversation_id`;