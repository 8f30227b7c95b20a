CREATE TABLE `turn_usage` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`response_id` text NOT NULL,
	`user_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`channel` text NOT NULL,
	`routine_id` text,
	`model` text NOT NULL,
	`input_tokens` integer NOT NULL,
	`cached_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`reasoning_tokens` integer NOT NULL,
	`cost_micro_usd` integer NOT NULL,
	`day` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `turn_usage_day` ON `turn_usage` (`day`);--> statement-breakpoint
CREATE INDEX `turn_usage_user_day` ON `turn_usage` (`user_id`,`day`);--> statement-breakpoint
ALTER TABLE `responses` ADD `cached_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `responses` ADD `reasoning_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `budget_daily_micro_usd` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `budget_monthly_micro_usd` integer;