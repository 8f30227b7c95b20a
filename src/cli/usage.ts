export const USAGE = `service — a self-hosted AI agent service

Usage:
  service onboard [options]   set up the service home: LLM endpoint, key, model, instance token
  service serve [options]     run the service (Responses API, web gateway, webhook channel)
  service chat [options]      the terminal UI, attached to a running service
  service status [options]    is serve running for this home? (exit 0 yes, 1 no)
  service doctor [options]    checks the home, config, database, LLM, ports, systemd unit
  service users <command>     list, create, suspend, activate, token, delete users
  service routines <command>  list, add, show, runs, pause, resume, run, delete routines
  service approvals <command> list the tool calls waiting for a decision; approve, deny, always
  service usage [options]     what turns cost: tokens and USD by day, user, model, channel
  service extension <command> install, list, remove, enable, disable extensions; set-key
  service --help              this text; every command also takes --help
  service --version           print the version

Environment: SERVICE_HOME (default ~/.service), LLM_BASE_URL, LLM_API_KEY, LLM_MODEL,
GATEWAY_HOST, GATEWAY_PORT, GATEWAY_AUTH_TOKEN, RESPONSES_API_REVISION, RESPONSES_RATE_LIMIT,
DATABASE_URL, DATABASE_AUTH_TOKEN, HTTP_ENABLED, HTTP_HOST, HTTP_PORT, HTTP_WEBHOOK_SECRET,
HTTP_CALLBACK_ALLOW_HOSTS, HTTP_JOB_CONCURRENCY, HTTP_JOB_MAX_ATTEMPTS, LOG_FORMAT, LOG_LEVEL.
See docs/configuration.md for the whole list.
`;

export const ONBOARD_USAGE = `Usage: service onboard [options]

Asks for an OpenAI-compatible endpoint, key and model, checks the endpoint, offers to turn
on the webhook channel, writes config.json and webui-token to the service home and prints
how to start it and the login URL.

Options:
  --non-interactive     ask nothing: take values from the flags and the environment
  --force               onboard again over an existing config.json
  --llm-base-url URL    OpenAI-compatible endpoint (e.g. http://127.0.0.1:11434/v1)
  --llm-api-key KEY     its API key
  --llm-model NAME      the model to use
  --skip-check          do not try GET /models on the endpoint
  --webhook             turn on the webhook channel, with a secret made for it
  --webhook-host HOST   the interface it listens on (HTTP_HOST; default 0.0.0.0: all)
  --home DIR            service home (default: $SERVICE_HOME or ~/.service)
  -h, --help            this text
`;

export const SERVE_USAGE = `Usage: service serve [options]

Runs the service until SIGINT or SIGTERM. Never prompts.

Options:
  --host HOST           gateway interface (GATEWAY_HOST, default 127.0.0.1)
  --port PORT           gateway port (GATEWAY_PORT, default 3000; 0 picks a free one)
  --revision A|B        Responses contract revision (RESPONSES_API_REVISION, default B)
  --home DIR            service home (default: $SERVICE_HOME or ~/.service)
  -h, --help            this text
`;

export const CHAT_USAGE = `Usage: service chat [options]

Opens the terminal UI on a service that is already running (\`service serve\`), over HTTP.

Options:
  --url URL             the service (default http://GATEWAY_HOST:GATEWAY_PORT, 127.0.0.1:3000)
  --token TOKEN         instance or user token (default SERVICE_REBORN_WEBUI_TOKEN,
                        GATEWAY_AUTH_TOKEN, then the webui-token file of the service home)
  --thread ID           open this conversation instead of a new one
  --home DIR            service home (default: $SERVICE_HOME or ~/.service)
  -h, --help            this text

Keys: Enter sends · Shift+Enter, Alt+Enter or Ctrl+J inserts a new line · Ctrl+C quits ·
Ctrl+L clears the screen · Tab focuses the next element · Esc cancels the running reply or
goes back · Up/Down scroll (PageUp/PageDown by page) · a / d / A answer an approval prompt.
Logs go to $SERVICE_HOME/logs/service.log.
`;
