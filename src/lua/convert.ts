// Values across the JS/Lua boundary. An object goes in as nested tables; integral JSON numbers
// become Lua integers, so a script's message prints `3` where gopher-lua does, not `3.0`.

import { type LuaState, lua } from "fengari";

/** Pushes a JSON value onto the Lua stack (nil for anything JSON cannot hold). */
export function pushJson(
  L: LuaState,
  value: unknown,
  skip?: (key: string, depth: number) => boolean,
  depth = 0,
): void {
  switch (typeof value) {
    case "string":
      lua.lua_pushliteral(L, value);
      return;
    case "number":
      if (Number.isSafeInteger(value)) lua.lua_pushinteger(L, value);
      else lua.lua_pushnumber(L, value);
      return;
    case "boolean":
      lua.lua_pushboolean(L, value);
      return;
    case "object":
      if (value === null) break;
      if (Array.isArray(value)) {
        lua.lua_createtable(L, value.length, 0);
        for (let i = 0; i < value.length; i++) {
          pushJson(L, value[i], skip, depth + 1);
          lua.lua_rawseti(L, -2, i + 1);
        }
        return;
      }
      lua.lua_createtable(L, 0, 8);
      for (const key in value) {
        if (skip?.(key, depth)) continue;
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined) continue;
        pushJson(L, item, skip, depth + 1);
        lua.lua_setfield(L, -2, key);
      }
      return;
  }
  lua.lua_pushnil(L);
}

/** The Lua type name of the value at `idx`, as scripts' errors print it. */
export function typeName(L: LuaState, idx: number): string {
  return String.fromCharCode(...lua.lua_typename(L, lua.lua_type(L, idx)));
}

/** The string field `key` of the table at `idx`: a string, undefined when nil, or the wrong type's name. */
export function stringField(L: LuaState, idx: number, key: string): { value?: string; wrongType?: string } {
  const t = lua.lua_getfield(L, idx, key);
  try {
    if (t === lua.LUA_TNIL) return {};
    if (t === lua.LUA_TSTRING) return { value: lua.lua_tojsstring(L, -1) };
    return { wrongType: typeName(L, -1) };
  } finally {
    lua.lua_pop(L, 1);
  }
}
