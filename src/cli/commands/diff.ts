// `syncward diff`: compare one object from Git with a saved live object (`kubectl get -o yaml`)
// the way the engine does, and print the redacted diff. Exit codes like diff(1).
import { readFile } from "node:fs/promises";
import { LineCounter, parseAllDocuments } from "yaml";
import { DEFAULT_CONFIG_FILE, findEnvironment, loadConfigFile } from "../../config/load.ts";
import type { EnvironmentConfig, IgnoreDifference } from "../../config/types.ts";
import { compareObjects } from "../../engine/diff/compare-objects.ts";
import { fieldManagersOf } from "../../engine/diff/field-managers-of.ts";
import { renderDiff } from "../../engine/diff/render-diff.ts";
import type { Difference } from "../../engine/diff/types.ts";
import { type KubeObject, keyOf, keyString } from "../../kube/object.ts";
import { colorEnabled, colorizeDiff } from "../color.ts";
import { type CliIO, EXIT } from "../io.ts";

export const DIFF_USAGE = `usage: syncward diff --desired FILE --live FILE [--config FILE] [--env NAME]

Compares one object from Git (--desired) with a live object saved with
\`kubectl get -o yaml\` (--live), as syncward's engine does: server defaults,
status and fields only live has are not differences; extra list items are.
Applies the ignoreDifferences of the environment named by --env (default: the
first one) in --config (default with --env: ${DEFAULT_CONFIG_FILE}).
Secret values are masked. Prints a unified diff (live -> desired) on stdout and
the differing fields, with the field managers that own them, on stderr.

exit status: 0 in sync, 1 different, 2 error`;

/** Live objects larger than this are refused before parsing (a real object is well under 1 MiB). */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
const MAX_ALIAS_COUNT = 100;

class UsageError extends Error {}
class InputError extends Error {}

interface DiffArgs {
  desired: string;
  live: string;
  config?: string;
  env?: string;
}

function parseArgs(argv: readonly string[]): DiffArgs | "help" {
  const values: Partial<Record<"desired" | "live" | "config" | "env", string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "-h" || arg === "--help") return "help";
    const m = /^--(desired|live|config|env)(?:=(.*))?$/s.exec(arg);
    if (!m) {
      throw new UsageError(
        arg.startsWith("-") ? `unknown option ${arg}` : `unexpected argument ${JSON.stringify(arg)}`,
      );
    }
    const name = m[1] as keyof typeof values;
    let value = m[2];
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined || (value.startsWith("--") && value.length > 2)) {
        throw new UsageError(`--${name} needs a value`);
      }
      i++;
    }
    if (value === "") throw new UsageError(`--${name} needs a value`);
    if (values[name] !== undefined) throw new UsageError(`--${name} given twice`);
    values[name] = value;
  }
  if (!values.desired) throw new UsageError("--desired FILE is required");
  if (!values.live) throw new UsageError("--live FILE is required");
  return { desired: values.desired, live: values.live, config: values.config, env: values.env };
}

async function readObjects(file: string, flag: string): Promise<KubeObject[]> {
  let text: string;
  try {
    const buf = await readFile(file);
    if (buf.byteLength > MAX_FILE_BYTES) {
      throw new InputError(`${file}: larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`);
    }
    text = buf.toString("utf8");
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(
      code === "ENOENT"
        ? `${file}: file not found (--${flag})`
        : `${file}: cannot be read: ${(err as Error).message}`,
    );
  }
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [];
  for (const doc of list) {
    const problem = doc.errors[0] ?? doc.warnings[0];
    if (problem) {
      const { line, col } = lineCounter.linePos(problem.pos[0]);
      const message = problem.message.split("\n")[0];
      throw new InputError(`${file}:${line}:${col}: invalid YAML: ${message}`);
    }
  }
  const objects: KubeObject[] = [];
  for (const doc of list) {
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      throw new InputError(`${file}: cannot be loaded: ${(err as Error).message}`);
    }
    if (value === null || value === undefined) continue;
    const line = doc.contents ? lineCounter.linePos(doc.contents.range[0]).line : 1;
    // `kubectl get -o yaml` of several objects prints a List.
    const items =
      isRecord(value) &&
      typeof value.kind === "string" &&
      value.kind.endsWith("List") &&
      Array.isArray(value.items)
        ? value.items
        : [value];
    for (const item of items) objects.push(asObject(item, file, line));
  }
  if (objects.length === 0) throw new InputError(`${file}: holds no object (--${flag})`);
  return objects;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asObject(value: unknown, file: string, line: number): KubeObject {
  const ok =
    isRecord(value) &&
    typeof value.apiVersion === "string" &&
    typeof value.kind === "string" &&
    isRecord(value.metadata) &&
    typeof value.metadata.name === "string";
  if (!ok) {
    throw new InputError(
      `${file}:${line}: not a Kubernetes object: apiVersion, kind and metadata.name are required`,
    );
  }
  return value as KubeObject;
}

