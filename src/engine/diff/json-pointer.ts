// RFC 6901 JSON pointers: parsing (with ~0 / ~1 escapes) and formatting.
import type { Path } from "./types.ts";

export class JsonPointerError extends Error {
  override name = "JsonPointerError";
}

/** Splits a pointer into its unescaped reference tokens; `""` is the whole document. */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) {
    throw new JsonPointerError(`JSON pointer "${pointer}" must start with "/" (for example /spec/replicas)`);
  }
  return pointer
    .slice(1)
    .split("/")
    .map((token) => {
      if (/~[^01]|~$/.test(token)) {
        throw new JsonPointerError(
          `JSON pointer "${pointer}" has a bad escape in "${token}": write ~1 for "/" and ~0 for "~"`,
        );
      }
      return token.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

export function escapeToken(token: string | number): string {
  const s = String(token);
  // Most tokens need no escape; the diff of a large object formats hundreds of thousands.
  if (!s.includes("~") && !s.includes("/")) return s;
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * Resolves reference tokens against a value into a concrete path (list positions become numbers);
 * undefined when the location does not exist.
 */
export function resolveTokens(root: unknown, tokens: ReadonlyArray<string | number>): Path | undefined {
  const path: Array<string | number> = [];
  let node: unknown = root;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      const index = typeof token === "number" ? token : /^(0|[1-9]\d*)$/.test(token) ? Number(token) : -1;
      const at = index < 0 && typeof token === "number" ? node.length + index : index;
      if (at < 0 || at >= node.length) return undefined;
      path.push(at);
      node = node[at];
    } else if (isPlainObject(node)) {
      const key = String(token);
      if (!Object.hasOwn(node, key)) return undefined;
      path.push(key);
      node = node[key];
    } else {
      return undefined;
    }
  }
  return path;
}

/** The value at a concrete path, or undefined. */
export function getAt(root: unknown, path: Path): unknown {
  let node: unknown = root;
  for (const token of path) {
    if (Array.isArray(node) && typeof token === "number") node = node[token];
    else if (isPlainObject(node) && typeof token === "string" && Object.hasOwn(node, token))
      node = node[token];
    else return undefined;
  }
  return node;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
