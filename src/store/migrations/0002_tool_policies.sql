CREATE TABLE `tool_policies` (
	`user_id` text NOT NULL,
	`tool` text NOT NULL,
	`policy` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `tool`)
);
