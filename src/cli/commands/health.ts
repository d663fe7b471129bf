// `syncward health [--health-config FILE] [-o json] FILE...`: the health syncward reads from live
// objects saved with `kubectl get -o yaml` (one object, several documents, or a `kind: List`), one
// line per object; with `--health-config`, the operator's custom Lua checks are applied too (never
// a repository's config: whoever runs this in a pull request's checkout runs no code of it).

import { readFile } from "node:fs/promises";
import { type Document, isMap, LineCounter, parseAllDocuments } from "yaml";
import { ConfigError } from "../../config/load.ts";
import { assessHealth, compileHealthChecks, type HealthChecks } from "../../engine/health/index.ts";
import type { HealthStatus } from "../../engine/result.ts";
import type { KubeObject } from "../../kube/object.ts";
import { loadHealthConfig } from "../../projects/health-config.ts";
import { type CliIO, EXIT } from "../io.ts";

const USAGE = "usage: syncward health [--health-config FILE] [-o json] FILE...";

type Output = "text" | "json";

interface HealthRow {
  kind: string;
  name: string;
  namespace: string | null;
  status: HealthStatus | null;
  message: string | null;
}

export async function healthCommand(argv: string[], io: CliIO): Promise<number> {
  const args = parseArgs(argv);
  if ("help" in args) {
    io.out(USAGE);
    return EXIT.ok;
  }
  if ("error" in args) {
    io.err(`syncward health: ${args.error}`);
    io.err(USAGE);
    return EXIT.error;
  }

  let checks: HealthChecks | undefined;
  if (args.config !== undefined) {
    try {
      checks = compileHealthChecks(await loadHealthConfig(args.config));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      io.err(err.message);
      return EXIT.error;
    }
  }

  const objects: KubeObject[] = [];
  const problems: string[] = [];
  for (const file of args.files) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      problems.push(`syncward health: cannot read ${file}: ${readErrorText(err)}`);
      continue;
    }
    const loaded = loadObjects(text, file);
    objects.push(...loaded.objects);
    problems.push(...loaded.problems);
  }
  // All or nothing: a partial table (or a partial JSON array) would read as the whole answer.
  if (problems.length > 0) {
    for (const problem of problems) io.err(problem);
    return EXIT.error;
  }

  const rows = objects.map((obj) => toRow(obj, checks));
  if (args.output === "json") {
    io.out(JSON.stringify(rows, null, 2));
  } else {
    for (const row of rows) io.out(textLine(row));
  }
  return EXIT.ok;
}

interface HealthArgs {
  output: Output;
  files: string[];
  config?: string;
}

function parseArgs(argv: string[]): HealthArgs | { error: string } | { help: true } {
  let output: Output = "text";
  let config: string | undefined;
  const files: string[] = [];
  let options = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (!options || arg === "-" || !arg.startsWith("-")) {
      files.push(arg);
      continue;
    }
    if (arg === "--") {
      options = false;
      continue;
    }
    if (arg === "-h" || arg === "--help") return { help: true };
    if (arg === "--config" || arg.startsWith("--config="))
      return {
        error:
          "--config is not read for health checks: a repository's config cannot carry them (they are the operator's); pass --health-config FILE (resourceCustomizations, as import-argo prints them, or the operator's projects document)",
      };
    if (arg === "--health-config" || arg.startsWith("--health-config=")) {
      config = arg === "--health-config" ? argv[++i] : arg.slice("--health-config=".length);
      if (!config) return { error: "--health-config needs a file" };
      continue;
    }
    let value: string | undefined;
    if (arg === "-o" || arg === "--output") {
      value = argv[++i];
      if (value === undefined) return { error: `${arg} needs a value (json or text)` };
    } else if (arg.startsWith("--output=")) {
      value = arg.slice("--output=".length);
    } else if (arg.startsWith("-o")) {
      value = arg.slice(2).replace(/^=/, "");
    } else {
      return { error: `unknown option ${arg}` };
    }
    if (value !== "json" && value !== "text")
      return { error: `unsupported output format "${value}" (use json or text)` };
    output = value;
  }
  if (files.length === 0) return { error: "no files given" };
  return config === undefined ? { output, files } : { output, files, config };
}

function readErrorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EISDIR") return "is a directory";
  if (code === "EACCES") return "permission denied";
  return err instanceof Error ? err.message : String(err);
}

/**
 * The objects in one file: every YAML document, with `kind: List` (and `<Kind>List`) expanded
 * into its items. Problems are `FILE:LINE: problem`, one line each.
 */
function loadObjects(text: string, file: string): { objects: KubeObject[]; problems: string[] } {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter });
  const objects: KubeObject[] = [];
  const problems: string[] = [];
  const lineAt = (offset: number | undefined) => lineCounter.linePos(offset ?? 0).line;

  for (const doc of docs) {
    const error = doc.errors[0];
    if (error) {
      problems.push(
        `${file}:${error.linePos?.[0].line ?? lineAt(error.pos[0])}: ${firstLine(error.message)}`,
      );
      continue;
    }
    const docLine = lineAt(doc.contents?.range[0] ?? doc.range[0]);
    let value: unknown;
    try {
      value = doc.toJS();
    } catch (err) {
      // Alias bombs ("billion laughs") end here: yaml refuses to expand excessive aliases.
      problems.push(`${file}:${docLine}: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    if (value === null || value === undefined) continue; // an empty document (a stray `---`)

    if (
      isRecord(value) &&
      typeof value.kind === "string" &&
      value.kind.endsWith("List") &&
      "items" in value
    ) {
      const items = value.items;
      if (items !== null && !Array.isArray(items)) {
        problems.push(`${file}:${docLine}: ${value.kind} has "items" that is not a list`);
        continue;
      }
      const itemKind = value.kind === "List" ? undefined : value.kind.slice(0, -"List".length);
      (items ?? []).forEach((item: unknown, i: number) => {
        // Items of a typed list (DeploymentList) as the API server returns it carry no kind of their own.
        const filled =
          isRecord(item) && itemKind !== undefined
            ? { apiVersion: value.apiVersion, kind: itemKind, ...item }
            : item;
        const problem = objectProblem(filled);
        if (problem) {
          const line = lineAt(nodeRange(doc, ["items", i]) ?? doc.contents?.range[0]);
          problems.push(`${file}:${line}: items[${i}]: ${problem}`);
        } else {
          objects.push(filled as KubeObject);
        }
      });
      continue;
    }

    const problem = objectProblem(value);
    if (problem) problems.push(`${file}:${docLine}: ${problem}`);
    else objects.push(value as KubeObject);
  }
  return { objects, problems };
}

/** Why a value is not a Kubernetes object syncward can assess, or undefined when it is one. */
function objectProblem(value: unknown): string | undefined {
  if (!isRecord(value))
    return "not a Kubernetes object (expected a mapping with apiVersion, kind and metadata)";
  if (typeof value.kind !== "string" || value.kind === "") return "object has no kind";
  if (typeof value.apiVersion !== "string" || value.apiVersion === "")
    return `${value.kind} has no apiVersion`;
  const metadata = value.metadata;
  if (!isRecord(metadata) || typeof metadata.name !== "string" || metadata.name === "") {
    return `${value.kind} has no metadata.name`;
  }
  return undefined;
}

function nodeRange(doc: Document.Parsed, path: Array<string | number>): number | undefined {
  if (!isMap(doc.contents)) return undefined;
  const node = doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
  return node?.range?.[0];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** yaml's messages end with " at line L, column C:" and a code excerpt; the line is printed apart. */
function firstLine(message: string): string {
  return (message.split("\n")[0] ?? message).replace(/ at line \d+, column \d+:?$/, "");
}

function toRow(obj: KubeObject, checks: HealthChecks | undefined): HealthRow {
  const health = assessHealth(obj, checks);
  return {
    kind: obj.kind,
    name: obj.metadata.name,
    namespace: obj.metadata.namespace ?? null,
    status: health?.status ?? null,
    message: health?.message ?? null,
  };
}

function textLine(row: HealthRow): string {
  const head = `${row.kind}/${row.name}:`;
  if (row.status === null) return `${head} -`;
  // Condition messages can span lines; one object stays on one line.
  const message = row.message?.replace(/\s+/g, " ").trim();
  return message ? `${head} ${row.status} ${message}` : `${head} ${row.status}`;
}
