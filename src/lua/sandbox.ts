// A Lua state for one health script, with the libraries Argo CD gives its scripts. Argo CD runs
// gopher-lua (Lua 5.1) with `package`, `base`, `table` and an `os` reduced to `time` and `date`
// unless `health.lua.useOpenLibs` is true; this opens the same on fengari (Lua 5.3), plus the
// side-effect free `string`, `math` and `utf8`, and the Lua 5.1 names scripts written for
// Argo CD call.

import { type LuaState, lauxlib, lua, lualib, to_luastring } from "fengari";
import { JsonPusher } from "./convert.ts";

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
-- One call could allocate gigabytes where no instruction budget can stop it.
local rawrep = string.rep
string.rep = function(s, n, sep)
  local size = #tostring(s) * math.max(n, 0) + (sep and #tostring(sep) * math.max(n - 1, 0) or 0)
  if size > 16777216 then error("string.rep would make " .. math.floor(size) .. " bytes (limit 16 MiB)", 2) end
  return rawrep(s, n, sep)
end
local rawload = load
-- Text only: precompiled chunks are how sandboxes are escaped in C Lua; no reason to allow them.
load = function(chunk, name, mode, env)
  if env == nil then return rawload(chunk, name, "t") end
  return rawload(chunk, name, "t", env)
end
loadstring = function(s, name) return rawload(s, name, "t") end
-- Objects arrive as tables filled on first read (convert.ts): next() fills them before it looks.
local rawnext, fill = next, __fill
__fill = nil
next = function(t, k)
  if k == nil then fill(t) end
  return rawnext(t, k)
end
`;

/** Globals that read files or the process, removed from the sandbox. */
const SANDBOX_REMOVED = ["dofile", "loadfile"];

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
export function newSandbox(useOpenLibs: boolean): Sandbox {
  const L = lauxlib.luaL_newstate();
  if (useOpenLibs) {
    lualib.luaL_openlibs(L);
    // fengari's io is small (write, and the standard streams; no io.open), and not in openlibs.
    open(L, "io", lualib.luaopen_io);
  } else {
    open(L, "_G", lualib.luaopen_base);
    open(L, "package", lualib.luaopen_package);
    open(L, "table", lualib.luaopen_table);
    open(L, "string", lualib.luaopen_string);
    open(L, "math", lualib.luaopen_math);
    open(L, "utf8", lualib.luaopen_utf8);
    open(L, "coroutine", lualib.luaopen_coroutine);
    restrictSandbox(L);
  }
  // print writes to syncward's stdout (a JSON answer, a log stream): scripts keep calling it, silently.
  lua.lua_pushjsfunction(L, () => 0);
  lua.lua_setglobal(L, "print");
  const json = new JsonPusher(L);
  run(L, COMPAT_51, "=compat");
  return { L, json };
}

/** `os` with only the clock readers, `require` only for preloaded modules, no file loaders. */
function restrictSandbox(L: LuaState): void {
  lauxlib.luaL_requiref(L, "os", lualib.luaopen_os, 0);
  lua.lua_createtable(L, 0, 3);
  for (const name of ["time", "date", "clock"]) {
    lua.lua_getfield(L, -2, name);
    lua.lua_setfield(L, -2, name);
  }
  // package.loaded.os and package.preload.os give `require("os")` the same reduced table.
  lua.lua_getglobal(L, "package");
  lua.lua_getfield(L, -1, "loaded");
  lua.lua_pushvalue(L, -3);
  lua.lua_setfield(L, -2, "os");
  lua.lua_pop(L, 1);
  // Only the preload searcher: the others read Lua or native modules from disk.
  lua.lua_getfield(L, -1, "searchers");
  lua.lua_createtable(L, 1, 0);
  lua.lua_rawgeti(L, -2, 1);
  lua.lua_rawseti(L, -2, 1);
  lua.lua_setfield(L, -3, "searchers");
  lua.lua_pop(L, 2);
  lua.lua_setglobal(L, "os");
  lua.lua_pop(L, 1);
  for (const name of SANDBOX_REMOVED) {
    lua.lua_pushnil(L);
    lua.lua_setglobal(L, name);
  }
}

function run(L: LuaState, source: string, name: string): void {
  const status = lauxlib.luaL_loadbufferx(L, to_luastring(source), null, name, "t");
  if (status !== lua.LUA_OK || lua.lua_pcall(L, 0, 0, 0) !== lua.LUA_OK) {
    const message = lua.lua_tojsstring(L, -1);
    lua.lua_pop(L, 1);
    throw new Error(`Lua sandbox setup failed: ${message}`);
  }
}
