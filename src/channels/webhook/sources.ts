// Named sources: `POST /webhook/{name}` for senders that cannot speak the channel's own body
// (GitHub, Gitea, Home Assistant, Uptime Kuma, ...). Each has its own secret and verification,
// and Liquid templates (liquidjs) that turn its payload into the job's message, sender and
// conversation.
import type { Liquid, Template } from "liquidjs";
import type { WebhookSource } from "../../config/schema";
import { MAX_JSON_DEPTH, nestedTooDeep } from "../../http/body";
import type { Verification } from "./signatures";

/** What a template gets when nothing is configured: the event and the payload as JSON; the source names the sender. */
export const DEFAULT_TEMPLATE = {
  message: "Webhook from {{ source }}{% if event %} ({{ event }} event){% endif %}:\n{{ body | json: 2 }}",
  user_id: "{{ source }}",
  conversation_id: "",
} as const;

/** Headers a template never sees: credentials. */
const HIDDEN_HEADERS = new Set(["authorization", "cookie", "x-webhook-secret", "x-hub-signature", "x-hub-signature-256", "x-gitea-signature", "x-gogs-signature", "webhook-signature"]);

let liquid: Liquid | undefined;

/** The template engine, loaded when the first source is compiled: most homes configure none. */
function engine(): Liquid {
  if (!liquid) {
    const { Liquid } = require("liquidjs") as typeof import("liquidjs");
    liquid = new Liquid({ strictFilters: true, renderLimit: 1_000 });
  }
  return liquid;
}

export interface Source {
  name: string;
  secret: string;
  verify: Verification;
  trusted: boolean;
  memory: "none" | "read";
  render(delivery: Delivery): { message: string; userId: string; conversationId: string | undefined };
}

/** A delivery as a template reads it. */
export interface Delivery {
  body: unknown;
  /** The fields of a form-encoded body, when it was one. */
  form?: Record<string, string>;
  headers: Headers;
}

/** A 400 for a delivery that cannot become a job. */
export class BadDelivery extends Error {}

/** Compiles the configured sources; a template that does not parse throws, naming the key. */
export function compileSources(config: Record<string, WebhookSource>): Map<string, Source> {
  const sources = new Map<string, Source>();
  for (const [name, s] of Object.entries(config)) {
    const parse = (field: keyof typeof DEFAULT_TEMPLATE): Template[] => {
      const text = s.template?.[field] ?? DEFAULT_TEMPLATE[field];
      try {
        return engine().parse(text);
      } catch (e) {
        throw new Error(`http.sources.${name}.template.${field}: ${(e as Error).message}`);
      }
    };
    const templates = { message: parse("message"), user_id: parse("user_id"), conversation_id: parse("conversation_id") };
    sources.set(name, {
      name,
      secret: s.secret,
      verify: s.verify,
      trusted: s.trusted ?? false,
      memory: s.memory ?? "none",
      render(delivery) {
        const scope = {
          source: name,
          event: delivery.headers.get("x-github-event") ?? delivery.headers.get("x-gitea-event") ?? undefined,
          body: delivery.body,
          form: delivery.form,
          headers: Object.fromEntries([...delivery.headers].filter(([k]) => !HIDDEN_HEADERS.has(k))),
        };
        const render = (field: keyof typeof templates) => {
          try {
            return engine().renderSync(templates[field], scope).trim();
          } catch (e) {
            throw new BadDelivery(`the template of source ${name} failed on this delivery (${field}): ${(e as Error).message}`);
          }
        };
        const message = render("message");
        const userId = render("user_id") || name;
        const conversationId = render("conversation_id") || undefined;
        if (!message) throw new BadDelivery(`the template of source ${name} gave an empty message for this delivery`);
        if (userId.length > 256) throw new BadDelivery(`the template of source ${name} gave a user_id longer than 256 characters`);
        if (conversationId && conversationId.length > 256) throw new BadDelivery(`the template of source ${name} gave a conversation_id longer than 256 characters`);
        return { message, userId, conversationId };
      },
    });
  }
  return sources;
}

/**
 * A delivery's body by its content type: JSON, or a form (`application/x-www-form-urlencoded`
 * or `multipart/form-data`). A form whose `payload` field holds JSON (GitHub's and Gitea's
 * form deliveries) gives that JSON as the body, and its fields as `form`.
 */
export async function readDelivery(raw: Uint8Array, headers: Headers): Promise<Delivery> {
  const type = (headers.get("content-type") ?? "").toLowerCase();
  if (/^application\/([\w.+-]+\+)?json\s*(;|$)/.test(type)) return { body: parseJson(decode(raw)), headers };
  if (/^(application\/x-www-form-urlencoded|multipart\/form-data)\s*(;|$)/.test(type)) {
    const form: Record<string, string> = {};
    try {
      const data = await new Response(raw, { headers: { "content-type": headers.get("content-type")! } }).formData();
      data.forEach((v, k) => {
        if (typeof v === "string") form[k] = v;
      });
    } catch {
      throw new BadDelivery("the form body could not be read");
    }
    let body: unknown = form;
    if (form.payload !== undefined) {
      try {
        body = parseJson(form.payload);
      } catch {
        // a field that happens to be called payload: the form is the body
      }
    }
    return { body, form, headers };
  }
  throw new BadDelivery("Content-Type must be application/json, application/x-www-form-urlencoded or multipart/form-data");
}

function decode(raw: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    throw new BadDelivery("body is not valid JSON");
  }
}

function parseJson(text: string): unknown {
  if (nestedTooDeep(text)) throw new BadDelivery(`body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch {
    throw new BadDelivery("body is not valid JSON");
  }
}
