// Parsing manifest text safely: plain YAML 1.2 (core schema), bounded aliases, no custom or language tags.
// Every problem names the line of the document it is in.

import { type Document, isSeq, LineCounter, type Node, parseAllDocuments } from "yaml";
import type { KubeObject } from "../kube/object.ts";
import type { SourceProblem } from "./errors.ts";
import { fastParseDocuments } from "./fast-yaml.ts";

/** Aliases a document may expand before it is refused as a resource-exhaustion attack ("billion laughs"). */
export const MAX_ALIAS_COUNT = 100;

export interface ParsedObject {
  object: KubeObject;
  /** 1-based line where the object starts in its file. */
  line: number;
}

export interface ParsedManifests {
  objects: ParsedObject[];
  problems: SourceProblem[];
}

export interface ParsedDocument {
  value: unknown;
  /** 1-based line where the document's content starts. */
  line: number;
  doc: Document.Parsed;
}

export interface ParsedDocuments {
  documents: ParsedDocument[];
  problems: SourceProblem[];
  /** 1-based line of a character offset in the text. */
  lineAt: (offset: number) => number;
}

/**
 * Parses YAML (or JSON) text into documents with their start lines; problems name `file` and a line.
 * A key repeated in one mapping is an error unless `repeatedKeys` is "last-wins".
 */
export function parseYamlDocuments(
  text: string,
  file: string,
  repeatedKeys: "error" | "last-wins" = "error",
): ParsedDocuments {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, {
    version: "1.2",
    schema: "core",
    customTags: [],
    resolveKnownTags: false, // no !!binary, !!set, !!omap, !!timestamp: they do not survive as JSON
    merge: true, // `<<: *base` means what kubectl makes of it, not a key named "<<"
    uniqueKeys: repeatedKeys === "error",
    strict: true,
    prettyErrors: true,
    lineCounter,
  });
  const documents: ParsedDocument[] = [];
  const problems: SourceProblem[] = [];
  const lineAt = (offset: number) => lineCounter.linePos(offset).line;

  for (const doc of docs) {
    const start = doc.contents?.range[0] ?? doc.range[0];
    const line = lineAt(start);
    let broken = false;
    const reported = new Set<number>();
    for (const error of doc.errors) {
      broken = true;
      const at = error.linePos?.[0];
      const errorLine = at?.line ?? line;
      // One problem per line: the parser's follow-up errors on a line only repeat the first one.
      if (reported.has(errorLine)) continue;
      reported.add(errorLine);
      const column = at ? ` (column ${at.col})` : "";
      problems.push({ file, line: errorLine, message: `invalid YAML: ${plain(error.message)}${column}` });
    }
    for (const warning of doc.warnings) {
      if (warning.code !== "TAG_RESOLVE_FAILED") continue;
      broken = true;
      problems.push({ file, line: warning.linePos?.[0].line ?? line, message: tagProblem(warning.message) });
    }
    if (broken || doc.contents === null) continue;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      const message =
        err instanceof ReferenceError && /alias/i.test(err.message)
          ? `refused: the document expands too many YAML aliases (more than ${MAX_ALIAS_COUNT}), as in a "billion laughs" attack`
          : `invalid YAML: ${plain(err instanceof Error ? err.message : String(err))}`;
      problems.push({ file, line, message });
      continue;
    }
    if (value === null || value === undefined) continue;
    documents.push({ value, line, doc });
  }
  return { documents, problems, lineAt };
}

/** Parses manifest text: multi-document YAML or JSON, `kind: List` flattened, each object validated. */
export function parseManifests(text: string, file: string): ParsedManifests {
  return parseManifestsFast(text, file) ?? parseManifestsPrecisely(text, file);
}

/**
 * The fast parser's reading (fast-yaml.ts), when it has one and the text holds no `kind: List`
 * (whose items' lines only the precise parser's nodes know): the same objects and lines.
 */
function parseManifestsFast(text: string, file: string): ParsedManifests | undefined {
  const documents = fastParseDocuments(text);
  if (!documents) return undefined;
  const objects: ParsedObject[] = [];
  const problems: SourceProblem[] = [];
  for (const { value, line } of documents) {
    if (value === null || value === undefined) continue;
    if (isPlainObject(value) && value.kind === "List" && "items" in value) return undefined;
    const checked = checkObject(value, "document");
    if (typeof checked === "string") problems.push({ file, line, message: checked });
    else objects.push({ object: checked, line });
  }
  return { objects, problems };
}

