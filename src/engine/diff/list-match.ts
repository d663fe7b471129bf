// How list items of desired and live are paired. A list whose items all carry a unique string
// `name` on both sides (containers, env, volumes, named ports) is matched by name, so order does
// not matter; any other list is matched by position.
import { isPlainObject } from "./json-pointer.ts";
import type { Path } from "./types.ts";

/** name -> index when every item is an object with a unique string `name`; otherwise undefined. */
export function namesOf(list: readonly unknown[]): Map<string, number> | undefined {
  const names = new Map<string, number>();
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isPlainObject(item) || typeof item.name !== "string" || names.has(item.name)) return undefined;
    names.set(item.name, i);
  }
  return names;
}

/** The name maps of both lists when they are matched by name, else undefined (match by position). */
export function pairByName(
  a: readonly unknown[],
  b: readonly unknown[],
): { a: Map<string, number>; b: Map<string, number> } | undefined {
  if (a.length === 0 && b.length === 0) return undefined;
  const an = namesOf(a);
  if (!an) return undefined;
  const bn = namesOf(b);
  return bn ? { a: an, b: bn } : undefined;
}

/** The index in `b` paired with `a[index]`, or undefined when `b` has no such item. */
export function pairedIndex(a: readonly unknown[], b: readonly unknown[], index: number): number | undefined {
  const byName = pairByName(a, b);
  if (byName) {
    const item = a[index] as { name: string } | undefined;
    return item ? byName.b.get(item.name) : undefined;
  }
  return index < b.length ? index : undefined;
}

/**
 * Maps a concrete path in `from` onto `to`, following the same pairing as the comparison.
 * `matched` is how many leading tokens exist in `to`; `path` is the mapped prefix.
 */
export function counterpartPath(path: Path, from: unknown, to: unknown): { path: Path; matched: number } {
  const out: Array<string | number> = [];
  let a = from;
  let b = to;
  for (const token of path) {
    if (typeof token === "number") {
      if (!Array.isArray(a) || !Array.isArray(b)) break;
      const index = pairedIndex(a, b, token);
      if (index === undefined) break;
      out.push(index);
      a = a[token];
      b = b[index];
    } else {
      if (!isPlainObject(a) || !isPlainObject(b) || !Object.hasOwn(b, token)) break;
      out.push(token);
      a = a[token];
      b = b[token];
    }
  }
  return { path: out, matched: out.length };
}
