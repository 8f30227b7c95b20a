ALTER TABLE `jobs` ADD `waiting` text;--> statement-breakpoint
ALTER TABLE `responses` ADD `job_id` text;--> statement-breakpoint
CREATE INDEX `responses_job` ON `responses` (`job_id`);