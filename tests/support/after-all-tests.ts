// Preloaded by `bun test` (bunfig.toml): what a test process started for its tests is stopped
// after the last one. `bun test` runs no `exit` handler, so a PostgreSQL cluster stopped there
// stayed running after every run that used one.
import { afterAll } from "bun:test";
import { stopPostgres } from "./postgres";

afterAll(stopPostgres);
