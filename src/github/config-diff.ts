// What a change of `.github/syncward.yml` changes, by path, for the `syncward / config` check:
// `environments[prod].syncPolicy.syncOptions.Validate: true → false`, one line per value that
// differs, so a reviewer sees the one field that moved instead of two long JSON blobs that look
// alike. Both sides are the parsed configs (defaults filled in), so spelling out a default is no
// change. Pure.
import type { ApprovalRule, EnvironmentConfig } from "../config/types.ts";
import { codeSpan } from "./markdown.ts";

export interface PathChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

/** Fields set by syncward, never read from the repository's file: not the repository's change. */
const NOT_FROM_THE_FILE = new Set(["name", "configRevision", "project", "floor"]);
/** Longest value shown on a line; the path says which field, so a clipped value still shows what moved. */
const MAX_VALUE_CHARS = 80;
/** Most lines per environment; the rest is counted. */
export const MAX_LINES = 40;

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const primitive = (v: unknown) => v === null || typeof v !== "object";

/** Every leaf value that differs between `before` and `after`, under `path`. */
export function pathChanges(path: string, before: unknown, after: unknown): PathChange[] {
  if (same(before, after)) return [];
  // An object on one side and nothing on the other (an approval rule added or removed): each of
  // its fields on a line of its own.
  if ((isPlain(before) || before === undefined) && (isPlain(after) || after === undefined)) {
    const b = before ?? {};
    const a = after ?? {};
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => pathChanges(`${path}.${k}`, b[k], a[k]));
  }
  // Lists of objects (sync windows, ignore rules) entry by entry; lists of names whole.
  if (Array.isArray(before) && Array.isArray(after) && ![...before, ...after].every(primitive)) {
    const n = Math.max(before.length, after.length);
    return Array.from({ length: n }, (_, i) => pathChanges(`${path}[${i}]`, before[i], after[i])).flat();
  }
  return [{ path, ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after }) }];
}

/** What the file sets for one environment, for comparing: without what syncward adds itself. */
function fromTheFile(env: EnvironmentConfig | undefined): Record<string, unknown> | undefined {
  if (!env) return undefined;
  return Object.fromEntries(Object.entries(env).filter(([k]) => !NOT_FROM_THE_FILE.has(k)));
}

/** The changes of one environment, by path (`environments[prod]....`). */
export function environmentChanges(
  name: string,
  before: EnvironmentConfig | undefined,
  after: EnvironmentConfig | undefined,
): PathChange[] {
  return pathChanges(`environments[${name}]`, fromTheFile(before), fromTheFile(after));
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

/** One change as a line a reviewer reads: `path: old → new`, `path: new` for a new field. */
export function changeLine(c: PathChange): string {
  if (!("before" in c)) return `${c.path}: ${show(c.after)} (new)`;
  if (!("after" in c)) return `${c.path}: ${show(c.before)} → (unset)`;
  return `${c.path}: ${show(c.before)} → ${show(c.after)}`;
}

/** The markdown list of `changes`, at most MAX_LINES of them. */
export function changeList(changes: PathChange[]): string {
  const shown = changes.slice(0, MAX_LINES).map((c) => `- ${codeSpan(changeLine(c), 300)}`);
  const more = changes.length - shown.length;
  return [...shown, ...(more > 0 ? [`- … and ${more} more`] : [])].join("\n");
}

/** Who approves an environment under `env`'s rule, in words (logins as code: the check pings nobody). */
export function approversText(env: Pick<EnvironmentConfig, "approval" | "commands"> | undefined): string {
  const rule: ApprovalRule | undefined = env?.approval;
  if (!env || !rule) return "no approval: its syncs wait for nobody";
  const listed = [...rule.users, ...rule.teams].map((who) => codeSpan(`@${who}`, 60));
  const who = listed.length > 0 ? listed.join(", ") : `anyone with **${env.commands.approve}** permission`;
  const count = `${rule.minimum} approval${rule.minimum === 1 ? "" : "s"} needed`;
  const authors = rule.allowAuthor ? "; authors may approve their own change" : "";
  return `${who}; ${count}${authors}`;
}
