// Small formatting helpers the check-run renderers share: counts, dates, durations, object names
// and the inline forms of text someone else wrote.
import type { ResourceResult } from "../engine/result.ts";
import { clipChars, codeSpan, inertInline } from "./markdown.ts";

export const MAX_CELL_CHARS = 300;

/** A code span in a table cell: code spans show entities literally, so only pipes and newlines are escaped. */
export function codeCell(value: string, max = MAX_CELL_CHARS): string {
  return code(clipChars(value.replace(/\r?\n|\r/g, " "), max), max).replaceAll("|", "\\|");
}

/** Text inside a list item or paragraph: one line, no raw HTML. */
export function inline(value: string): string {
  return inertInline(value).replace(/\s*(\r?\n|\r)\s*/g, " ");
}

export function code(value: string, max = MAX_CELL_CHARS): string {
  return codeSpan(value, max);
}

export function kubectlName(r: Pick<ResourceResult, "kind" | "group" | "name">): string {
  return `${r.kind.toLowerCase()}${r.group === "" ? "" : `.${r.group}`}/${r.name}`;
}

/** kubectl's short names for the kinds a responder meets most. */
const SHORT_KINDS: Record<string, string> = {
  Deployment: "deploy",
  StatefulSet: "sts",
  DaemonSet: "ds",
  ReplicaSet: "rs",
  ServiceAccount: "sa",
  Service: "svc",
  ConfigMap: "cm",
  CronJob: "cj",
  Ingress: "ing",
  Namespace: "ns",
  PersistentVolumeClaim: "pvc",
  ClusterRoleBinding: "clusterrolebinding",
};

/** `apps/Deployment:shop/web` (a trail's object key) as `deploy/web`. */
export function shortObject(key: string): string {
  const m = /^(?:[^/:]*\/)?([^/:]+):(?:[^/]*\/)?(.+)$/.exec(key);
  if (m === null) return key;
  const kind = m[1]!;
  return `${SHORT_KINDS[kind] ?? kind.toLowerCase()}/${m[2]}`;
}

export function date(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return `${new Date(t).toISOString().slice(0, 19).replace("T", " ")}Z`;
}

export function duration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** One line of at most `max` characters (GitHub's deployment-status description takes 140). */
export function oneLine(text: string, max = 140): string {
  return clipChars(text.replace(/\s+/g, " ").trim(), max);
}
