import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { authedJson, requireAdmin, requireAuth } from "../http/auth";
import type { Services } from "../services";
import { Unavailable } from "../errors";
import type { ExtensionManager } from "../extensions/manager";
import { listOAuthGates } from "../store/extensions";
import { CONNECT_SCRIPT, connectPage, resultPage } from "./extensions-page";

const KeyBody = Type.Object({ key: Type.String({ minLength: 1, error: "is required: the extension's API key." }) }, { additionalProperties: true });

/** The extensions of a running service (they are installed with `service extension install`). */
function extensionsOf(s: Services): ExtensionManager {
  if (!s.extensions) throw new Unavailable("Extensions are not available on this service.");
  return s.extensions;
}

/**
 * Extensions for the web UI: their state, the instance's API keys, and OAuth 2 (authorization
 * code with PKCE). The callback is public (the authorization server sends the browser there);
 * the state it carries, issued once to a signed-in user, is what it is checked by.
 */
export function extensionRoutes(s: Services) {
  return (
    new Elysia({ name: "extensions" })
      .get("/oauth/callback", async ({ query }) => {
        const { state, code, error, error_description } = query as Record<string, string | undefined>;
        if (!state) return resultPage(400, "Not connected", "The authorization server sent no state; start again from the web UI.");
        if (error) {
          // the state is used up either way: a refusal cannot be replayed into a success
          await extensionsOf(s).credentials.abandonOAuth(state);
          return resultPage(400, "Not connected", `The authorization server said: ${error_description || error}.`);
        }
        if (!code) return resultPage(400, "Not connected", "The authorization server sent no code; start again from the web UI.");
        let done: { extension: string; userId: string };
        try {
          done = await extensionsOf(s).finishOAuth(state, code);
        } catch (e) {
          s.log.warn("extension not connected: the OAuth callback failed", { component: "extensions", error: (e as Error).message });
          return resultPage(400, "Not connected", (e as Error).message);
        }
        s.log.info("extension connected", { component: "extensions", extension: done.extension, user_id: done.userId });
        await resumeWaitingTurns(s, done.userId, done.extension);
        return resultPage(200, "Connected", `The extension ${done.extension} is connected. You can close this tab.`);
      })
      // the page a gate's message links to: it starts the connection with the web UI's sign-in
      .get("/extensions/connect/:name", ({ params }) => connectPage(params.name))
      .get("/extensions/connect.js", () => new Response(CONNECT_SCRIPT, { headers: { "content-type": "text/javascript; charset=utf-8" } }))
      .use(requireAuth(s))
      .get("/api/extensions", async ({ principal }) => ({ extensions: await extensionsOf(s).list(principal.userId) }))
      .post(
        "/api/extensions/:name/key",
        async ({ params, body, principal }) => {
          // an API key is the instance's: only an owner or admin sets it
          requireAdmin(principal);
          await extensionsOf(s).setApiKey(params.name, body.key);
          return { name: params.name, authorized: true };
        },
        { parse: authedJson(s), body: KeyBody },
      )
      .post("/api/extensions/:name/connect", async ({ params, request, principal }) => {
        const redirectUri = `${new URL(request.url).origin}/oauth/callback`;
        return { authorize_url: await extensionsOf(s).connect(params.name, principal.userId, redirectUri) };
      })
      .delete("/api/extensions/:name/connection", async ({ params, principal }) => {
        await extensionsOf(s).disconnect(params.name, principal.userId);
        return { name: params.name, authorized: false };
      })
  );
}

/**
 * Goes on with the user's turns that waited for this extension, as an approval does; their
 * events reach the web UI and the TUI. They run in the background: the callback page does
 * not wait for them.
 */
async function resumeWaitingTurns(s: Services, userId: string, extension: string): Promise<void> {
  for (const gate of await listOAuthGates(s.db, userId, extension)) {
    void (async () => {
      await s.agent.run({
        channel: "chat",
        userId,
        threadId: gate.threadId,
        input: { kind: "authorized" },
        model: "default",
        surfacesGates: true,
      });
    })().catch((e) =>
      s.log.error("a turn waiting for an extension could not go on", { component: "extensions", extension, thread_id: gate.threadId, error: (e as Error).message }),
    );
  }
}
