// The store's tables as the database of this test run has them: the tests that read the
// database directly import them from here, so that they run on either store
// (TEST_DATABASE=postgres: schema-pg.ts, else schema.ts; the two match column for column).
import * as pg from "../../src/store/schema-pg";
import * as sqlite from "../../src/store/schema";
import { onPostgres } from "./postgres";

const tables = (onPostgres ? pg : sqlite) as unknown as typeof sqlite;

export const { users, tokens, threads, responses, items, gates, toolPolicies, jobs, routines, routineRuns, turnUsage, rateEvents, memoryDocuments, agentFiles, egressLog, memoryChunks, memoryOwners, extensionCredentials, oauthStates, ssoSessions, ssoIdentities, branchItems, forks } = tables;
