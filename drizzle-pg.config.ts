import { defineConfig } from "drizzle-kit";

// PostgreSQL's migrations, from the twin schema (see src/store/schema-pg.ts).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/schema-pg.ts",
  out: "./src/store/migrations-pg",
});
