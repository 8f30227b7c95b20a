declare module "*.sql" {
  const text: string;
  export default text;
}

declare module "*.md" {
  const text: string;
  export default text;
}

/** Injected by build.ts; absent under `bun run`. */
declare const SERVICE_BUILD_VERSION: string | undefined;
