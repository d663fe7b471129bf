// The budget of one script call: VM instructions (counted by a hook), pattern-matching steps and
// allocations made inside library functions (counted by fengari.ts's patches and by wrappers of
// fengari's string and table stores), wall-clock time, and a backstop on the heap's growth for
// whatever the counters do not name (closures, coroutines). The first bound exceeded trips the
// meter: from then on every check raises again, so a script's pcall cannot swallow it, and the
// call's verdict is Unknown with the reason whatever the script returns.
import { getHeapStatistics } from "node:v8";
import { internals, type LuaState, lauxlib, lua, meterHooks } from "./fengari.ts";

export interface Limits {
  /** Lua VM instructions and pattern-matching steps per call. */
  instructions: number;
  /** Wall-clock milliseconds per call. */
  timeMs: number;
  /** Bytes of strings, buffers and table slots a call may allocate. */
  memoryBytes: number;
}

/** What a table slot costs in fengari (a Map entry and two TValues), roughly. */
const SLOT_BYTES = 64;
/** Instructions between two looks at the heap (the look costs microseconds). */
const HEAP_EVERY = 20_000;
/** Steps of pattern matching between two looks at the clock. */
const CLOCK_EVERY = 4_096;

interface Run {
  limits: Limits;
  main: LuaState;
  started: number;
  executed: number;
  bytes: number;
  sinceClock: number;
  nextHeapAt: number;
  heapBase?: number;
  tripped?: string;
}

let run: Run | undefined;
/** >0 while syncward itself converts an object into Lua (convert.ts): its input, not the script's. */
let paused = 0;

function heapNow(): number {
  const h = getHeapStatistics();
  return h.used_heap_size + h.external_memory;
}

function trip(r: Run, reason: string): void {
  r.tripped ??= reason;
}

/** Raises the trip on `L` (once the meter tripped, every check raises). */
function raise(r: Run, L: LuaState): never {
  // Every instruction of this thread and of the main one checks from now on.
  lua.lua_sethook(L, hook, lua.LUA_MASKCOUNT, 1);
  if (L !== r.main) lua.lua_sethook(r.main, hook, lua.LUA_MASKCOUNT, 1);
  // The error's own strings are not charged (they would trip again, forever).
  paused++;
  try {
    lauxlib.luaL_error(L, "%s", r.tripped);
  } finally {
    paused--;
  }
  throw new Error("unreachable");
}

function checkClock(r: Run): void {
  if (Date.now() - r.started > r.limits.timeMs) trip(r, `exceeded its time budget of ${r.limits.timeMs} ms`);
}

function addBytes(r: Run, n: number): void {
  r.bytes += n;
  if (r.bytes > r.limits.memoryBytes)
    trip(r, `exceeded its memory budget of ${Math.round(r.limits.memoryBytes / 1048576)} MiB`);
}

/** Instructions between two calls of the count hook. */
export const HOOK_EVERY = 100;

/** The count hook: instructions, the clock, and now and then the heap. */
export function hook(L: LuaState): void {
  const r = run;
  if (!r) return;
  if (r.tripped) raise(r, L);
  r.executed += HOOK_EVERY;
  if (r.executed > r.limits.instructions)
    trip(r, `exceeded its budget of ${r.limits.instructions} instructions`);
  else checkClock(r);
  if (!r.tripped && r.executed >= r.nextHeapAt) {
    r.nextHeapAt = r.executed + HEAP_EVERY;
    const now = heapNow();
    r.heapBase ??= now;
    if (now - r.heapBase > r.limits.memoryBytes)
      trip(r, `exceeded its memory budget of ${Math.round(r.limits.memoryBytes / 1048576)} MiB`);
  }
  if (r.tripped) raise(r, L);
}

meterHooks.steps = (L, n) => {
  const r = run;
  if (!r) return;
  r.executed += n;
  r.sinceClock += n;
  if (r.executed > r.limits.instructions)
    trip(r, `exceeded its budget of ${r.limits.instructions} instructions (pattern matching)`);
  if (r.sinceClock > CLOCK_EVERY) {
    r.sinceClock = 0;
    checkClock(r);
  }
  if (r.tripped) raise(r, L);
};

meterHooks.bytes = (L, n) => {
  const r = run;
  if (!r || paused > 0) return;
  addBytes(r, n);
  if (n > 65_536) checkClock(r);
  if (r.tripped) raise(r, L);
};

type StringValue = { realstring: Uint8Array };
type TableValue = { strong: Map<unknown, unknown> };

// Strings made by the VM (concatenation) and by library functions (every lua_push*string) pass
// through these two; fengari's modules call them through the module object, so wrapping the
// export reaches every caller.
for (const name of ["pushsvalue2s", "setsvalue2s"] as const) {
  const original = internals.lobject[name] as (L: LuaState, ...rest: unknown[]) => void;
  internals.lobject[name] = ((L: LuaState, ...rest: unknown[]) => {
    if (run && paused === 0) {
      const ts = rest[rest.length - 1] as StringValue;
      meterHooks.bytes(L, ts.realstring.length);
    }
    original(L, ...rest);
  }) as never;
}

// Table slots: a store that adds a key costs SLOT_BYTES. luaH_setint has no state to raise on,
// so its trip is raised by the next check (the hook's, at the latest one instruction later).
{
  const setfrom = internals.ltable.luaH_setfrom as (
    L: LuaState,
    t: TableValue,
    k: unknown,
    v: unknown,
  ) => void;
  internals.ltable.luaH_setfrom = ((L: LuaState, t: TableValue, k: unknown, v: unknown) => {
    const before = t.strong.size;
    setfrom(L, t, k, v);
    if (run && paused === 0 && t.strong.size > before) meterHooks.bytes(L, SLOT_BYTES);
  }) as never;
  const setint = internals.ltable.luaH_setint as (t: TableValue, k: unknown, v: unknown) => void;
  internals.ltable.luaH_setint = ((t: TableValue, k: unknown, v: unknown) => {
    const before = t.strong.size;
    setint(t, k, v);
    if (run && paused === 0 && t.strong.size > before) addBytes(run, SLOT_BYTES);
  }) as never;
}

/** Runs `fn` (one script call on `main`) under `limits`; returns its result and the trip, if any. */
export function metered<T>(main: LuaState, limits: Limits, fn: () => T): { value: T; tripped?: string } {
  const previous = run;
  const r: Run = {
    limits,
    main,
    started: Date.now(),
    executed: 0,
    bytes: 0,
    sinceClock: 0,
    nextHeapAt: HEAP_EVERY,
  };
  run = r;
  lua.lua_sethook(main, hook, lua.LUA_MASKCOUNT, HOOK_EVERY);
  try {
    const value = fn();
    return r.tripped ? { value, tripped: r.tripped } : { value };
  } finally {
    run = previous;
    lua.lua_sethook(main, null, 0, 0);
  }
}

/** Runs `fn` without charging the current call: syncward's own conversions into Lua. */
export function unmetered<T>(fn: () => T): T {
  paused++;
  try {
    return fn();
  } finally {
    paused--;
  }
}

/** Charges `n` bytes to the current call from a JavaScript function the sandbox gives scripts. */
export function charge(L: LuaState, n: number): void {
  meterHooks.bytes(L, n);
}
