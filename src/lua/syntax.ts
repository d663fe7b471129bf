// Compiling Lua without running it: how config loading reports a health script that cannot work.

import { type LuaState, lauxlib, lua, to_luastring } from "./fengari.ts";

/** Lua's `health.lua:3: message` split into the line and the message. */
export function splitLine(message: string): { line?: number; text: string } {
  const m = /^health\.lua:(\d+): (.*)$/s.exec(message);
  return m ? { line: Number(m[1]), text: m[2] ?? message } : { text: message };
}

let checker: LuaState | undefined;

/** Why `source` does not compile (with its line), or undefined when it does. Nothing runs. */
export function luaSyntaxProblem(source: string): { line?: number; message: string } | undefined {
  checker ??= lauxlib.luaL_newstate();
  const L = checker;
  const status = lauxlib.luaL_loadbufferx(L, to_luastring(source), null, "=health.lua", "t");
  const problem = status === lua.LUA_OK ? undefined : splitLine(lua.lua_tojsstring(L, -1));
  lua.lua_settop(L, 0);
  return (
    problem &&
    (problem.line === undefined ? { message: problem.text } : { line: problem.line, message: problem.text })
  );
}
