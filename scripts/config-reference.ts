// Writes the configuration reference of README.md from the config schema (`bun run config:reference`).
// tests/config/reference.test.ts fails when the README and the schema disagree.
import { readFileSync, writeFileSync } from "node:fs";
import { withReference } from "../src/config/reference";

const path = new URL("../README.md", import.meta.url);
const before = readFileSync(path, "utf8");
const after = withReference(before);
writeFileSync(path, after);
console.log(after === before ? "README.md: the configuration reference was up to date" : "README.md: configuration reference written");
