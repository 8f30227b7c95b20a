CREATE TABLE `extension_credentials` (
	`extension` text NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`secret` text NOT NULL,
	`expires_at` integer,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`extension`, `user_id`)
);
--> statement-breakpoint
CREATE TABLE `oauth_states` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`extension` text NOT NULL,
	`user_id` text NOT NULL,
	`verifier` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`created_at` integer NOT NULL
);
