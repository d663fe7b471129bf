// The subset comparison itself, over normalized values: every field desired declares must be in
// live with an equal value; fields only live has are ignored, except items of a list desired
// declares. Optionally builds the "live view": live restricted to what was compared, with values
// that compare equal taken in desired's spelling, so a rendered diff shows only real differences.
import { escapeToken, isPlainObject } from "./json-pointer.ts";
import { pairByName } from "./list-match.ts";
import { quantitiesEqual } from "./quantity.ts";
import type { Difference } from "./types.ts";

/** Marks "no value" in a live view. */
export const ABSENT: unique symbol = Symbol("absent");

/** Maps whose values are resource quantities (container resources, quotas, limit ranges, PVs, pod overhead). */
const QUANTITY_MAPS = new Set([
  "limits",
  "requests",
  "hard",
  "capacity",
  "allocatable",
  "overhead",
  "max",
  "min",
  "default",
  "defaultRequest",
  "maxLimitRequestRatio",
]);
/** Fields that are quantities themselves (emptyDir, HPA metric targets). */
const QUANTITY_FIELDS = new Set(["sizeLimit", "averageValue"]);

function isQuantityField(parentKey: string | undefined, key: string | undefined): boolean {
  if (key !== undefined && QUANTITY_FIELDS.has(key)) return true;
  if (key === "value" && parentKey === "target") return true;
  return parentKey !== undefined && QUANTITY_MAPS.has(parentKey);
}

/** `{}`, `[]`, or maps of those: declares nothing, so a live object without it still matches. */
function declaresNothing(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (isPlainObject(value)) return Object.values(value).every(declaresNothing);
  return false;
}

export interface TreeComparison {
  differences: Difference[];
  /** Present when asked for; ABSENT when live has nothing at the root. */
  liveView?: unknown;
}

/**
 * `origins` maps lists that lost ignored items to their items' original indices, so pointers address
 * the objects as the caller holds them.
 */
export function compareTrees(
  desired: unknown,
  live: unknown,
  buildView: boolean,
  origins?: WeakMap<readonly unknown[], number[]>,
): TreeComparison {
  const differences: Difference[] = [];
  const ctx: Ctx = { out: differences, view: buildView, origins };
  const liveView = walk(desired, live, "", undefined, undefined, ctx);
  return buildView ? { differences, liveView } : { differences };
}

interface Ctx {
  out: Difference[];
  view: boolean;
  origins: WeakMap<readonly unknown[], number[]> | undefined;
}

/** The pointer token of item `i` of `list` in the caller's object. */
function at(ctx: Ctx, list: readonly unknown[], i: number): number {
  return ctx.origins?.get(list)?.[i] ?? i;
}

function walk(
  d: unknown,
  l: unknown,
  pointer: string,
  parentKey: string | undefined,
  key: string | undefined,
  ctx: Ctx,
): unknown {
  const { out, view } = ctx;
  const liveAbsent = l === undefined || l === null;
  if (isPlainObject(d)) {
    if (liveAbsent) {
      if (declaresNothing(d)) return d;
      out.push({ path: pointer, kind: "missing", desired: d });
      return ABSENT;
    }
    if (!isPlainObject(l)) {
      out.push({ path: pointer, kind: "changed", desired: d, live: l });
      return l;
    }
    const result: Record<string, unknown> | undefined = view ? {} : undefined;
    for (const k of Object.keys(d)) {
      const child = walk(d[k], l[k], `${pointer}/${escapeToken(k)}`, key, k, ctx);
      if (result && child !== ABSENT) result[k] = child;
    }
    return result;
  }
  if (Array.isArray(d)) {
    if (liveAbsent) {
      if (d.length === 0) return d;
      out.push({ path: pointer, kind: "missing", desired: d });
      return ABSENT;
    }
    if (!Array.isArray(l)) {
      out.push({ path: pointer, kind: "changed", desired: d, live: l });
      return l;
    }
    const result: unknown[] | undefined = view ? [] : undefined;
    const byName = pairByName(d, l);
    if (byName) {
      for (let i = 0; i < d.length; i++) {
        const name = (d[i] as { name: string }).name;
        const j = byName.b.get(name);
        if (j === undefined) {
          out.push({ path: `${pointer}/${at(ctx, d, i)}`, kind: "missing", desired: d[i] });
          continue;
        }
        const child = walk(d[i], l[j], `${pointer}/${at(ctx, l, j)}`, key, undefined, ctx);
        if (result && child !== ABSENT) result.push(child);
      }
      for (let j = 0; j < l.length; j++) {
        if (byName.a.has((l[j] as { name: string }).name)) continue;
        out.push({ path: `${pointer}/${at(ctx, l, j)}`, kind: "extra", live: l[j] });
        result?.push(l[j]);
      }
      return result;
    }
    for (let i = 0; i < d.length; i++) {
      if (i >= l.length) {
        out.push({ path: `${pointer}/${at(ctx, d, i)}`, kind: "missing", desired: d[i] });
        continue;
      }
      const child = walk(d[i], l[i], `${pointer}/${at(ctx, l, i)}`, key, undefined, ctx);
      if (result && child !== ABSENT) result.push(child);
    }
    for (let j = d.length; j < l.length; j++) {
      out.push({ path: `${pointer}/${at(ctx, l, j)}`, kind: "extra", live: l[j] });
      result?.push(l[j]);
    }
    return result;
  }
  // A scalar (or null inside a list).
  if (liveAbsent && d !== null) {
    out.push({ path: pointer, kind: "missing", desired: d });
    return ABSENT;
  }
  if (d === l) return d;
  if (isQuantityField(parentKey, key) && quantitiesEqual(d, l)) return d;
  out.push({ path: pointer, kind: "changed", desired: d, live: l });
  return l;
}
