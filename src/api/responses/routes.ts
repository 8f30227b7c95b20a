import { Elysia, t } from "elysia";
import type { TurnResult } from "../../agent/turn-types";
import { InvalidRequest, NotFound, ThreadNotFound, Unavailable } from "../../errors";
import { deleteResponse, findResponse, getThread, loadResponseItems } from "../../store/conversations";
import { authedJson, requireAuth, takeTurnBudget } from "../../http/auth";
import { Pacer } from "../../pacer";
import type { Services } from "../../services";
import { buildResponse, itemResource, type ResponseObject } from "./objects";
import { continuation, parseResponsesRequest, RequestEcho, responsesRequest, turnInput, viewRequest, type ViewBody } from "./request";
import type { ViewRequest } from "../../agent/turns";
import { parseCallerTools } from "../../tools/caller";
import { CompactionSeal } from "./compaction-seal";
import { compactWindow } from "./compact";
import { inputReader } from "./input";
import { UnstoredResponses } from "./unstored";
import { ResponseRuns, type Run } from "./runs";
import { replaySource, responseStream } from "./stream";
import { ListQuery, page } from "./lists";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { reportedModel } from "./model";

const StoredEcho = Type.Partial(RequestEcho);

const RetrieveQuery = t.Object({
  stream: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { error: "must be true or false." })),
  starting_after: t.Optional(t.Numeric({ minimum: -1, multipleOf: 1, error: "must be a sequence number." })),
});

/** A burst of turns posted at once starts this many per turn of the event loop: 10 take about 5 ms here. */
const TURNS_PER_LOOP = 10;

/**
 * The Responses API, for each prefix it answers under (`/api/v1` and the legacy `/v1`). The
 * responses being produced are shared by both, so a response made under one is found under
 * the other.
 */
export function responsesApi(s: Services) {
  const shared = { runs: new ResponseRuns(s.agent.bus), seal: new CompactionSeal(s.home), unstored: new UnstoredResponses(), pacer: new Pacer(TURNS_PER_LOOP) };
  return (prefix: string) => responsesRoutes(s, shared, prefix);
}

