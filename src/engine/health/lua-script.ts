// One health script, compiled once into its own Lua state and run per object. Each run gets a
// fresh global table (reading through to the libraries), so a script's globals such as Argo CD's
// customary `hs = {}` do not leak from one object to the next, and an instruction and time
// budget, so a loop that never ends costs one budget and returns Unknown.

import { type LuaState, lauxlib, lua, to_luastring } from "fengari";
import type { KubeObject } from "../../kube/object.ts";
import { type JsonPusher, stringField, typeName } from "../../lua/convert.ts";
import { newSandbox } from "../../lua/sandbox.ts";
import { splitLine } from "../../lua/syntax.ts";
import type { Health, HealthStatus } from "../result.ts";

export interface ScriptBudget {
  /** Lua VM instructions per object (default 5 million). */
  instructions: number;
  /** Wall-clock milliseconds per object (default 1 s, Argo CD's own limit). */
  timeMs: number;
}

export const DEFAULT_BUDGET: ScriptBudget = { instructions: 5_000_000, timeMs: 1_000 };

const STATUSES: ReadonlySet<string> = new Set<HealthStatus>([
  "Healthy",
  "Progressing",
  "Suspended",
  "Degraded",
  "Missing",
  "Unknown",
]);

/** Instructions between two checks of the budget. */
const HOOK_EVERY = 1_000;

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

  /** @throws LuaCompileError when the script does not compile. */
  constructor(
    /** The customization key, e.g. `cert-manager.io/Certificate`, named in messages. */
    readonly key: string,
    source: string,
    useOpenLibs: boolean,
    private readonly budget: ScriptBudget = DEFAULT_BUDGET,
  ) {
    const sandbox = newSandbox(useOpenLibs);
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
  }

  /** The script's verdict on `obj`; Unknown (naming the kind and the problem) when it has none. */
  run(obj: KubeObject): Health {
    const L = this.L;
    const top = lua.lua_gettop(L);
    const started = Date.now();
    let executed = 0;
    const limit = this.budget;
    lua.lua_sethook(
      L,
      (hookL) => {
        executed += HOOK_EVERY;
        if (executed > limit.instructions)
          lauxlib.luaL_error(hookL, "exceeded its budget of %d instructions", limit.instructions);
        else if (Date.now() - started > limit.timeMs)
          lauxlib.luaL_error(hookL, "exceeded its time budget of %d ms", limit.timeMs);
      },
      lua.LUA_MASKCOUNT,
      HOOK_EVERY,
    );
    try {
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.fnRef);
      lua.lua_createtable(L, 0, 4);
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.envMetaRef);
      lua.lua_setmetatable(L, -2);
      this.json.push(obj);
      lua.lua_setfield(L, -2, "obj");
      lua.lua_setupvalue(L, -2, 1); // the chunk's _ENV
      if (lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK) {
        const raw = lua.lua_type(L, -1) === lua.LUA_TSTRING ? lua.lua_tojsstring(L, -1) : typeName(L, -1);
        return this.unknown(raw);
      }
      return this.result();
    } catch (err) {
      // fengari throws JS errors of its own (a JS stack overflow in deep recursion, out of memory).
      return this.unknown(err instanceof Error ? err.message : String(err));
    } finally {
      lua.lua_sethook(L, null, 0, 0);
      lua.lua_settop(L, top);
    }
  }

  private result(): Health {
    const L = this.L;
    if (lua.lua_type(L, -1) !== lua.LUA_TTABLE) {
      return this.unknown(`returned ${typeName(L, -1)}, not a table with status and message`);
    }
    const status = stringField(L, -1, "status");
    const message = stringField(L, -1, "message");
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
