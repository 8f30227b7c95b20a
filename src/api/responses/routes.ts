import { Elysia } from "elysia";
import type { Turn, TurnResult } from "../../agent/turns";
import type { Principal } from "../../auth/principal";
import { InvalidRequest, NotFound } from "../../errors";
import { getResponse, getThread, loadResponseItems } from "../../store/conversations";
import { requireAuth, takeTurnBudget } from "../auth";
import { readJsonObject } from "../body";
import type { Services } from "../services";
import { buildResponse, type ResponseFacts } from "./objects";
import { parseResponsesRequest } from "./request";
import { streamTurn } from "./stream";

export const TURN_TIMEOUT_MS = { A: 120_000, B: 30_000 } as const;
/** The model that retrieval and cancel replies report under revision B. */
const PLACEHOLDER_MODEL = "reborn";

export function responsesRoutes(s: Services) {
  const revision = s.config.responses.revision;

  const create = async ({ request, principal }: { request: Request; principal: Principal }) => {
    takeTurnBudget(s, principal);
    const req = parseResponsesRequest(await readJsonObject(request), revision, s.tools);
    const turn = await s.agent.begin({
      channel: "responses",
      userId: principal.userId,
      threadId: req.threadId,
      messages: req.messages,
      toolOutputs: req.toolOutputs,
      externalTools: req.tools,
      model: req.model,
      timeoutMs: req.stream ? undefined : s.turnTimeoutMs,
      meta: { instructions: req.instructions, previous_response_id: req.previousResponseId, temperature: req.temperature },
    });
    const facts = {
      model: req.model,
      instructions: req.instructions,
      previousResponseId: req.previousResponseId,
      temperature: req.temperature,
      tools: req.tools ?? [],
    };
    if (req.stream) return streamTurn(turn, facts, s.log);
    return buildResponse(resultFacts(await runToEnd(turn), facts));
  };

  return new Elysia({ name: "responses" })
    .use(requireAuth(s))
    .post("/api/v1/responses", create, { parse: "none" })
    .post("/v1/responses", create, { parse: "none" })
    .get("/api/v1/responses/:id", async ({ params, principal }) => {
      const row = await getResponse(s.db, params.id);
      if (!row || row.userId !== principal.userId) throw new NotFound(`No response found with id ${params.id}.`);
      const items = await loadResponseItems(s.db, row.id);
      const thread = await getThread(s.db, row.threadId);
      const meta = row.meta ? (JSON.parse(row.meta) as StoredMeta) : {};
      return buildResponse({
        instructions: meta.instructions,
        previousResponseId: meta.previous_response_id,
        temperature: meta.temperature,
        tools: thread?.tools ? JSON.parse(thread.tools) : [],
        id: row.id,
        createdAt: row.createdAt,
        status: row.status,
        model: revision === "A" ? "default" : PLACEHOLDER_MODEL,
        error: row.error ? JSON.parse(row.error) : null,
        items,
        usage:
          revision === "A"
            ? { inputTokens: 0, outputTokens: 0 }
            : { inputTokens: row.inputTokens, outputTokens: row.outputTokens, costUsd: row.costMicroUsd / 1e6 },
      });
    })
    .post(
      "/api/v1/responses/:id/cancel",
      async ({ params, principal }) => {
        const finished = s.agent.cancel(params.id, principal.userId);
        if (!finished) {
          const row = await getResponse(s.db, params.id);
          if (!row || row.userId !== principal.userId) throw new NotFound(`No response found with id ${params.id}.`);
          throw new InvalidRequest(`Response ${params.id} is not in progress; only a running response can be cancelled.`);
        }
        return buildResponse({ ...resultFacts(await finished, {}), model: PLACEHOLDER_MODEL });
      },
      { parse: "none" },
    );
}

async function runToEnd(turn: Turn): Promise<TurnResult> {
  const run = turn.run();
  for (;;) {
    const next = await run.next();
    if (next.done) return next.value;
  }
}

type StoredMeta = { instructions?: string | null; previous_response_id?: string | null; temperature?: number | null };

function resultFacts(r: TurnResult, extra: Partial<ResponseFacts>): ResponseFacts {
  return { ...extra, tools: r.tools, id: r.id, createdAt: r.createdAt, status: r.status, model: r.model, error: r.error, items: r.items, usage: r.usage };
}
