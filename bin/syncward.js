#!/usr/bin/env node
// The `syncward` command: the compiled CLI in dist/ (`npm run build`; `npm ci` runs it too).
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli/run.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("syncward: dist/ is missing; run `npm run build` in the syncward checkout first\n");
  process.exit(2);
}
await import(entry.href);
