ALTER TABLE `items` ADD `input` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `responses` ADD `deleted_at` integer;--> statement-breakpoint
ALTER TABLE `threads` ADD `metadata` text;--> statement-breakpoint
-- Earlier turns did not record which items were input: the caller's user messages and the
-- outputs answering a caller's tool call were.
UPDATE `items` SET `input` = 1 WHERE (`type` = 'message' AND json_extract(`data`, '$.role') = 'user')
  OR (`type` = 'function_call_output' AND json_extract(`data`, '$.call_id') IN
    (SELECT json_extract(`data`, '$.call_id') FROM `items` WHERE `type` = 'function_call' AND json_extract(`data`, '$.external') = 1));