/**
 * The precise parser's reading: `yaml`'s Document model, with a line for every problem. A key
 * repeated in a mapping takes its last value, as in Argo CD (gitops-engine reads manifests with
 * sigs.k8s.io/yaml, which does not refuse repeated keys) and kubectl's client-side decoding.
 */
export function parseManifestsPrecisely(text: string, file: string): ParsedManifests {
  const { documents, problems, lineAt } = parseYamlDocuments(text, file, "last-wins");
  const objects: ParsedObject[] = [];
  for (const { value, line, doc } of documents) {
    if (isPlainObject(value) && value.kind === "List" && "items" in value) {
      const items = value.items;
      if (items === null) continue;
      if (!Array.isArray(items)) {
        problems.push({ file, line, message: "a List's items must be a sequence of objects" });
        continue;
      }
      const itemNodes = doc.get("items", true);
      items.forEach((item, i) => {
        const node = isSeq(itemNodes) ? (itemNodes.items[i] as Node | undefined) : undefined;
        const itemLine = node?.range ? lineAt(node.range[0]) : line;
        const checked = checkObject(item, `List item ${i + 1}`);
        if (typeof checked === "string") problems.push({ file, line: itemLine, message: checked });
        else objects.push({ object: checked, line: itemLine });
      });
      continue;
    }
    const checked = checkObject(value, "document");
    if (typeof checked === "string") problems.push({ file, line, message: checked });
    else objects.push({ object: checked, line });
  }
  return { objects, problems };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a sequence";
  return `a ${typeof value}`;
}

/** The object, or what is wrong with it. */
function checkObject(value: unknown, what: string): KubeObject | string {
  if (!isPlainObject(value))
    return `${what} is not a Kubernetes object: expected a mapping, found ${describe(value)}`;
  const missing: string[] = [];
  const wrong: string[] = [];
  const field = (name: string, v: unknown) => {
    if (v === undefined || v === null || v === "") missing.push(name);
    else if (typeof v !== "string") wrong.push(`${name} must be a string, found ${describe(v)}`);
  };
  field("apiVersion", value.apiVersion);
  field("kind", value.kind);
  const metadata = value.metadata;
  if (metadata === undefined || metadata === null) missing.push("metadata.name");
  else if (!isPlainObject(metadata)) wrong.push(`metadata must be a mapping, found ${describe(metadata)}`);
  else {
    // A hook may be named by the server on each run (generateName); the engine refuses it on anything else.
    const generated =
      metadata.name === undefined &&
      typeof metadata.generateName === "string" &&
      metadata.generateName !== "";
    if (!generated) field("metadata.name", metadata.name);
    if (
      metadata.namespace !== undefined &&
      metadata.namespace !== null &&
      typeof metadata.namespace !== "string"
    ) {
      wrong.push(`metadata.namespace must be a string, found ${describe(metadata.namespace)}`);
    }
  }
  if (value.kind === "Secret" && value.apiVersion === "v1") wrong.push(...secretValueProblems(value));
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`${what} is missing ${missing.join(", ")}`);
  if (wrong.length > 0) parts.push(`${missing.length > 0 ? "" : `${what}: `}${wrong.join("; ")}`);
  if (parts.length > 0) return parts.join("; ");
  return value as KubeObject;
}

/**
 * A Secret's values must be strings. An unquoted `pin: 1234` is a number, and the API server's
 * refusal would quote it: refused here, naming the key and never the value.
 */
function secretValueProblems(secret: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const field of ["data", "stringData"] as const) {
    const map = secret[field];
    if (map === undefined || map === null) continue;
    if (!isPlainObject(map)) {
      problems.push(`Secret ${field} must be a mapping, found ${describe(map)}`);
      continue;
    }
    for (const [key, v] of Object.entries(map)) {
      if (typeof v !== "string" && v !== null) {
        problems.push(
          `Secret ${field}.${key} must be a string, found ${describe(v)} (quote it in YAML; the value is not shown)`,
        );
      }
    }
  }
  return problems;
}

/** yaml's pretty messages end with ` at line 7, column 3:` and a code excerpt; the line is reported apart. */
function plain(message: string): string {
  const first = message.split("\n")[0] ?? message;
  return first.replace(/ at line \d+, column \d+:?$/, "").trim();
}

function tagProblem(message: string): string {
  const raw = /Unresolved tag: (\S+)/.exec(plain(message))?.[1] ?? "?";
  const tag = raw.startsWith("tag:yaml.org,2002:") ? `!!${raw.slice("tag:yaml.org,2002:".length)}` : raw;
  return `refused YAML tag ${tag}: only plain YAML is accepted (no custom or language-specific tags)`;
}
