import { Elysia } from "elysia";
import { InvalidRequest } from "../errors";
import { authedJson, requireAuth } from "../http/auth";
import type { Services } from "../services";
import { MAX_RUNS_LISTED } from "./service";
import { PreviewRequest, RoutineCreate, RoutineList, RoutinePatch, RoutineRecord, RunList, RunStarted, SchedulePreview } from "./wire";

/** `/api/routines…`: the caller's own routines; another user's is a 404. */
export function routineRoutes(s: Services) {
  const routines = s.routines;
  return new Elysia({ name: "routines" })
    .use(requireAuth(s))
    .get("/api/routines", async ({ principal }) => ({ routines: await routines.list(principal.userId) }), { response: RoutineList })
    .post("/api/routines", async ({ body, principal, status }) => status(201, await routines.create(principal.userId, body)), {
      parse: authedJson(s),
      body: RoutineCreate,
      response: { 201: RoutineRecord },
    })
    .post("/api/routines/preview", ({ body }) => routines.preview(body.schedule, body.timezone), {
      parse: authedJson(s),
      body: PreviewRequest,
      response: SchedulePreview,
    })
    .get("/api/routines/:id", ({ params, principal }) => routines.get(principal.userId, params.id), { response: RoutineRecord })
    .patch("/api/routines/:id", ({ params, body, principal }) => routines.update(principal.userId, params.id, body), {
      parse: authedJson(s),
      body: RoutinePatch,
      response: RoutineRecord,
    })
    .delete("/api/routines/:id", async ({ params, principal }) => {
      await routines.remove(principal.userId, params.id);
      return new Response(null, { status: 204 });
    })
    .post("/api/routines/:id/run", async ({ params, principal, status }) => status(202, { run: await routines.runNow(principal.userId, params.id) }), {
      response: { 202: RunStarted },
    })
    .get("/api/routines/:id/runs", async ({ params, principal, request }) => {
      const raw = new URL(request.url).searchParams.get("limit");
      if (raw !== null && (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_RUNS_LISTED)) {
        throw new InvalidRequest(`\`limit\` must be an integer from 1 to ${MAX_RUNS_LISTED}.`, "invalid_limit");
      }
      return { runs: await routines.runs(principal.userId, params.id, raw === null ? 20 : Number(raw)) };
    }, { response: RunList });
}
