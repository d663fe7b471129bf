// One health script, compiled once into its own sandboxed Lua state (lua/sandbox.ts) and run per
// object. Each run gets a fresh global table (reading through to the libraries), so a script's
// globals such as Argo CD's customary `hs = {}` do not leak from one object to the next, and a
// budget of instructions, memory and time (lua/meter.ts): a loop that never ends or a memory
// bomb costs one budget and returns Unknown. A script that exceeded its budget rests for
// RESTING_MS (every object it judges is Unknown at once, with the reason), so a kind with many
// objects costs one budget per rest, not one per object, and other environments keep running.

import type { KubeObject } from "../../kube/object.ts";
import { FieldNames, type JsonPusher, stringField, typeName } from "../../lua/convert.ts";
import { type LuaState, lauxlib, lua, to_luastring } from "../../lua/fengari.ts";
import { metered } from "../../lua/meter.ts";
import { newSandbox } from "../../lua/sandbox.ts";
import { splitLine } from "../../lua/syntax.ts";
import type { Health, HealthStatus } from "../result.ts";

export interface ScriptBudget {
  /** Lua VM instructions (and pattern-matching steps) per object (default 5 million). */
  instructions: number;
  /** Wall-clock milliseconds per object (default 1 s). */
  timeMs: number;
  /** Bytes a call may allocate: strings, buffers, table slots (default 64 MiB). */
  memoryBytes: number;
}

export const DEFAULT_BUDGET: ScriptBudget = {
  instructions: 5_000_000,
  timeMs: 1_000,
  memoryBytes: 64 * 1024 * 1024,
};

/** How long a script that exceeded its budget is not run again. */
export const RESTING_MS = 60_000;

const STATUSES: ReadonlySet<string> = new Set<HealthStatus>([
  "Healthy",
  "Progressing",
  "Suspended",
  "Degraded",
  "Missing",
  "Unknown",
]);

export class LuaCompileError extends Error {
  override readonly name = "LuaCompileError";
  constructor(
    message: string,
    /** 1-based line in the script, when Lua names one. */
    readonly line: number | undefined,
  ) {
    super(message);
  }
}

export class HealthScript {
  private readonly L: LuaState;
  private readonly json: JsonPusher;
  private readonly fnRef: number;
  private readonly envMetaRef: number;
  private readonly names: FieldNames<"obj" | "status" | "message">;
  /** Why the script is resting, and until when (after it exceeded its budget). */
  private resting?: { until: number; reason: string };

  /** @throws LuaCompileError when the script does not compile. */
  constructor(
    /** The customization key, e.g. `cert-manager.io/Certificate`, named in messages. */
    readonly key: string,
    source: string,
    private readonly budget: ScriptBudget = DEFAULT_BUDGET,
  ) {
    const sandbox = newSandbox();
    this.L = sandbox.L;
    this.json = sandbox.json;
    const L = this.L;
    if (lauxlib.luaL_loadbufferx(L, to_luastring(source), null, "=health.lua", "t") !== lua.LUA_OK) {
      const { line, text } = splitLine(lua.lua_tojsstring(L, -1));
      lua.lua_close(L);
      throw new LuaCompileError(text, line);
    }
    this.fnRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    // The metatable of every run's globals: reads fall through to the libraries.
    lua.lua_createtable(L, 0, 1);
    lua.lua_getglobal(L, "_G");
    lua.lua_setfield(L, -2, "__index");
    this.envMetaRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    this.names = new FieldNames(L, ["obj", "status", "message"]);
  }

  /** The script's verdict on `obj`; Unknown (naming the kind and the problem) when it has none. */
  run(obj: KubeObject): Health {
    const now = Date.now();
    if (this.resting && now < this.resting.until)
      return this.unknown(
        `${this.resting.reason} on an earlier object; not run again until ${new Date(this.resting.until).toISOString()}`,
      );
    this.resting = undefined;
    const L = this.L;
    const top = lua.lua_gettop(L);
    try {
      const { value, tripped } = metered(L, this.budget, () => this.call(obj));
      if (!tripped) return value;
      this.resting = { until: Date.now() + RESTING_MS, reason: tripped };
      return this.unknown(tripped);
    } finally {
      lua.lua_settop(L, top);
    }
  }

  private call(obj: KubeObject): Health {
    const L = this.L;
    try {
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.fnRef);
      lua.lua_createtable(L, 0, 4);
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.envMetaRef);
      lua.lua_setmetatable(L, -2);
      this.names.push("obj");
      this.json.push(obj);
      lua.lua_rawset(L, -3);
      lua.lua_setupvalue(L, -2, 1); // the chunk's _ENV
      if (lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK) {
        const raw = lua.lua_type(L, -1) === lua.LUA_TSTRING ? lua.lua_tojsstring(L, -1) : typeName(L, -1);
        return this.unknown(raw);
      }
      return this.result();
    } catch (err) {
      // fengari throws JS errors of its own (a JS stack overflow in deep recursion, an allocation refused).
      return this.unknown(err instanceof Error ? err.message : String(err));
    }
  }

  private result(): Health {
    const L = this.L;
    if (lua.lua_type(L, -1) !== lua.LUA_TTABLE) {
      return this.unknown(`returned ${typeName(L, -1)}, not a table with status and message`);
    }
    const status = stringField(L, -1, this.names, "status");
    const message = stringField(L, -1, this.names, "message");
    if (status.value === undefined || !STATUSES.has(status.value)) {
      const got = status.value !== undefined ? JSON.stringify(status.value) : (status.wrongType ?? "nil");
      return this.unknown(
        `returned an invalid health status ${got} (expected Healthy, Progressing, Suspended, Degraded, Missing or Unknown)`,
      );
    }
    if (message.wrongType)
      return this.unknown(`returned a message of type ${message.wrongType}, not a string`);
    const health: Health = { status: status.value as HealthStatus };
    return message.value ? { ...health, message: message.value } : health;
  }

  private unknown(problem: string): Health {
    return { status: "Unknown", message: `health.lua for ${this.key}: ${problem}` };
  }
}
