// Repeated self-heals of one object at one revision mean something keeps changing it back: an
// HPA, a mutating webhook, a person with kubectl. After 3 heals within 10 minutes syncward backs
// off (Argo CD's schedule: 2s x 3^n, capped at 5 minutes) and raises an alert that names the
// field manager doing it and the ignoreDifferences entry that would end the fight.
import { stringify } from "yaml";
import { fieldManagersOf } from "../engine/diff/index.ts";
import { type KubeObject, kubectlName, parseKeyString, type ResourceKey } from "../kube/object.ts";
import type { DriftFight } from "./events.ts";

export const FIGHT_THRESHOLD = 3;
export const FIGHT_WINDOW_MS = 10 * 60_000;
const BACKOFF_BASE_MS = 2_000;
const BACKOFF_CAP_MS = 300_000;

export interface HealCounter {
  revision: string;
  times: string[];
}

/** Counts a heal; heals at another revision or outside the window are forgotten. */
export function recordHeal(counter: HealCounter | undefined, revision: string, now: Date): HealCounter {
  const since = now.getTime() - FIGHT_WINDOW_MS;
  const times =
    counter && counter.revision === revision ? counter.times.filter((t) => Date.parse(t) >= since) : [];
  return { revision, times: [...times, now.toISOString()] };
}

export function isFight(counter: HealCounter | undefined): boolean {
  return (counter?.times.length ?? 0) >= FIGHT_THRESHOLD;
}

/** How long to wait after the last heal before healing this object again. */
export function healBackoffMs(counter: HealCounter | undefined): number {
  const n = counter?.times.length ?? 0;
  if (n < FIGHT_THRESHOLD) return 0;
  return Math.min(BACKOFF_BASE_MS * 3 ** (n - FIGHT_THRESHOLD), BACKOFF_CAP_MS);
}

/** When the next heal of this object may happen (epoch ms). */
export function nextHealAt(counter: HealCounter | undefined): number {
  const last = counter?.times.at(-1);
  return last ? Date.parse(last) + healBackoffMs(counter) : 0;
}

/** A ready-to-paste `ignoreDifferences` entry for the fought fields. */
export function ignoreSnippet(key: ResourceKey, fields: string[], managers: string[]): string {
  const entry: Record<string, unknown> = { group: key.group, kind: key.kind, name: key.name };
  if (key.namespace) entry.namespace = key.namespace;
  if (managers.length > 0 && fields.length === 0) entry.managedFieldsManagers = managers;
  else entry.jsonPointers = fields;
  return stringify({ ignoreDifferences: [entry] }).trimEnd();
}

/** The alert for an object healed `heals` times: which fields, and who keeps changing them. */
export function driftFight(f: {
  key: string;
  paths: string[];
  live?: KubeObject;
  heals: number;
  backoffMs: number;
}): DriftFight {
  const key = parseKeyString(f.key);
  const managers = f.live
    ? [...new Set(f.paths.flatMap((p) => fieldManagersOf(f.live as KubeObject, p)))].filter(
        (m) => m !== "syncward",
      )
    : [];
  return {
    object: key ? `${kubectlName(key)}${key.namespace ? ` in ${key.namespace}` : ""}` : f.key,
    key: f.key,
    fields: f.paths,
    managers,
    heals: f.heals,
    windowMinutes: FIGHT_WINDOW_MS / 60_000,
    backoffMs: f.backoffMs,
    ignoreSnippet: key ? ignoreSnippet(key, f.paths, managers) : "",
  };
}