function responsesRoutes(
  s: Services,
  { runs, seal, unstored, pacer }: { runs: ResponseRuns; seal: CompactionSeal; unstored: UnstoredResponses; pacer: Pacer },
  prefix: string,
) {
  const revision = s.config.responses.revision;
  const retrievedModel = reportedModel(revision, "retrieved");

  /** A request of input_tokens or compact in the agent's terms. */
  const viewOf = async (body: ViewBody, userId: string): Promise<ViewRequest> => {
    const { previousResponseId, threadId } = continuation(body);
    const { messages, toolOutputs } = await turnInput(body, threadId, inputReader(s, userId, seal));
    const alone = unstored.servesAlone(previousResponseId, userId, { messages, resumes: toolOutputs.length > 0 });
    return {
      userId,
      threadId: alone ? undefined : threadId,
      previousResponseId: alone ? undefined : (previousResponseId ?? undefined),
      messages,
      toolOutputs,
      externalTools: body.tools ? parseCallerTools(body.tools, s.tools) : undefined,
    };
  };
  /** An unknown or foreign thread named by a request that runs no turn: the 404 retrieval gives. */
  const named = <T>(body: ViewBody, work: Promise<T>): Promise<T> =>
    work.catch((e) => {
      if (!(e instanceof ThreadNotFound)) throw e;
      const what = body.previous_response_id ? `response with id ${body.previous_response_id}` : "conversation with that id";
      throw new NotFound(`No ${what} found.`);
    });

  /** A stored response of this user's, or the 404 that reveals nothing of anyone else's. */
  const mine = async (id: string, userId: string) => {
    const row = await findResponse(s.db, id, userId);
    if (!row) throw new NotFound(`No response found with id ${id}.`);
    return row;
  };

  /** A stored response of this user's, as retrieval rebuilds it. */
  const stored = async (id: string, userId: string): Promise<ResponseObject> => {
    const row = await mine(id, userId);
    const { output } = await loadResponseItems(s.db, row.id);
    const thread = await getThread(s.db, row.threadId);
    return buildResponse({
      // the facts this route stored with the response; anything else (another channel's) is not echoed
      echo: Value.Check(StoredEcho, row.meta) ? row.meta : {},
      tools: thread?.tools ?? [],
      id: row.id,
      createdAt: row.createdAt,
      status: row.status,
      model: retrievedModel,
      error: row.error,
      output,
      usage:
        revision === "A"
          ? { inputTokens: 0, outputTokens: 0 }
          : { inputTokens: row.inputTokens, outputTokens: row.outputTokens, cachedTokens: row.cachedTokens, reasoningTokens: row.reasoningTokens, costUsd: row.costMicroUsd / 1e6 },
    });
  };

  const authedTurn = authedJson(s);
  return new Elysia({ name: "responses", seed: prefix, prefix })
    .use(requireAuth(s))
    .post(
      "/responses",
      async ({ body, principal }) => {
        await takeTurnBudget(s, principal);
        const req = await parseResponsesRequest(body, revision, s.tools, inputReader(s, principal.userId, seal));
        const alone = unstored.servesAlone(req.echo.previous_response_id, principal.userId, { messages: req.messages, resumes: req.toolOutputs.length > 0 });
        const facts = { userId: principal.userId, model: req.model, echo: req.echo, tools: req.tools ?? [] };
        let run: Run;
        const started = s.agent.start({
          channel: "responses",
          userId: principal.userId,
          threadId: alone ? undefined : req.threadId,
          input: { kind: "messages", messages: req.messages, toolOutputs: req.toolOutputs },
          externalTools: req.tools,
          model: req.model,
          previousResponseId: alone ? undefined : (req.echo.previous_response_id ?? undefined),
          store: req.echo.store,
          background: req.echo.background,
          llmOptions: req.llmOptions,
          // a background turn outlives its request whether it streams or not: TURN_TIMEOUT_S
          timeoutMs: req.echo.background ? s.backgroundTurnTimeoutMs : req.stream ? undefined : s.turnTimeoutMs,
          meta: { ...req.echo },
        });
        try {
          const { turn, result } = await started;
          run = runs.started(turn.id);
          if (!req.echo.store) {
            unstored.remember(turn.id, principal.userId);
            void result.then((r) => unstored.ended(r.id, awaitedCall(r)), () => {});
          }
        } catch (e) {
          if (!(e instanceof ThreadNotFound)) throw e;
          run = runs.refused(e.threadId, facts);
          // nothing runs on, even in the background: the failed response is the answer (it is not stored)
          return req.stream ? responseStream(run) : await run.done;
        }
        if (req.stream) return responseStream(run);
        if (req.echo.background) return run.current;
        return await run.done;
      },
      // paced before anything is read: a burst's bodies, tokens and schema checks wait their turn too.
      // Only `request` is named: Elysia reads what a hook's parameter names, and a context passed
      // whole made every turn parse its cookies, copy its headers and parse its query first.
      { parse: async ({ request }) => (await pacer.turn(), authedTurn({ request })), body: responsesRequest(revision) },
    )
    .post(
      "/responses/input_tokens",
      async ({ body, principal }) => ({
        object: "response.input_tokens" as const,
        input_tokens: await named(body, viewOf(body, principal.userId).then((view) => s.agent.measure(view))),
      }),
      { parse: authedJson(s), body: viewRequest(revision) },
    )
    .post(
      "/responses/compact",
      async ({ body, principal, request }) => {
        await takeTurnBudget(s, principal);
        const view = await named(body, viewOf(body, principal.userId));
        return await named(body, compactWindow(s, seal, view, AbortSignal.any([request.signal, AbortSignal.timeout(s.backgroundTurnTimeoutMs)])));
      },
      { parse: authedJson(s), body: viewRequest(revision) },
    )
    .get(
      "/responses/:id",
      async ({ params, principal, query }) => {
        const live = runs.get(params.id, principal.userId);
        if (query.stream === "true") return responseStream(live ?? replaySource(await stored(params.id, principal.userId)), query.starting_after ?? -1);
        return live ? { ...live.current, model: retrievedModel } : await stored(params.id, principal.userId);
      },
      { query: RetrieveQuery },
    )
    .get(
      "/responses/:id/input_items",
      async ({ params, principal, query }) => {
        const live = runs.get(params.id, principal.userId);
        const input = live ? live.turn.input : (await loadResponseItems(s.db, (await mine(params.id, principal.userId)).id)).input;
        return page(input.map(itemResource), query);
      },
      { query: ListQuery },
    )
    .delete("/responses/:id", async ({ params, principal }) => {
      if (runs.get(params.id, principal.userId)) {
        throw new InvalidRequest(`Response ${params.id} is in progress; cancel it before deleting it.`);
      }
      await deleteResponse(s.db, (await mine(params.id, principal.userId)).id);
      return { id: params.id, object: "response.deleted", deleted: true };
    })
    .post(
      "/responses/:id/cancel",
      async ({ params, principal }) => {
        const run = runs.get(params.id, principal.userId, "cancel");
        const finished = s.agent.cancel(params.id, principal.userId);
        if (!finished) {
          await mine(params.id, principal.userId);
          throw new InvalidRequest(`Response ${params.id} is not in progress; only a running response can be cancelled.`);
        }
        const final = run ? await run.done : fromResult(await finished);
        return { ...final, model: reportedModel(revision, "cancelled") };
      },
      { parse: "none" },
    );
}

/** The caller-tool call a turn ended on, if it did. */
const awaitedCall = (r: TurnResult) => {
  const last = r.output.at(-1);
  return last?.type === "function_call" && last.external ? last.call_id : undefined;
};

/** A turn of another channel (web UI, TUI) cancelled through this API. */
function fromResult(r: TurnResult | undefined): ResponseObject {
  if (!r) throw new Unavailable("The cancelled turn could not be stored.");
  return buildResponse({ id: r.id, createdAt: r.createdAt, status: r.status, model: r.model, error: r.error, output: r.output, usage: r.usage, tools: r.tools });
}

