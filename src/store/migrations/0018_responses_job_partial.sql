DROP INDEX `responses_job`;--> statement-breakpoint
CREATE INDEX `responses_job` ON `responses` (`job_id`) WHERE "responses"."job_id" is not null;