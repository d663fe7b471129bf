// The errors of an operation, each distinct message once: an admission webhook that refused eight
// objects is one message naming eight objects, not eight copies. A message keeps its line breaks
// in a fenced block (a fence longer than any backtick run inside, so it cannot be closed early);
// one short line stays inline.
import type { ResourceResult, SyncResult } from "../engine/result.ts";
import type { EnvironmentState } from "../state/types.ts";
import { code, date, inline, kubectlName, plural } from "./format.ts";
import { clipChars, fenced } from "./markdown.ts";

/** Distinct messages shown; the rest are counted. */
const MAX_DISTINCT = 10;
/** Objects named per message; the rest are counted. */
const MAX_NAMED = 5;
/** A message longer than this (characters) is cut: the history and `syncward app get` keep it whole. */
const MAX_MESSAGE_CHARS = 3000;
/** At most this long and on one line, a message stays inline. */
const INLINE_CHARS = 200;

export interface DistinctError {
  message: string;
  objects: string[];
}

/** Failed objects grouped by their message, in the order they first failed. */
export function distinctErrors(resources: ResourceResult[]): DistinctError[] {
  const byMessage = new Map<string, DistinctError>();
  for (const r of resources) {
    if (r.status !== "Failed" && r.action !== "failed") continue;
    const message = r.message.replace(/\s+$/, "");
    const name = `${code(kubectlName(r))}${r.namespace === "" ? "" : ` in ${code(r.namespace)}`}`;
    const entry = byMessage.get(message) ?? { message, objects: [] };
    entry.objects.push(name);
    byMessage.set(message, entry);
  }
  return [...byMessage.values()];
}

/** The `**Errors:**` block, or "" when the operation had none. */
export function errorsSection(
  result: SyncResult | undefined,
  state: EnvironmentState,
  pointer: string,
): string {
  if (result === undefined) return "";
  const errors = distinctErrors(result.resources);
  const lines: string[] = [];
  const known = new Set(errors.map((e) => e.message));
  if (result.phase !== "Succeeded" && !known.has(result.message.trim()))
    lines.push(...item(`${result.phase}:`, result.message));
  for (const e of errors.slice(0, MAX_DISTINCT)) {
    const more = e.objects.length - MAX_NAMED;
    const who = `${e.objects.slice(0, MAX_NAMED).join(", ")}${more > 0 ? ` and ${plural(more, "more object")}` : ""}`;
    lines.push(...item(`${who}:`, e.message));
  }
  if (errors.length > MAX_DISTINCT)
    lines.push(`- and ${plural(errors.length - MAX_DISTINCT, "more distinct error")}: ${pointer}`);
  if (state.stuck !== undefined && result.phase !== "Succeeded")
    lines.push(`- stuck since ${date(state.stuck.since)}: ${inline(state.stuck.reason)}`);
  if (lines.length === 0) return "";
  return ["**Errors:**", ...lines].join("\n").replace(/\n+$/, "");
}

/** One error: `- who: message` when it is one short line, else the message fenced below. */
function item(who: string, message: string): string[] {
  const text = clipChars(message.replace(/\s+$/, ""), MAX_MESSAGE_CHARS);
  if (!/[\r\n]/.test(text) && Array.from(text).length <= INLINE_CHARS) return [`- ${who} ${inline(text)}`];
  return [`- ${who}`, "", fenced(text.replace(/\r\n?/g, "\n")), ""];
}

/** The first line of a message, short, for a table cell (the whole message is in Errors). */
export function shortMessage(message: string, max = 100): string {
  const first = message.trim().split(/\r?\n/, 1)[0] ?? "";
  const cut = clipChars(first, max);
  return cut !== message.trim() && !cut.endsWith("…") ? `${cut} …` : cut;
}
