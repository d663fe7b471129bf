// Secrets never reach a diff, a log line or a check run in clear text.
import type { KubeObject } from "../kube/object.ts";
import { cloneJson } from "./diff/deep-equal.ts";
import { isPlainObject } from "./diff/json-pointer.ts";
import { isSecret } from "./diff/normalize.ts";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
const MASK = "********";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What a data or stringData value holds, so `data.x` (base64) and `stringData.x` (plain) compare. */
function contentOf(field: "data" | "stringData", value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
  if (field === "stringData") return Buffer.from(text, "utf8").toString("hex");
  const compact = text.replace(/\s+/g, "");
  return BASE64.test(compact) ? Buffer.from(compact, "base64").toString("hex") : `raw:${text}`;
}

/**
 * For a Secret (core group), deep copies in which every `data` and `stringData` value is a run of
 * `+`: per key, equal contents on both sides get the same mask and different contents masks of
 * different lengths (8, 12, 16... as Argo CD does), which says nothing about the value's length.
 * The last-applied-configuration annotation, which holds the values, is dropped. Other kinds come
 * back as unchanged deep copies. Inputs are never mutated.
 */
export function redactSecrets<T extends KubeObject | undefined>(
  desired: T,
  live: T,
): { desired: T; live: T } {
  const d = desired === undefined ? desired : cloneJson(desired);
  const l = live === undefined ? live : cloneJson(live);
  if (!isSecret(d) && !isSecret(l)) return { desired: d, live: l };
  const sides = [d, l].filter((o): o is NonNullable<T> => o !== undefined);
  const keys = new Set<string>();
  for (const obj of sides) {
    const annotations = obj.metadata?.annotations;
    if (isPlainObject(annotations)) delete annotations[LAST_APPLIED];
    for (const field of ["data", "stringData"] as const) {
      const map = obj[field];
      if (isPlainObject(map)) for (const key of Object.keys(map)) keys.add(key);
    }
  }
  for (const key of keys) {
    const masks = new Map<string, string>();
    let next = "++++++++";
    for (const obj of sides) {
      for (const field of ["data", "stringData"] as const) {
        const map = obj[field];
        if (!isPlainObject(map) || !Object.hasOwn(map, key)) continue;
        const content = contentOf(field, map[key]);
        let mask = masks.get(content);
        if (mask === undefined) {
          mask = next;
          next += "++++";
          masks.set(content, mask);
        }
        map[key] = mask;
      }
    }
  }
  return { desired: d, live: l };
}

/** The forms of a secret value worth looking for in text: itself, base64 (standard and URL-safe), decoded. */
function formsOf(value: string): string[] {
  const forms = new Set<string>([value]);
  const buf = Buffer.from(value, "utf8");
  forms.add(buf.toString("base64"));
  forms.add(buf.toString("base64").replace(/=+$/, ""));
  forms.add(buf.toString("base64url"));
  const compact = value.replace(/\s+/g, "");
  if (compact.length >= 4 && BASE64.test(compact)) {
    const decoded = Buffer.from(compact, "base64");
    const text = decoded.toString("utf8");
    // Only text that survives a round trip (not binary) is worth searching for.
    if (Buffer.from(text, "utf8").equals(decoded)) forms.add(text);
  }
  if (value.includes("\n")) {
    // A multi-line value (a PEM key) may be printed line by line.
    for (const line of value.split(/\r?\n/)) if (line.trim().length >= 16) forms.add(line.trim());
  }
  return [...forms];
}

/**
 * Replaces every occurrence of the given secret values, their base64 forms, and (for values that
 * are base64, like a Secret's `data`) their decoded text with `********`. Values shorter than 3
 * characters are skipped: masking every "a" in a log would hide everything and protect nothing.
 */
export function redactText(text: string, secretValues: readonly string[]): string {
  const needles = new Set<string>();
  for (const value of secretValues) {
    if (typeof value !== "string") continue;
    for (const form of formsOf(value)) if (form.length >= 3) needles.add(form);
  }
  if (needles.size === 0) return text;
  // Longest first, so a value is masked whole before any shorter value inside it.
  const sorted = [...needles].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(sorted.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  return text.replace(pattern, MASK);
}
