// Run by lazy.test.ts in a process of its own: starts the service with the environment it is
// given and prints how many modules of the OpenTelemetry SDK and of prom-client were loaded.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { servicePaths } from "../../src/config/load";
import { createLogger } from "../../src/log";
import { startService } from "../../src/server";

const dir = mkdtempSync(join(tmpdir(), "service-lazy-"));
const env = { SERVICE_HOME: join(dir, "home"), GATEWAY_PORT: "0", ...JSON.parse(process.argv[2] ?? "{}") };
const service = await startService({ paths: servicePaths(env), env, log: createLogger({ format: "json", write: () => {} }) });
const loaded = Object.keys(require.cache);
const count = (re: RegExp) => loaded.filter((k) => re.test(k)).length;
console.log(JSON.stringify({ otel: count(/@opentelemetry\//), prom: count(/prom-client/) }));
await service.stop();
rmSync(dir, { recursive: true, force: true });
