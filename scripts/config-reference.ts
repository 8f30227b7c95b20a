// Writes the configuration reference of docs/configuration.md from the config schema
// (`bun run config:reference`). tests/config/reference.test.ts fails when that page and the
// schema disagree.
import { readFileSync, writeFileSync } from "node:fs";
import { withReference } from "../src/config/reference";

const path = new URL("../docs/configuration.md", import.meta.url);
const before = readFileSync(path, "utf8");
const after = withReference(before);
writeFileSync(path, after);
console.log(after === before ? "docs/configuration.md: the configuration reference was up to date" : "docs/configuration.md: configuration reference written");
