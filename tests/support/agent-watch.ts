// Knowing when a request is inside the service: every channel calls `agent.start`, which takes
// the request's place on its thread at once, so a counted turn is running or waiting for it.
import type { TurnRequest } from "../../src/agent/turn-types";
import type { TestService } from "./harness";

/**
 * Counts the turns the channels have handed to the agent, so a test can wait until a request
 * is inside the service.
 */
export function watchBegins(t: TestService) {
  const agent = t.service.services.agent;
  const original = agent.start;
  let entered = 0;
  const waiters: { n: number; done: () => void }[] = [];
  agent.start = function (this: typeof agent, req: TurnRequest) {
    entered++;
    for (const w of waiters.filter((w) => entered >= w.n)) w.done();
    return original.call(this, req);
  };
  return {
    get entered() {
      return entered;
    },
    until(n: number) {
      if (entered >= n) return Promise.resolve();
      return new Promise<void>((done) => waiters.push({ n, done }));
    },
    restore() {
      agent.start = original;
    },
  };
}

