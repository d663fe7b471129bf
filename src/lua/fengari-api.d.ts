// The part of fengari (Lua 5.3 in JavaScript; it ships no types) that the health checks use.
declare module "fengari" {
  export type LuaState = { readonly __luaState: unique symbol };
  export type LuaString = Uint8Array;
  type Key = string | LuaString;
  type JsFunction = (L: LuaState) => number;
  type Hook = (L: LuaState, ar: unknown) => void;

  export const lua: {
    LUA_OK: number;
    LUA_ERRSYNTAX: number;
    LUA_MASKCOUNT: number;
    LUA_REGISTRYINDEX: number;
    LUA_TNIL: number;
    LUA_TBOOLEAN: number;
    LUA_TNUMBER: number;
    LUA_TSTRING: number;
    LUA_TTABLE: number;
    LUA_TFUNCTION: number;
    lua_gettop(L: LuaState): number;
    lua_absindex(L: LuaState, idx: number): number;
    lua_settop(L: LuaState, idx: number): void;
    lua_pop(L: LuaState, n: number): void;
    lua_pushvalue(L: LuaState, idx: number): void;
    lua_pushnil(L: LuaState): void;
    lua_pushboolean(L: LuaState, b: boolean): void;
    lua_pushinteger(L: LuaState, n: number): void;
    lua_pushnumber(L: LuaState, n: number): void;
    lua_pushliteral(L: LuaState, s: string): void;
    lua_pushjsfunction(L: LuaState, f: JsFunction): void;
    lua_createtable(L: LuaState, narr: number, nrec: number): void;
    lua_rawseti(L: LuaState, idx: number, n: number): void;
    lua_setfield(L: LuaState, idx: number, k: Key): void;
    lua_getfield(L: LuaState, idx: number, k: Key): number;
    lua_getglobal(L: LuaState, name: Key): number;
    lua_setglobal(L: LuaState, name: Key): void;
    lua_setmetatable(L: LuaState, idx: number): void;
    lua_setupvalue(L: LuaState, funcindex: number, n: number): unknown;
    lua_rawgeti(L: LuaState, idx: number, n: number): number;
    lua_rawget(L: LuaState, idx: number): number;
    lua_gettable(L: LuaState, idx: number): number;
    lua_rawset(L: LuaState, idx: number): void;
    lua_topointer(L: LuaState, idx: number): unknown;
    lua_type(L: LuaState, idx: number): number;
    lua_typename(L: LuaState, t: number): LuaString;
    lua_tojsstring(L: LuaState, idx: number): string;
    lua_tolstring(L: LuaState, idx: number): LuaString | null;
    lua_isstring(L: LuaState, idx: number): boolean;
    lua_pcall(L: LuaState, nargs: number, nresults: number, msgh: number): number;
    lua_sethook(L: LuaState, f: Hook | null, mask: number, count: number): void;
    lua_close(L: LuaState): void;
  };

  export const lauxlib: {
    luaL_newstate(): LuaState;
    luaL_loadbufferx(L: LuaState, buff: LuaString, size: number | null, name: Key, mode: Key | null): number;
    luaL_requiref(L: LuaState, modname: Key, openf: JsFunction, glb: number): void;
    luaL_ref(L: LuaState, t: number): number;
    luaL_error(L: LuaState, fmt: Key, ...args: unknown[]): number;
    luaL_tolstring(L: LuaState, idx: number): LuaString;
    luaL_checklstring(L: LuaState, arg: number): LuaString;
    luaL_optlstring(L: LuaState, arg: number, def: Key | null): LuaString | null;
  };

  export const lualib: {
    luaopen_base: JsFunction;
    luaopen_table: JsFunction;
    luaopen_string: JsFunction;
    luaopen_math: JsFunction;
    luaopen_utf8: JsFunction;
    luaopen_coroutine: JsFunction;
    luaopen_os: JsFunction;
    luaopen_io: JsFunction;
    luaopen_package: JsFunction;
    luaopen_debug: JsFunction;
    luaL_openlibs(L: LuaState): void;
  };

  export function to_luastring(s: string): LuaString;
  export function to_jsstring(s: LuaString): string;
}
