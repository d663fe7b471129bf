// The JSON patch that takes out what untrusted managers added. Why a JSON patch and not server-side
// apply: apply can only remove a field its own manager owns, so removing another manager's field
// takes two applies (take it over, then release it) and, between them, syncward owns the
// intruder's value. A JSON patch removes exactly the listed locations in one write, and its
// `test` on resourceVersion makes it apply only to the object the decision was made on: if anything
// changed meanwhile, the server refuses it and the next look decides again.
import type { Difference } from "../diff/index.ts";
import { getAt, parsePointer } from "../diff/json-pointer.ts";

export type PatchOperation = { op: "test"; path: string; value: string } | { op: "remove"; path: string };

/** Differences made under a name not trusted for them that only removing them undoes (an addition, an extra list item). */
export function isRemoval(d: Difference): boolean {
  if (d.kind === "added") return true;
  return d.kind === "extra" && (d.owners ?? []).some((o) => !o.trusted);
}

function tokensOf(pointer: string): Array<string | number> {
  return parsePointer(pointer).map((t) => (/^(0|[1-9]\d*)$/.test(t) ? Number(t) : t));
}

/** Later list positions first, so each removal leaves the positions of the next ones valid. */
function compareDescending(a: Array<string | number>, b: Array<string | number>): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string | number;
    const y = b[i] as string | number;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return y - x;
    return String(x) < String(y) ? 1 : -1;
  }
  return b.length - a.length;
}

/**
 * `remove` operations for `pointers` of `live`, guarded by a test of its resourceVersion; undefined
 * when there is nothing to remove. A pod template's deprecated `serviceAccount` (the server mirrors
 * it from `serviceAccountName`) goes with `serviceAccountName`, or the server would restore it.
 */
export function removalPatch(live: unknown, pointers: string[]): PatchOperation[] | undefined {
  const all = new Set(pointers);
  for (const p of pointers) {
    if (!p.endsWith("/serviceAccountName")) continue;
    const alias = `${p.slice(0, -"Name".length)}`;
    if (getAt(live, tokensOf(alias)) !== undefined) all.add(alias);
  }
  const paths = [...all].map(tokensOf).filter((p) => p.length > 0 && getAt(live, p) !== undefined);
  if (paths.length === 0) return undefined;
  const outermost = paths.filter(
    (p) => !paths.some((q) => q !== p && q.length < p.length && q.every((t, i) => p[i] === t)),
  );
  outermost.sort(compareDescending);
  const rv = (live as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? "";
  return [
    { op: "test", path: "/metadata/resourceVersion", value: rv },
    ...outermost.map((p) => ({
      op: "remove" as const,
      path: p.map((t) => `/${String(t).replace(/~/g, "~0").replace(/\//g, "~1")}`).join(""),
    })),
  ];
}