function describe(obj: KubeObject): string {
  return keyString(keyOf(obj));
}

function sameResource(desired: KubeObject, live: KubeObject): boolean {
  const d = keyOf(desired);
  const l = keyOf(live);
  // A manifest often leaves the namespace to the environment's destination.
  return (
    d.group === l.group &&
    d.kind === l.kind &&
    d.name === l.name &&
    (!d.namespace || d.namespace === l.namespace)
  );
}

/** Picks the one object to compare from each file; several are allowed only if exactly one pairs up. */
function pickPair(desired: KubeObject[], live: KubeObject[], args: DiffArgs): [KubeObject, KubeObject] {
  if (desired.length === 1 && live.length === 1) {
    const [d, l] = [desired[0] as KubeObject, live[0] as KubeObject];
    if (!sameResource(d, l)) {
      throw new InputError(
        `the objects are not the same resource: ${args.desired} holds ${describe(d)}, ${args.live} holds ${describe(l)}`,
      );
    }
    return [d, l];
  }
  const pairs: Array<[KubeObject, KubeObject]> = [];
  for (const d of desired) for (const l of live) if (sameResource(d, l)) pairs.push([d, l]);
  if (pairs.length === 1) return pairs[0] as [KubeObject, KubeObject];
  const many =
    desired.length > 1
      ? `${args.desired} holds ${desired.length} objects`
      : `${args.live} holds ${live.length} objects`;
  throw new InputError(
    pairs.length === 0
      ? `${many} and none is the same resource as the other file (${[...desired, ...live].map(describe).join(", ")})`
      : `${many}; give one object per file (${pairs.length} pairs match)`,
  );
}

async function ignoreRules(
  args: DiffArgs,
): Promise<{ ignoreDifferences: IgnoreDifference[]; trustedManagers: EnvironmentConfig["trustedManagers"] }> {
  if (args.config === undefined && args.env === undefined)
    return { ignoreDifferences: [], trustedManagers: [] };
  const config = await loadConfigFile(args.config ?? DEFAULT_CONFIG_FILE);
  const env = args.env !== undefined ? findEnvironment(config, args.env) : config.environments[0];
  return { ignoreDifferences: env?.ignoreDifferences ?? [], trustedManagers: env?.trustedManagers ?? [] };
}

function summary(differences: Difference[], live: KubeObject): string {
  const lines = differences.map((d) => {
    const owners = d.kind === "missing" ? [] : fieldManagersOf(live, d.path).filter((m) => m !== "syncward");
    const by = owners.length > 0 ? ` (live field manager: ${owners.join(", ")})` : "";
    return `  ${d.kind} ${d.path}${by}`;
  });
  const n = differences.length;
  return `${describe(live)}: ${n} ${n === 1 ? "difference" : "differences"} from Git\n${lines.join("\n")}`;
}

export async function diffCommand(argv: string[], io: CliIO): Promise<number> {
  let args: DiffArgs | "help";
  try {
    args = parseArgs(argv);
  } catch (err) {
    io.err(`syncward diff: ${(err as Error).message}\n${DIFF_USAGE}`);
    return EXIT.error;
  }
  if (args === "help") {
    io.out(DIFF_USAGE);
    return EXIT.ok;
  }
  try {
    const [desiredObjects, liveObjects] = await Promise.all([
      readObjects(args.desired, "desired"),
      readObjects(args.live, "live"),
    ]);
    const [desired, live] = pickPair(desiredObjects, liveObjects, args);
    const options = await ignoreRules(args);
    const comparison = compareObjects(desired, live, options);
    if (comparison.inSync) return EXIT.ok;
    const diff = renderDiff(desired, live, options);
    io.out(colorEnabled(io) ? colorizeDiff(diff) : diff);
    io.err(summary(comparison.differences, live));
    return EXIT.different;
  } catch (err) {
    // ConfigError, UnknownEnvironmentError, IgnoreRuleError and input errors all say what to fix.
    io.err(`syncward diff: ${(err as Error).message}`);
    return EXIT.error;
  }
}
