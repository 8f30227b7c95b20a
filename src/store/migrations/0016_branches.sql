CREATE TABLE `branch_items` (
	`id` text PRIMARY KEY NOT NULL,
	`thread_id` text NOT NULL,
	`fork` text NOT NULL,
	`branch` integer NOT NULL,
	`response_id` text NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`input` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `branch_items_fork` ON `branch_items` (`thread_id`,`fork`,`branch`);--> statement-breakpoint
CREATE TABLE `forks` (
	`thread_id` text NOT NULL,
	`fork` text NOT NULL,
	`current` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`thread_id`, `fork`),
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`id`) ON UPDATE no action ON DELETE cascade
);
