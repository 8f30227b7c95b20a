CREATE TABLE `rate_events` (
	`key` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rate_events_key` ON `rate_events` (`key`,`at`);--> statement-breakpoint
ALTER TABLE `jobs` ADD `lease_until` integer;