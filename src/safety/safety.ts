/** What the agent loop asks of the safety layer; `src/safety/` implements it. */
export interface Safety {
  /** Removes credentials and the service's own secrets from text. */
  redact(text: string): string;
  /** A redactor for streamed text: holds back what could be the start of a secret. */
  streamRedactor(): { push(delta: string): string; flush(): string };
  /** Scans tool output for prompt injection and wraps it as untrusted data for the model. */
  toolOutput(toolName: string, output: string): string;
}
