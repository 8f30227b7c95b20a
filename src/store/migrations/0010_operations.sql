ALTER TABLE `jobs` ADD `callback_url` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `callback_status` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `callback_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `callback_next_at` integer;--> statement-breakpoint
CREATE INDEX `jobs_callback` ON `jobs` (`callback_status`);--> statement-breakpoint
ALTER TABLE `threads` ADD `channel` text;--> statement-breakpoint
-- Hand-written below: threads that webhook jobs ran on are the webhook channel's; the others
-- stay unlabelled (they may have come from the Responses API or the chat endpoints).
UPDATE `threads` SET `channel` = 'webhook' WHERE `id` IN (SELECT `thread_id` FROM `jobs` WHERE `thread_id` IS NOT NULL);
