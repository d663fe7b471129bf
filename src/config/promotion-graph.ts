// The checks of `promotion.after` across environments: every name it lists is an environment of
// the file, not the environment itself, and following `after` never comes back to where it
// started. Read from the raw input (as duplicate names are), so they are reported beside any
// other problem of the file.
import { didYouMeanHint } from "./did-you-mean.ts";

/** A problem of one environment's promotion, at a path into the raw file. */
export interface PromotionIssue {
  path: PropertyKey[];
  code: "custom";
  message: string;
}

interface RawEnvironment {
  index: number;
  name: string;
  /** `promotion.after` as written: a name or a list (anything else is the schema's to report). */
  after: string[];
  /** Whether `after` was written as a list (then each problem points at its entry). */
  list: boolean;
}

/** Each environment's name and upstreams, as far as they can be read. */
function environmentsOf(data: unknown): RawEnvironment[] {
  const list = (data as { environments?: unknown } | null)?.environments;
  if (!Array.isArray(list)) return [];
  return list.flatMap((env, index) => {
    const name = (env as { name?: unknown } | null)?.name;
    if (typeof name !== "string") return [];
    const after = (env as { promotion?: { after?: unknown } } | null)?.promotion?.after;
    const names = typeof after === "string" ? [after] : Array.isArray(after) ? after : [];
    return [{ index, name, after: names.filter((n) => typeof n === "string"), list: Array.isArray(after) }];
  });
}

export function promotionIssues(data: unknown): PromotionIssue[] {
  const envs = environmentsOf(data);
  const names = envs.map((e) => e.name);
  const issues: PromotionIssue[] = [];
  const at = (env: RawEnvironment, i: number): PropertyKey[] => [
    "environments",
    env.index,
    "promotion",
    "after",
    ...(env.list ? [i] : []),
  ];
  for (const env of envs)
    env.after.forEach((upstream, i) => {
      if (upstream === env.name)
        issues.push({
          path: at(env, i),
          code: "custom",
          message: `${env.name} cannot be promoted after itself`,
        });
      else if (!names.includes(upstream))
        issues.push({
          path: at(env, i),
          code: "custom",
          message: `${env.name} is promoted after ${JSON.stringify(upstream)}, which is not an environment of this file${didYouMeanHint(upstream, names)}; environments: ${names.join(", ")}`,
        });
    });
  for (const cycle of cyclesOf(envs)) {
    const first = envs.find((e) => e.name === cycle[0]) as RawEnvironment;
    const i = first.after.indexOf(cycle[1] as string);
    issues.push({
      path: at(first, i),
      code: "custom",
      message: `promotion cycle: ${[...cycle, cycle[0]].join(" -> ")} (each waits for the next, so none could ever deploy)`,
    });
  }
  return issues;
}

/**
 * Each cycle of `after` once (longer than one: promotion after itself is reported on its own),
 * written from its environment listed first in the file, following `after` in its order.
 */
export function cyclesOf(envs: ReadonlyArray<Pick<RawEnvironment, "name" | "after">>): string[][] {
  const upstreams = new Map(envs.map((e) => [e.name, e.after.filter((u) => u !== e.name)]));
  const order = envs.map((e) => e.name);
  const seen = new Set<string>();
  const cycles: string[][] = [];
  for (const start of order) {
    // Depth-first from `start`, only through environments listed after it: each cycle is found
    // once, from its first environment in the file.
    const allowed = new Set(order.slice(order.indexOf(start)));
    const walk = (name: string, path: string[]): void => {
      for (const next of upstreams.get(name) ?? []) {
        if (next === start) {
          const key = [...path].sort().join(",");
          if (!seen.has(key)) {
            seen.add(key);
            cycles.push([...path]);
          }
        } else if (allowed.has(next) && !path.includes(next)) walk(next, [...path, next]);
      }
    };
    walk(start, [start]);
  }
  return cycles;
}
