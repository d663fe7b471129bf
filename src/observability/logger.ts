// The process logger: pino with secrets redacted. Two layers, because pino's `redact` paths
// are fixed shapes: (1) `redact` for the keys that carry credentials (the GitHub App's private
// key, the webhook secret, tokens, Authorization headers) at the top level and one or two
// levels down; (2) a log formatter that masks `data` and `stringData` of any Kubernetes Secret
// found in a logged object (a Secret's key names stay visible, its values never do).
// Every process logs through createLogger: the GitHub App (given to Probot's run), the controller
// and the CLI; an environment's lines come from `log.child({ app, environment })`.
import pino, { type DestinationStream, type LevelWithSilent, type Logger } from "pino";
import pretty from "pino-pretty";

export const REDACTED = "[Redacted]";

const SECRET_KEYS = [
  "privateKey",
  "PRIVATE_KEY",
  "webhookSecret",
  "WEBHOOK_SECRET",
  "secret",
  "token",
  "githubToken",
  "GITHUB_TOKEN",
  "password",
  "clientSecret",
];

/** Paths (fast-redact syntax) whose values never reach the output. */
export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`]),
  // Incoming requests (pino-http's `req`), Octokit errors (`err.request`), request options.
  ...["headers", "*.headers", "*.*.headers", "*.*.*.headers"].flatMap((h) => [
    `${h}.authorization`,
    `${h}.cookie`,
  ]),
  // A failed GitHub request serialized by `err` carries the body it sent (it may hold a token).
  "err.request.body",
  "err.response.headers",
];

export interface LoggerOptions {
  /** Defaults to LOG_LEVEL, then "info". */
  level?: LevelWithSilent;
  name?: string;
  /** Where lines go; stdout by default. Tests pass a stream to read them. */
  destination?: DestinationStream;
  /** The file descriptor written when no destination is given: 1 (stdout, default) or 2. */
  fd?: 1 | 2;
}

/** Pretty text for a person at a terminal; JSON lines otherwise, or whenever LOG_FORMAT=json. */
export function prettyWanted(isTTY: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(isTTY) && env.LOG_FORMAT !== "json";
}

function defaultDestination(fd: 1 | 2): DestinationStream {
  if (prettyWanted(fd === 1 ? process.stdout.isTTY : process.stderr.isTTY)) {
    return pretty({ destination: fd, sync: true, colorize: !process.env.NO_COLOR, ignore: "pid,hostname" });
  }
  return pino.destination(fd);
}

const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** The level named by `text` (LOG_LEVEL, --log-level), or an error that lists the valid ones. */
export function logLevel(text: string | undefined, what = "LOG_LEVEL"): LevelWithSilent {
  if (text === undefined || text === "") return "info";
  if (LEVELS.includes(text)) return text as LevelWithSilent;
  throw new Error(`${what}: "${text}" is not a log level; use one of ${LEVELS.join(", ")}`);
}

/** Probot's request log lines for probes and scrapes: logged at debug, not at info. */
const ROUTINE_REQUEST = /^(GET|HEAD) \/(healthz|readyz|metrics)(\?\S*)? \d{3} - \d+ms$/;

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? logLevel(process.env.LOG_LEVEL);
  if (!LEVELS.includes(level)) logLevel(level, "log level");
  const name = options.name ?? "syncward";
  const root = pino(
    {
      name,
      level,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      // Errors keep their type, message, stack and cause (never `String(err)`).
      serializers: { err: pino.stdSerializers.err },
      formatters: { log: (object) => maskSecretObjects(object) as Record<string, unknown> },
      hooks: {
        logMethod(args, method, lvl) {
          // Kubelet probes and Prometheus scrapes every few seconds would drown everything at info.
          if (lvl === 30 && typeof args[1] === "string" && ROUTINE_REQUEST.test(args[1])) {
            if (this.isLevelEnabled("debug")) this.debug(...(args as [object, string]));
            return;
          }
          method.apply(this, args);
        },
      },
    },
    options.destination ?? defaultDestination(options.fd ?? 1),
  );
  const make = root.child.bind(root);
  return oneKeyEach(make, name, {}, root);
}

/**
 * pino repeats a key a child binds again (Probot's `log.child({ name: "probot" })` under our
 * `name` printed `"name":"syncward","name":"probot"`, which JSON readers resolve differently).
 * Every child is made from the root with its ancestors' bindings merged, so each key appears
 * once; a child's `name` becomes `component`.
 */
function oneKeyEach(make: Logger["child"], name: string, own: Record<string, unknown>, self: Logger): Logger {
  self.child = ((bindings: Record<string, unknown>, childOptions?: object) => {
    const { name: part, ...rest } = bindings;
    const merged: Record<string, unknown> = { ...own, ...rest };
    if (typeof part === "string" && part !== name) merged.component = part;
    const child = make(merged, { level: self.level, ...childOptions }) as Logger;
    return oneKeyEach(make, name, merged, child);
  }) as unknown as Logger["child"];
  return self;
}

const MAX_DEPTH = 6;

/**
 * A copy of `value` in which every Kubernetes Secret (an object with `kind: "Secret"`) has the
 * values of `data` and `stringData` replaced. Unchanged branches are shared, not copied; the
 * caller's objects are never modified.
 */
export function maskSecretObjects(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const m = maskSecretObjects(v, depth + 1);
      if (m !== v) changed = true;
      return m;
    });
    return changed ? out : value;
  }
  if (value instanceof Error || value instanceof Date || ArrayBuffer.isView(value)) return value;
  const obj = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  if (obj.kind === "Secret") {
    copy = { ...obj };
    for (const field of ["data", "stringData"]) {
      const data = obj[field];
      if (data && typeof data === "object") {
        copy[field] = Object.fromEntries(Object.keys(data).map((k) => [k, REDACTED]));
      } else if (data !== undefined) {
        copy[field] = REDACTED;
      }
    }
    // kubectl's last-applied annotation repeats the whole object, data included.
    const meta = obj.metadata as { annotations?: Record<string, string> } | undefined;
    const lastApplied = "kubectl.kubernetes.io/last-applied-configuration";
    if (meta?.annotations?.[lastApplied] !== undefined) {
      copy.metadata = { ...meta, annotations: { ...meta.annotations, [lastApplied]: REDACTED } };
    }
  }
  for (const [k, v] of Object.entries(copy ?? obj)) {
    if (copy && (k === "data" || k === "stringData")) continue;
    const m = maskSecretObjects(v, depth + 1);
    if (m !== v) {
      copy ??= { ...obj };
      copy[k] = m;
    }
  }
  return copy ?? value;
}
