// Values across the JS/Lua boundary. An object goes in lazily: a JSON object becomes an empty
// table whose __index converts a field the first time a script reads it (and stores it, so the
// next read is a plain table read and `obj.status == obj.status`). A health script reads a
// handful of fields of an object that may hold hundreds, so this is most of the per-object cost
// saved. pairs() and next() see every field (the table is filled first). Arrays are converted
// when reached, their object elements lazily in turn. Integral JSON numbers become Lua integers,
// so a script's message prints `3` where gopher-lua does, not `3.0`.

import { type LuaState, type LuaString, lauxlib, lua, to_jsstring } from "./fengari.ts";
import { unmetered } from "./meter.ts";

type Json = Record<string, unknown>;

interface Lazy {
  value: Json;
  filled: boolean;
}

/** Pushes JSON values onto one state's stack; objects as lazily converted tables. */
export class JsonPusher {
  private readonly lazy = new WeakMap<object, Lazy>();
  /** Field names as JavaScript strings, by the Lua string's bytes (a script's constants: the same each call). */
  private readonly keyText = new WeakMap<LuaString, string>();
  private readonly metaRef: number;
  /** The library's next(), which pairs() on a filled table iterates with. */
  private readonly nextRef: number;

  constructor(private readonly L: LuaState) {
    lua.lua_createtable(L, 0, 3);
    // Converting the object is syncward's work, not the script's: it is not charged to its budget.
    lua.lua_pushjsfunction(L, (LL) => unmetered(() => this.index(LL)));
    lua.lua_setfield(L, -2, "__index");
    lua.lua_pushjsfunction(L, (LL) => unmetered(() => this.pairs(LL)));
    lua.lua_setfield(L, -2, "__pairs");
    // getmetatable(obj) shows this, not the shared metatable a script could rewrite.
    lua.lua_pushliteral(L, "object");
    lua.lua_setfield(L, -2, "__metatable");
    this.metaRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    lua.lua_getglobal(L, "next");
    this.nextRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    // next() on a table not yet filled would miss fields: the sandbox's next fills it first.
    lua.lua_pushjsfunction(L, (LL) => {
      unmetered(() => this.fill(LL, 1));
      return 0;
    });
    lua.lua_setglobal(L, "__fill");
  }

  push(value: unknown): void {
    const L = this.L;
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
            this.push(value[i]);
            lua.lua_rawseti(L, -2, i + 1);
          }
          return;
        }
        lua.lua_createtable(L, 0, 0);
        this.lazy.set(lua.lua_topointer(L, -1) as object, { value: value as Json, filled: false });
        lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.metaRef);
        lua.lua_setmetatable(L, -2);
        return;
    }
    lua.lua_pushnil(L);
  }

  /** __index(t, k): the field, converted and stored in t; nil when absent. */
  private index(L: LuaState): number {
    const entry = this.lazy.get(lua.lua_topointer(L, 1) as object);
    if (!entry || lua.lua_type(L, 2) !== lua.LUA_TSTRING) {
      lua.lua_pushnil(L);
      return 1;
    }
    const key = this.keyOf(lua.lua_tolstring(L, 2) as LuaString);
    const item = Object.hasOwn(entry.value, key) ? entry.value[key] : undefined;
    if (item === undefined || item === null) {
      lua.lua_pushnil(L);
      return 1;
    }
    this.push(item);
    lua.lua_pushvalue(L, 2);
    lua.lua_pushvalue(L, -2);
    lua.lua_rawset(L, 1);
    return 1;
  }

  private keyOf(bytes: LuaString): string {
    let key = this.keyText.get(bytes);
    if (key === undefined) {
      key = to_jsstring(bytes);
      this.keyText.set(bytes, key);
    }
    return key;
  }

  /** Converts every field of the lazy table at `idx` not converted yet. */
  private fill(L: LuaState, idx: number): void {
    if (lua.lua_type(L, idx) !== lua.LUA_TTABLE) return;
    const entry = this.lazy.get(lua.lua_topointer(L, idx) as object);
    if (!entry || entry.filled) return;
    entry.filled = true;
    for (const key in entry.value) {
      const item = entry.value[key];
      if (item === undefined || item === null) continue;
      lua.lua_pushliteral(L, key);
      if (lua.lua_rawget(L, idx) !== lua.LUA_TNIL) {
        lua.lua_pop(L, 1);
        continue;
      }
      lua.lua_pop(L, 1);
      lua.lua_pushliteral(L, key);
      this.push(item);
      lua.lua_rawset(L, idx);
    }
  }

  /** __pairs(t): fill t, then iterate it as a plain table. */
  private pairs(L: LuaState): number {
    this.fill(L, 1);
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.nextRef);
    lua.lua_pushvalue(L, 1);
    lua.lua_pushnil(L);
    return 3;
  }
}

/** The Lua type name of the value at `idx`, as scripts' errors print it. */
export function typeName(L: LuaState, idx: number): string {
  return String.fromCharCode(...lua.lua_typename(L, lua.lua_type(L, idx)));
}

/**
 * Lua strings, kept in the registry, for the field names syncward itself reads and writes on every
 * call. Given as a JavaScript string, fengari converts, copies and hashes a name again on each use,
 * which was a third of what a short script costs per object.
 */
export class FieldNames<K extends string> {
  private readonly refs = new Map<K, number>();

  constructor(
    private readonly L: LuaState,
    names: readonly K[],
  ) {
    for (const name of names) {
      lua.lua_pushliteral(L, name);
      this.refs.set(name, lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX));
    }
  }

  push(name: K): void {
    lua.lua_rawgeti(this.L, lua.LUA_REGISTRYINDEX, this.refs.get(name) as number);
  }
}

/** The string field `key` of the table at `idx`: a string, undefined when nil, or the wrong type's name. */
export function stringField<K extends string>(
  L: LuaState,
  idx: number,
  names: FieldNames<K>,
  key: K,
): { value?: string; wrongType?: string } {
  const table = lua.lua_absindex(L, idx);
  names.push(key);
  // As lua_getfield: the table's __index answers a missing field.
  const t = lua.lua_gettable(L, table);
  try {
    if (t === lua.LUA_TNIL) return {};
    if (t === lua.LUA_TSTRING) return { value: lua.lua_tojsstring(L, -1) };
    return { wrongType: typeName(L, -1) };
  } finally {
    lua.lua_pop(L, 1);
  }
}
