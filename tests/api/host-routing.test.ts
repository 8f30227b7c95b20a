// Routing follows the request target alone: an odd Host header (short, long, with a port or
// none at all) never changes which route answers, on the gateway and on the webhook listener.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { startTestService, TOKEN, type TestService } from "../support/harness";

/** One HTTP/1.1 request over a raw socket, so the Host header is exactly what we write. */
function rawRequest(base: string, lines: string[]): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write([...lines, "Connection: close", "", ""].join("\r\n")));
    let data = "";
    socket.on("data", (b) => (data += b));
    socket.on("error", reject);
    socket.on("end", () => {
      const [head = "", ...rest] = data.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), body: rest.join("\r\n\r\n") });
    });
  });
}

const HOSTS = ["x", "ab", "a.b", "x:1", "localhost", "averyveryverylonghostname.example.com:8080"];

let t: TestService;
beforeAll(async () => {
  t = await startTestService({
    env: { HTTP_ENABLED: "true", HTTP_WEBHOOK_SECRET: "webhook-secret-0123456789", HTTP_HOST: "127.0.0.1", HTTP_PORT: "0" },
  });
});
afterAll(() => t.stop());

describe("gateway", () => {
  for (const host of HOSTS) {
    test(`Host: ${host}`, async () => {
      const nested = await rawRequest(t.url, ["GET /xx/health HTTP/1.1", `Host: ${host}`]);
      expect(nested.status).toBe(404);
      expect(JSON.parse(nested.body).error.type).toBe("not_found_error");
      const health = await rawRequest(t.url, ["GET /health HTTP/1.1", `Host: ${host}`]);
      expect({ status: health.status, body: JSON.parse(health.body) }).toEqual({ status: 200, body: { status: "ok" } });
      const status = await rawRequest(t.url, ["GET /api/status HTTP/1.1", `Host: ${host}`, `Authorization: Bearer ${TOKEN}`]);
      expect(status.status).toBe(200);
      expect(JSON.parse(status.body).status).toBe("ok");
    });
  }

  test("fetch with a host header is routed by its path", async () => {
    const res = await fetch(`${t.url}/xx/health`, { headers: { host: "x" } });
    expect(res.status).toBe(404);
  });
});

describe("webhook listener", () => {
  for (const host of HOSTS) {
    test(`Host: ${host}`, async () => {
      const job = await rawRequest(t.service.webhookUrl!, ["GET /jobs/x HTTP/1.1", `Host: ${host}`]);
      expect({ status: job.status, body: JSON.parse(job.body) }).toEqual({ status: 401, body: { error: "missing or invalid webhook secret" } });
      const other = await rawRequest(t.service.webhookUrl!, ["GET /x HTTP/1.1", `Host: ${host}`]);
      expect(other.status).toBe(404);
    });
  }
});
