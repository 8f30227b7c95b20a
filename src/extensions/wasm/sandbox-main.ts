// Entry of the sandbox process when the service runs from source (`bun src/main.ts`, tests);
// the compiled binary runs the same code as `service __wasm-sandbox` instead.
import { runSandbox } from "./sandbox";

runSandbox();
