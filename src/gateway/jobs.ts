import { Elysia } from "elysia";
import { jobRecord } from "../channels/webhook/record";
import { JobList } from "../channels/webhook/wire";
import { requireAuth } from "../http/auth";
import type { Services } from "../services";
import { listJobs } from "../store/jobs";

/** GET /api/jobs: this user's jobs (webhook jobs run as the owner), newest first. */
export function jobsRoutes(s: Services) {
  return new Elysia({ name: "jobs" })
    .use(requireAuth(s))
    .get("/api/jobs", async ({ principal }) => ({ jobs: (await listJobs(s.db, principal.userId)).map(jobRecord) }), { response: JobList });
}
