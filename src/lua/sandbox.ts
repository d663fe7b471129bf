// A Lua state for one health script, whoever wrote it: the operator's scripts and Argo CD's own
// run here, and none of them may reach the process, the disk or the network. Argo CD runs
// gopher-lua (Lua 5.1) with `base`, `table`, `package` and an `os` reduced to `time` and `date`;
// this opens on fengari (Lua 5.3) only what a health check needs: `base` without the file
// loaders, binary chunks or collector knobs; `table`, `string` (without `dump` and the binary
// packers), `math`, `utf8` and `coroutine`; `os.time`, `os.date` and `os.clock`; and a `require`
// that returns those libraries and nothing else. `package` is never opened: fengari's
// `package.loadlib` is Node's require, and its searchers read files. Argo CD's
// `health.lua.useOpenLibs` is refused where the config is read (config/schema.ts).

import { JsonPusher } from "./convert.ts";
import { type LuaState, lauxlib, lua, lualib, to_luastring } from "./fengari.ts";
import { charge } from "./meter.ts";

/** Lua 5.1 names that Lua 5.3 renamed or removed, and loaders limited to source text. */
const COMPAT_51 = `
unpack = unpack or table.unpack
table.getn = table.getn or function(t) return #t end
table.maxn = table.maxn or function(t)
  local max = 0
  for k in pairs(t) do if type(k) == "number" and k > max then max = k end end
  return max
end
math.pow = math.pow or function(x, y)
  local r = x ^ y
  return (math.type(x) == "integer" and math.type(y) == "integer" and y >= 0) and (math.tointeger(r) or r) or r
end
math.mod = math.mod or math.fmod
string.gfind = string.gfind or string.gmatch
`;

/**
 * What the sandbox takes away or bounds, in Lua, run once per state before any script. Library
 * functions that loop in JavaScript over a count the script chooses (a repetition, a range, a
 * length a metatable reports) are refused above LOOP_LIMIT, so each call ends quickly and the
 * hook's clock is looked at again; allocations are charged by the meter (meter.ts).
 */
const SANDBOX = `
local LOOP_LIMIT = 1000000
local error, type, tostring, select, rawlen = error, type, tostring, select, rawlen
local charge = __charge
__charge = nil
local function bounded(what, n)
  if type(n) == "number" and n > LOOP_LIMIT then
    error(what .. " would loop " .. string.format("%.0f", n) .. " times (limit " .. LOOP_LIMIT .. ")", 3)
  end
end

-- base: no file loaders, no precompiled chunks (how C Lua sandboxes are escaped), no collector knobs.
dofile, loadfile = nil, nil
local rawload = load
load = function(chunk, name, mode, env)
  if env == nil then return rawload(chunk, name, "t") end
  return rawload(chunk, name, "t", env)
end
loadstring = function(s, name) return rawload(s, name, "t") end
collectgarbage = function(opt) if opt == "count" then return 0, 0 end return 0 end

-- string: no dump (binary chunks), no binary packers (not in Lua 5.1; sizes a script picks).
string.dump, string.pack, string.unpack, string.packsize = nil, nil, nil, nil
local rawrep = string.rep
string.rep = function(s, n, sep)
  bounded("string.rep", n)
  return rawrep(s, n, sep)
end

-- table: table.move is not Lua 5.1; the others bounded by the length they would walk.
table.move = nil
local insert, remove, concat, sort, tunpack = table.insert, table.remove, table.concat, table.sort, table.unpack
table.insert = function(t, ...)
  bounded("table.insert", #t)
  return insert(t, ...)
end
table.remove = function(t, ...)
  bounded("table.remove", #t)
  return remove(t, ...)
end
table.concat = function(t, sep, i, j)
  bounded("table.concat", (j or #t) - (i or 1))
  return concat(t, sep, i, j)
end
table.sort = function(t, cmp)
  bounded("table.sort", #t)
  return sort(t, cmp)
end
table.unpack = function(t, i, j)
  bounded("table.unpack", (j or #t) - (i or 1))
  return tunpack(t, i, j)
end
unpack = table.unpack

-- coroutine: each one is a new Lua thread, charged to the call.
local cocreate, cowrap = coroutine.create, coroutine.wrap
coroutine.create = function(f) charge(2048) return cocreate(f) end
coroutine.wrap = function(f) charge(2048) return cowrap(f) end

-- require: the libraries already open, nothing from disk.
local preloaded = { string = string, table = table, math = math, utf8 = utf8, coroutine = coroutine, os = os }
require = function(name)
  local m = preloaded[name]
  if m == nil then
    error("require(" .. string.format("%q", tostring(name)) .. "): health scripts may require only string, table, math, utf8, coroutine and os", 2)
  end
  return m
end

-- Objects arrive as tables filled on first read (convert.ts): next() fills them before it looks.
local rawnext, fill = next, __fill
__fill = nil
next = function(t, k)
  if k == nil then fill(t) end
  return rawnext(t, k)
end
`;

function open(L: LuaState, name: string, opener: (L: LuaState) => number): void {
  lauxlib.luaL_requiref(L, name, opener, 1);
  lua.lua_pop(L, 1);
}

export interface Sandbox {
  L: LuaState;
  /** Pushes a JSON value as scripts see it (see convert.ts). */
  json: JsonPusher;
}

/** A fresh state with the libraries a script may use. Throws when the setup itself fails (a bug). */
export function newSandbox(): Sandbox {
  const L = lauxlib.luaL_newstate();
  open(L, "_G", lualib.luaopen_base);
  open(L, "table", lualib.luaopen_table);
  open(L, "string", lualib.luaopen_string);
  open(L, "math", lualib.luaopen_math);
  open(L, "utf8", lualib.luaopen_utf8);
  open(L, "coroutine", lualib.luaopen_coroutine);
  openClockOs(L);
  // print writes to syncward's stdout (a JSON answer, a log stream): scripts keep calling it, silently.
  lua.lua_pushjsfunction(L, () => 0);
  lua.lua_setglobal(L, "print");
  lua.lua_pushjsfunction(L, (LL) => {
    charge(LL, Number(lua.lua_tojsstring(LL, 1)));
    return 0;
  });
  lua.lua_setglobal(L, "__charge");
  const json = new JsonPusher(L);
  run(L, COMPAT_51, "=compat");
  run(L, SANDBOX, "=sandbox");
  return { L, json };
}

/** A global `os` with only the clock readers (no execute, getenv, remove, rename, exit, tmpname). */
function openClockOs(L: LuaState): void {
  lauxlib.luaL_requiref(L, "os", lualib.luaopen_os, 0);
  lua.lua_createtable(L, 0, 3);
  for (const name of ["time", "date", "clock"]) {
    lua.lua_getfield(L, -2, name);
    lua.lua_setfield(L, -2, name);
  }
  lua.lua_setglobal(L, "os");
  lua.lua_pop(L, 1);
}

function run(L: LuaState, source: string, name: string): void {
  const status = lauxlib.luaL_loadbufferx(L, to_luastring(source), null, name, "t");
  if (status !== lua.LUA_OK || lua.lua_pcall(L, 0, 0, 0) !== lua.LUA_OK) {
    const message = lua.lua_tojsstring(L, -1);
    lua.lua_pop(L, 1);
    throw new Error(`Lua sandbox setup failed: ${message}`);
  }
}
