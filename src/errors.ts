/**
 * The service's errors. Each request-level error knows its HTTP status and envelope type;
 * `http/envelope.ts` is the one place that turns them into wire responses.
 */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly type: string,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidRequest extends ServiceError {
  constructor(message: string, code: string | null = null) {
    super(message, 400, "invalid_request_error", code);
  }
}

export class PayloadTooLarge extends ServiceError {
  constructor(limit: string) {
    super(`Request body is larger than ${limit}`, 413, "invalid_request_error", "payload_too_large");
  }
}

export class Forbidden extends ServiceError {
  constructor(message = "This route needs an admin or owner token") {
    super(message, 403, "permission_error");
  }
}

export class NotFound extends ServiceError {
  constructor(message: string) {
    super(message, 404, "not_found_error");
  }
}

/** A thread (or the response that names it) that is unknown, or someone else's: nothing about it is revealed. */
export class ThreadNotFound extends NotFound {
  constructor(readonly threadId: string) {
    super(`No thread found with id ${threadId}.`);
  }
}

export class RateLimited extends ServiceError {
  constructor(readonly retryAfterS: number) {
    super(`Rate limit reached; retry in ${retryAfterS} s`, 429, "rate_limit_error");
  }
}

export class Unavailable extends ServiceError {
  constructor(message: string) {
    super(message, 503, "server_error");
  }
}

/**
 * The language model failed a request the service made for the caller (the raw proxy,
 * `/compact`): 502 (an upstream 4xx keeps its status: the request was at fault), 503 when no
 * model is configured. The message is short and never the upstream's page.
 */
export class UpstreamFailure extends ServiceError {
  static fromTurn(e: TurnError): UpstreamFailure {
    return new UpstreamFailure(e.message, e.code === "llm_not_configured" ? 503 : 502, "server_error", e.code);
  }
}

/** Failures of the auth middleware: plain-text bodies, exactly as the spec words them. */
export class AuthFailure extends ServiceError {
  static unauthorized() {
    return new AuthFailure("Invalid or missing auth token", 401, "authentication_error");
  }
  /** An identity provider's person outside `auth.sso.allowedDomains`, or not a user here. */
  static forbidden() {
    return new AuthFailure("Forbidden", 403, "permission_error");
  }
  static storeDown() {
    return new AuthFailure("Database unavailable", 503, "server_error");
  }
}

/** A turn that started but could not finish; reported inside a `failed` response. */
export class TurnError extends Error {
  constructor(
    readonly code: TurnErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "TurnError";
  }
}

export type TurnErrorCode =
  | "llm_error"
  | "tool_error"
  | "turn_timeout"
  | "max_steps"
  | "approval_required"
  | "auth_required"
  | "cancelled"
  | "shutdown"
  | "llm_not_configured"
  | "not_found"
  | "budget_exceeded";

/** sysexits.h's EX_CONFIG: the exit code of a configuration error, on which systemd does not restart the unit. */
export const EXIT_CONFIG = 78;

/**
 * Bad configuration; printed by the CLI, never sent over HTTP. The command exits 78
 * (EX_CONFIG): it would fail the same way however often it is started again.
 */
export class ConfigError extends Error {
  readonly exitCode: number = EXIT_CONFIG;

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Something outside the configuration stops a command (a port in use, a home or database that
 * cannot be written, an LLM endpoint that does not answer): exit 1; later it may work.
 */
export class StartupError extends ConfigError {
  override readonly exitCode = 1;
}
