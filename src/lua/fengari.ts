// fengari, loaded with the meter (meter.ts) built in. Every module of syncward imports fengari from
// here, never from "fengari": this file loads two of fengari's files from patched source before
// anything else loads fengari, so that work a script makes a library function do in JavaScript
// (pattern matching, growing a string buffer) counts against the script's budget, which a Lua
// count hook alone cannot see. Each patch names the exact text it replaces: a fengari whose text
// differs makes syncward refuse to start rather than run scripts unbounded.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type * as Fengari from "fengari";

const require = createRequire(import.meta.url);

interface Patch {
  file: string;
  edits: Array<[from: string, to: string]>;
}

/** What the patched files call; meter.ts installs the counting. Read at call time, so it can be replaced. */
export const meterHooks: {
  steps: (L: Fengari.LuaState, n: number) => void;
  bytes: (L: Fengari.LuaState, n: number) => void;
} = { steps: () => undefined, bytes: () => undefined };

const METER_GLOBAL = Symbol.for("syncward.lua.meter");
(globalThis as Record<symbol, unknown>)[METER_GLOBAL] = meterHooks;
const PREAMBLE = 'const __meter = globalThis[Symbol.for("syncward.lua.meter")];';

const PATCHES: Patch[] = [
  {
    file: "fengari/src/lstrlib.js",
    edits: [
      // Every step of the matcher, and every character a greedy repetition scans, is one unit.
      [
        '    if (ms.matchdepth-- === 0)\n        luaL_error(ms.L, to_luastring("pattern too complex"));',
        '    __meter.steps(ms.L, 1);\n    if (ms.matchdepth-- === 0)\n        luaL_error(ms.L, to_luastring("pattern too complex"));',
      ],
      [
        "    while (singlematch(ms, s + i, p, ep))\n        i++;\n",
        "    while (singlematch(ms, s + i, p, ep))\n        i++;\n    __meter.steps(ms.L, i);\n",
      ],
    ],
  },
  {
    file: "fengari/src/lauxlib.js",
    edits: [
      // A buffer (gsub, table.concat, format, rep...) counts its bytes as it grows.
      [
        "        let newbuff = new Uint8Array(newsize);  /* create larger buffer */",
        "        __meter.bytes(B.L, newsize - B.b.length);\n        let newbuff = new Uint8Array(newsize);  /* create larger buffer */",
      ],
    ],
  },
];

function patchedSource(patch: Patch, path: string): string {
  let source = readFileSync(path, "utf8");
  for (const [from, to] of patch.edits) {
    if (!source.includes(from))
      throw new Error(
        `${patch.file} is not the fengari the Lua sandbox was written for (cannot find ${JSON.stringify(from.trim().slice(0, 60))})`,
      );
    source = source.replace(from, to);
  }
  // After the file's "use strict", on its first line, so line numbers stay fengari's.
  return source.replace(/^("use strict";)?/, (strict) => strict + PREAMBLE);
}

interface CjsModule {
  _compile(source: string, filename: string): void;
}
type JsLoader = (this: unknown, module: CjsModule, filename: string) => void;

/** Loads fengari with the patched files compiled in their place, in fengari's own load order. */
function loadFengari(): typeof Fengari {
  if (require.cache[require.resolve("fengari")])
    throw new Error(
      "fengari was loaded before the Lua sandbox could patch it: import it from src/lua/fengari.ts",
    );
  const byPath = new Map(PATCHES.map((p) => [require.resolve(p.file), p]));
  const applied = new Set<string>();
  const extensions = (require("node:module") as { _extensions: Record<string, JsLoader> })._extensions;
  const original = extensions[".js"] as JsLoader;
  extensions[".js"] = function (this: unknown, module, filename) {
    const patch = byPath.get(filename);
    if (!patch) return original.call(this, module, filename);
    applied.add(filename);
    module._compile(patchedSource(patch, filename), filename);
  };
  try {
    const loaded = require("fengari") as typeof Fengari;
    if (applied.size !== byPath.size)
      throw new Error("fengari did not load the files the Lua sandbox patches");
    return loaded;
  } finally {
    extensions[".js"] = original;
  }
}

const fengari = loadFengari();

export const { lua, lauxlib, lualib, to_luastring, to_jsstring } = fengari;
export type { LuaState, LuaString } from "fengari";

/** fengari's own modules whose exports the meter wraps (they call each other through these objects). */
export const internals = {
  lobject: require("fengari/src/lobject.js") as Record<string, (...args: never[]) => unknown>,
  ltable: require("fengari/src/ltable.js") as Record<string, (...args: never[]) => unknown>,
};
