// Where each object starts in a manifest file, read from its top lines only: `apiVersion`, `kind`
// and `metadata.name` of every document, and the line the document starts at. The kustomize
// source uses it to name the file and line an object came from without parsing every source file a
// second time (a CRD file holds megabytes of schema the locator never needs). It reads the plain
// block style manifests are written in; anything else (flow style, JSON, tags, anchors, quoted
// keys, multi-line quoted values, directives, `kind: List`) returns undefined and the caller parses.

export interface ManifestHead {
  apiVersion: string;
  kind: string;
  /** Absent for an object named by the server (`generateName`). */
  name?: string;
  /** 1-based line where the document's content starts, as the parser counts it. */
  line: number;
}

const TOP_KEY = /^([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$/;
const INDENTED_KEY = /^( +)([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$/;
const SEPARATOR = /^---[ \t]*$/;
const PLAIN_VALUE = /^[A-Za-z0-9][A-Za-z0-9._/:-]*$/;

interface Draft {
  line: number;
  fields: Map<string, string>;
  inMetadata: boolean;
  metadataIndent?: number;
}

/** A scalar written plainly or in one-line quotes, without a comment; undefined: not that simple. */
function simpleValue(raw: string): string | undefined {
  const text = raw.replace(/[ \t]+#.*$/, "");
  const quoted = /^"([^"\\]*)"$/.exec(text) ?? /^'([^']*)'$/.exec(text);
  if (quoted) return quoted[1];
  return PLAIN_VALUE.test(text) ? text : undefined;
}

/** A flow collection closed on its own line, with no quotes that could hold a bracket. */
function closedFlow(text: string): boolean {
  if (!/^[{[]/.test(text) || /["'&*!]/.test(text)) return false;
  let depth = 0;
  for (const c of text) {
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
}

/** A value that could hide later lines from a line scan, or be read otherwise than it looks. */
function unsafeValue(raw: string): boolean {
  const text = raw.replace(/[ \t]+#.*$/, "");
  return /^["'{[&*!%@`]/.test(text) && simpleValue(raw) === undefined && !closedFlow(text);
}

function headOf(draft: Draft): ManifestHead | undefined | "unreadable" {
  const { fields } = draft;
  const apiVersion = fields.get("apiVersion");
  const kind = fields.get("kind");
  const name = fields.get("metadata.name");
  if (kind === "List") return "unreadable";
  if (apiVersion === undefined || kind === undefined) return undefined;
  if (name === undefined && !fields.has("metadata.generateName")) return undefined;
  return { apiVersion, kind, ...(name === undefined ? {} : { name }), line: draft.line };
}

/** One line of a document's body; false when the scan cannot vouch for what follows. */
function readLine(draft: Draft, text: string): boolean {
  const top = TOP_KEY.exec(text);
  if (top) {
    const [, key, raw = ""] = top;
    if (draft.fields.has(key!) && ["apiVersion", "kind", "metadata"].includes(key!)) return false;
    draft.inMetadata = key === "metadata" && raw === "";
    if (key === "metadata" && raw !== "") return false;
    if (raw !== "" && unsafeValue(raw)) return false;
    if (key === "apiVersion" || key === "kind") {
      const value = simpleValue(raw);
      if (value === undefined) return false;
      draft.fields.set(key, value);
    } else draft.fields.set(key!, "");
    return true;
  }
  if (!text.startsWith(" ")) return false; // a tab, a flow collection, a quoted or complex key
  if (!draft.inMetadata) return true;
  const inner = INDENTED_KEY.exec(text);
  const indent = text.length - text.trimStart().length;
  draft.metadataIndent ??= indent;
  if (indent > draft.metadataIndent) return true;
  // A sequence may sit at its key's own indentation (`finalizers:` then `  - x`).
  if (indent === draft.metadataIndent && /^ *-( |$)/.test(text)) return true;
  if (indent < draft.metadataIndent || !inner) return false;
  const [, , key, raw = ""] = inner;
  if (key === "name" || key === "generateName") {
    const value = simpleValue(raw);
    if (value === undefined || draft.fields.has(`metadata.${key}`)) return false;
    draft.fields.set(`metadata.${key}`, value);
  } else if (raw !== "" && unsafeValue(raw)) return false;
  return true;
}

/** The documents' heads, or undefined when the text is not in the style this scan reads. */
export function manifestHeads(text: string): ManifestHead[] | undefined {
  const heads: ManifestHead[] = [];
  let draft: Draft | undefined;
  const close = (): boolean => {
    const head = draft && headOf(draft);
    if (head === "unreadable") return false;
    if (head) heads.push(head);
    draft = undefined;
    return true;
  };
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, "");
    if (SEPARATOR.test(line)) {
      if (!close()) return undefined;
      continue;
    }
    if (/^(\.\.\.|%|\uFEFF)/.test(line)) return undefined;
    if (line.trim() === "" || /^[ \t]*#/.test(line)) continue;
    draft ??= { line: i + 1, fields: new Map(), inMetadata: false };
    if (!readLine(draft, line)) return undefined;
  }
  return close() ? heads : undefined;
}
