import { createLogger, type Logger } from "../../src/log";

/** A Logger for a module under test: each record's message goes to `messages`, the whole record to `records`. */
export function captureLog(messages: string[] = [], records: Record<string, unknown>[] = []): Logger {
  return createLogger({
    format: "json",
    level: "debug",
    write: (line) => {
      const record = JSON.parse(line);
      records.push(record);
      messages.push(record.msg);
    },
  });
}
