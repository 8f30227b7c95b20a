import { Type, type Static } from "@sinclair/typebox";

/** The one shape of the service's configuration; `config.json` holds any part of it. */
export const ConfigSchema = Type.Object({
  llm: Type.Object({
    baseUrl: Type.Optional(Type.String({ minLength: 1 })),
    apiKey: Type.Optional(Type.String()),
    model: Type.Optional(Type.String({ minLength: 1 })),
  }),
  database: Type.Object({
    url: Type.Optional(Type.String({ minLength: 1 })),
    authToken: Type.Optional(Type.String()),
  }),
  gateway: Type.Object({
    enabled: Type.Boolean(),
    host: Type.String({ minLength: 1 }),
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    authToken: Type.Optional(Type.String({ minLength: 1 })),
  }),
  cli: Type.Object({ enabled: Type.Boolean() }),
  http: Type.Object({
    enabled: Type.Boolean(),
    host: Type.String({ minLength: 1 }),
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    webhookSecret: Type.Optional(Type.String({ minLength: 1 })),
  }),
  responses: Type.Object({
    revision: Type.Union([Type.Literal("A"), Type.Literal("B")]),
    rateLimit: Type.Integer({ minimum: 0 }),
  }),
  agent: Type.Object({
    maxSteps: Type.Integer({ minimum: 1, maximum: 200 }),
  }),
});
export type Config = Static<typeof ConfigSchema>;

export const DEFAULTS: Config = {
  llm: {},
  database: {},
  gateway: { enabled: true, host: "127.0.0.1", port: 3000 },
  cli: { enabled: true },
  http: { enabled: false, host: "0.0.0.0", port: 8080 },
  responses: { revision: "B", rateLimit: 30 },
  agent: { maxSteps: 16 },
};

/** A partial config, as found in config.json, the environment or flags. */
export type ConfigLayer = { [K in keyof Config]?: Partial<Config[K]> };
