// Strict GitHub mocking for app tests, in the spirit of renovate's test/http-mock.ts, plus a check
// of every outgoing request against GitHub's own OpenAPI description:
// - every request to api.github.com must match a nock interceptor; an unmatched one fails the
//   request *and* `assertDone()` (so a handler that swallows the error still fails the test);
// - every interceptor must be used (`assertDone()` lists the pending ones);
// - every request Octokit sends is validated before it leaves: an endpoint GitHub does not have,
//   a body GitHub would reject (bad enum, missing required field, unknown field), an unknown query
//   parameter: the request throws, and `assertDone()` reports it too;
// - the network is closed except for 127.0.0.1/localhost (the local control plane).
//
// Usage:
//   const gh = mockGitHub();
//   gh.api.post("/repos/acme/shop/check-runs").reply(201, { id: 1 });
//   const probot = await createTestProbot(app);
//   await probot.receive(pushEvent({}));
//   gh.assertDone();
import { readFileSync } from "node:fs";
import type { ClientRequest } from "node:http";
import { createRequire } from "node:module";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import nock from "nock";
import { type ApplicationFunction, Probot, ProbotOctokit } from "probot";
import { didYouMean } from "../../src/config/did-you-mean.ts";

const require = createRequire(import.meta.url);
const SPEC_FILE = "@octokit/openapi/generated/api.github.com.deref.json";
export const GITHUB_API = "https://api.github.com";

// ---------------------------------------------------------------------------------------------
// OpenAPI validation

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };

interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: Schema;
}

interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> };
}

interface Spec {
  paths: Record<string, Record<string, Operation>>;
}

let spec: Spec | undefined;
let pathMatchers: Array<{ template: string; regex: RegExp; literal: number }> | undefined;

function loadSpec(): Spec {
  // ~70 MB of JSON, ~2 s: loaded once per test process, only when a request is validated.
  spec ??= JSON.parse(readFileSync(require.resolve(SPEC_FILE), "utf8")) as Spec;
  return spec;
}

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

function newAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes });
  addFormats(ajv);
  // GitHub's own format for "owner/name" (e.g. pulls.create's head_repo).
  ajv.addFormat("repo.nwo", /^[^/\s]+\/[^/\s]+$/);
  return ajv;
}

let bodyAjv: Ajv | undefined;
let queryAjv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function compile(key: string, schema: Schema, coerce: boolean): ValidateFunction {
  let v = compiled.get(key);
  if (v === undefined) {
    if (coerce) queryAjv ??= newAjv(true);
    else bodyAjv ??= newAjv(false);
    const ajv = (coerce ? queryAjv : bodyAjv)!;
    v = ajv.compile(toJsonSchema(schema) as Schema);
    compiled.set(key, v);
  }
  return v;
}

/**
 * An OpenAPI 3.0 schema as JSON Schema: `nullable: true` becomes `anyOf [..., null]` (ajv refuses
 * `nullable` without `type`, and GitHub's description has those next to `oneOf`/`anyOf`/`enum`).
 */
function toJsonSchema(node: Json): Json {
  if (!isRecord(node)) return node;
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(node as Schema)) {
    if (k === "nullable" || k === "example" || k === "examples") continue;
    if (k === "properties" && isRecord(v)) {
      out[k] = Object.fromEntries(Object.entries(v as Schema).map(([name, s]) => [name, toJsonSchema(s)]));
    } else if ((k === "allOf" || k === "anyOf" || k === "oneOf") && Array.isArray(v)) {
      out[k] = v.map(toJsonSchema);
    } else if (k === "items" || k === "additionalProperties" || k === "not") {
      out[k] = toJsonSchema(v);
    } else {
      out[k] = v;
    }
  }
  return (node as Schema).nullable === true ? { anyOf: [out, { type: "null" }] } : out;
}

/** A request GitHub's OpenAPI description says GitHub would reject (or that does not exist). */
export class OpenApiViolation extends Error {
  constructor(
    readonly endpoint: string,
    readonly problems: string[],
  ) {
    super(`GitHub would reject ${endpoint}:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "OpenApiViolation";
  }
}

/** Violations seen since the last `takeOpenApiViolations()` (so a swallowed error still fails the test). */
const violations: OpenApiViolation[] = [];

/** Returns and forgets the violations recorded so far. */
export function takeOpenApiViolations(): OpenApiViolation[] {
  return violations.splice(0, violations.length);
}

/** Octokit's own keys in request options; everything else is a parameter. */
const OCTOKIT_KEYS = new Set(["method", "baseUrl", "url", "headers", "mediaType", "request"]);

/**
 * Checks one request against GitHub's REST description and throws an `OpenApiViolation` listing
 * every problem. `url` is Octokit's route template (`/repos/{owner}/{repo}/check-runs`), or a
 * literal path or full URL (pagination links), matched against the templates. `body` is the JSON
 * body (undefined for none); `params` are Octokit's request options (path and query values).
 */
export function validateAgainstOpenApi(
  method: string,
  url: string,
  body: unknown,
  params: Record<string, unknown> = {},
): void {
  const m = method.toLowerCase();
  const endpointName = `${method.toUpperCase()} ${url}`;
  let path = url.replace(/^https?:\/\/[^/]+/i, "").replace(/\{\?[^}]*\}$/, "");
  const queryFromUrl = new URLSearchParams(path.includes("?") ? path.slice(path.indexOf("?") + 1) : "");
  path = path.split("?")[0]!;
  // GraphQL is not part of the REST description.
  if (path === "/graphql") return;
  // Pagination links use /repositories/{id}/... for /repos/{owner}/{repo}/...
  path = path.replace(/^\/repositories\/\d+(?=\/|$)/, "/repos/{owner}/{repo}");

  const { paths } = loadSpec();
  let template = paths[path] !== undefined ? path : undefined;
  const isTemplate = template !== undefined && /\{[^}]+\}/.test(url);
  template ??= matchLiteralPath(path);
  const item = template === undefined ? undefined : paths[template];
  const op = item?.[m];
  if (template === undefined || item === undefined || op === undefined) {
    const problem =
      item !== undefined
        ? `GitHub has no such endpoint: ${method.toUpperCase()} ${template} (it accepts ${Object.keys(item)
            .filter((k) => k !== "parameters")
            .map((k) => k.toUpperCase())
            .join(", ")})`
        : `GitHub has no such endpoint: ${method.toUpperCase()} ${path}${hintForPath(path)}`;
    throw record(new OpenApiViolation(endpointName, [problem]));
  }

  const name = `${method.toUpperCase()} ${template}${op.operationId ? ` (${op.operationId})` : ""}`;
  const problems: string[] = [];
  const parameters = op.parameters ?? [];

  // Path parameters: a missing one would be sent as an empty segment.
  if (isTemplate) {
    for (const p of parameters.filter((p) => p.in === "path")) {
      const v = params[p.name];
      if (v === undefined || v === null || v === "") problems.push(`path parameter \`${p.name}\` is missing`);
    }
  }

  // Query parameters: GitHub ignores unknown ones silently, which hides typos; refuse them here.
  const urlVariables = new Set(templateVariables(url));
  const hasBody = m !== "get" && m !== "head";
  const query: Record<string, unknown> = Object.fromEntries(queryFromUrl);
  if (!hasBody) {
    for (const [k, v] of Object.entries(params)) {
      if (!OCTOKIT_KEYS.has(k) && !urlVariables.has(k) && v !== undefined) query[k] = v;
    }
  }
  const queryParams = parameters.filter((p) => p.in === "query");
  const querySchema: Schema = {
    type: "object",
    properties: Object.fromEntries(queryParams.map((p) => [p.name, p.schema ?? {}])),
    required: queryParams.filter((p) => p.required).map((p) => p.name),
    additionalProperties: false,
  };
  const checkQuery = compile(`query ${m} ${template}`, querySchema, true);
  if (!checkQuery({ ...query })) problems.push(...describe(checkQuery.errors ?? [], "query", query));

  // Body: validated against the JSON schema of the request body, plus a check for unknown fields.
  const jsonSchema = op.requestBody?.content["application/json"]?.schema;
  const otherTypes = Object.keys(op.requestBody?.content ?? {}).filter((t) => t !== "application/json");
  if (body !== undefined && op.requestBody === undefined && hasBody) {
    const keys = isRecord(body) ? Object.keys(body).join(", ") : typeof body;
    problems.push(`the endpoint takes no request body, but one was sent (${keys})`);
  } else if (jsonSchema !== undefined && (typeof body !== "string" || otherTypes.length === 0)) {
    const data = body === undefined ? (op.requestBody?.required ? {} : undefined) : body;
    if (data !== undefined) {
      const checkBody = compile(`body ${m} ${template}`, jsonSchema, false);
      if (!checkBody(data)) problems.push(...describe(checkBody.errors ?? [], "body", data));
      for (const unknown of unknownFields(jsonSchema, data, "body")) {
        problems.push(`${unknown}: GitHub does not know this field (it would be ignored)`);
      }
    }
  }

  if (problems.length > 0) throw record(new OpenApiViolation(name, problems));
}

function record(v: OpenApiViolation): OpenApiViolation {
  violations.push(v);
  return v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function templateVariables(url: string): string[] {
  return [...url.matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((m) =>
    m[1]!.split(",").map((n) => n.replace(/\*$/, "")),
  );
}

/** The template a literal path (`/repos/acme/shop/issues`) belongs to, the most specific first. */
function matchLiteralPath(path: string): string | undefined {
  pathMatchers ??= Object.keys(loadSpec().paths)
    .map((template) => ({
      template,
      regex: new RegExp(
        `^${template
          .split(/(\{[^}]+\})/)
          .map((part) => (part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
          .join("")}$`,
      ),
      literal: template.replace(/\{[^}]+\}/g, "").length,
    }))
    .sort((a, b) => b.literal - a.literal);
  return pathMatchers.find((p) => p.regex.test(path))?.template;
}

function hintForPath(path: string): string {
  const near = didYouMean(path, Object.keys(loadSpec().paths));
  return near === undefined ? "" : ` (did you mean ${near}?)`;
}

function valueAt(data: unknown, pointer: string): unknown {
  let v: unknown = data;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    v = isRecord(v) ? v[key] : Array.isArray(v) ? v[Number(key)] : undefined;
  }
  return v;
}

function describe(errors: ErrorObject[], where: string, data: unknown): string[] {
  const out = new Set<string>();
  for (const e of errors) {
    const at = `${where}${e.instancePath.replaceAll("/", ".")}`;
    const got = valueAt(data, e.instancePath);
    const shown = JSON.stringify(got)?.slice(0, 80) ?? "undefined";
    if (e.keyword === "enum") {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues
        .map((a) => JSON.stringify(a))
        .join(", ");
      out.add(`${at}: ${shown} is not one of ${allowed}`);
    } else if (e.keyword === "required") {
      out.add(
        `${at}: missing required field \`${(e.params as { missingProperty: string }).missingProperty}\``,
      );
    } else if (e.keyword === "additionalProperties") {
      out.add(`${at}: unknown field \`${(e.params as { additionalProperty: string }).additionalProperty}\``);
    } else {
      out.add(`${at}: ${e.message ?? e.keyword} (got ${shown})`);
    }
  }
  return [...out];
}

/** Property names a schema declares, across `allOf`/`anyOf`/`oneOf`; undefined when it accepts any key. */
function declaredProperties(schema: Json): Map<string, Json[]> | undefined {
  if (!isRecord(schema)) return undefined;
  const s = schema as Schema;
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) return undefined;
  const out = new Map<string, Json[]>();
  let declaresAny = false;
  if (isRecord(s.properties)) {
    declaresAny = true;
    for (const [k, v] of Object.entries(s.properties as Schema)) out.set(k, [...(out.get(k) ?? []), v]);
  }
  for (const combinator of ["allOf", "anyOf", "oneOf"]) {
    const branches = s[combinator];
    if (!Array.isArray(branches)) continue;
    for (const branch of branches) {
      if (
        isRecord(branch) &&
        branch.type !== undefined &&
        branch.type !== "object" &&
        !Array.isArray(branch.type)
      ) {
        continue; // a string/array branch says nothing about object keys
      }
      // With properties of its own, a schema's branches only add constraints (GitHub's check-run
      // update says `anyOf: [{status: completed, required: [conclusion], additionalProperties: true}]`):
      // their openness does not open the parent.
      const inner = declaredProperties(
        declaresAny && isRecord(branch) ? { ...(branch as Schema), additionalProperties: false } : branch,
      );
      if (inner === undefined) {
        if (declaresAny) continue;
        return undefined;
      }
      declaresAny ||= inner.size > 0;
      for (const [k, v] of inner) out.set(k, [...(out.get(k) ?? []), ...v]);
    }
  }
  return declaresAny ? out : undefined;
}

/** Fields in `data` that the schema does not declare (GitHub silently drops those: usually a typo). */
function unknownFields(schema: Json, data: unknown, at: string): string[] {
  const out: string[] = [];
  if (Array.isArray(data)) {
    const items = isRecord(schema) ? (schema as Schema).items : undefined;
    if (items !== undefined) {
      for (const [i, d] of data.entries()) out.push(...unknownFields(items, d, `${at}[${i}]`));
    }
    return out;
  }
  if (!isRecord(data)) return out;
  const declared = declaredProperties(schema);
  if (declared === undefined) return out;
  for (const [k, v] of Object.entries(data)) {
    const schemas = declared.get(k);
    if (schemas === undefined) out.push(`${at}.${k}`);
    else out.push(...unknownFields(schemas[0]!, v, `${at}.${k}`));
  }
  return out;
}

interface HookableOctokit {
  hook: { before(name: "request", fn: (options: Record<string, unknown>) => void): void };
}

/** The JSON body Octokit will send for these request options, if any (mirrors @octokit/endpoint). */
function bodyOf(options: Record<string, unknown>): unknown {
  const method = String(options.method).toUpperCase();
  if (method === "GET" || method === "HEAD") return undefined;
  const vars = new Set(templateVariables(String(options.url)));
  const rest = Object.fromEntries(
    Object.entries(options).filter(([k]) => !OCTOKIT_KEYS.has(k) && !vars.has(k)),
  );
  if ("data" in rest) return rest.data;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** Validates every request of this Octokit instance before it is sent. Returns the instance. */
export function withOpenApiValidation<T extends HookableOctokit>(octokit: T): T {
  octokit.hook.before("request", (options) => {
    validateAgainstOpenApi(String(options.method), String(options.url), bodyOf(options), options);
  });
  return octokit;
}

/** The same as an Octokit plugin, for `ProbotOctokit.plugin(openApiValidation)`: every instance, including installation clients. */
export function openApiValidation(octokit: unknown): void {
  withOpenApiValidation(octokit as HookableOctokit);
}

// ---------------------------------------------------------------------------------------------
// Probot

/**
 * Probot's Octokit for tests: no retries, no throttling (a failure shows at once), every request
 * validated against GitHub's OpenAPI description. Octokit plugins apply in every constructor, and
 * Probot builds both its app client and installation clients from this class (with a token, the
 * event client is the app client itself), so nothing escapes validation.
 */
export const TestOctokit = ProbotOctokit.plugin(openApiValidation).defaults(
  (options: Record<string, unknown>) => ({
    ...options,
    retry: { enabled: false },
    throttle: { enabled: false },
  }),
) as typeof ProbotOctokit;

/**
 * Rate-limit waits GitHub asked for (seconds, as the throttling plugin read them), in order, with
 * when the plugin asked (ms since the epoch), to check a wait computed from `x-ratelimit-reset`.
 */
export const rateLimitWaits: Array<{ kind: "primary" | "secondary"; retryAfter: number; at: number }> = [];

/** A Bottleneck group stand-in that runs every job at once: no minimum time between writes. */
const unthrottled = {
  key: () => ({
    schedule: (_options: unknown, job: (...args: unknown[]) => unknown, ...args: unknown[]) =>
      Promise.resolve().then(() => job(...args)),
  }),
};

/**
 * Probot's Octokit as production runs it, retries and rate-limit handling on (each wait recorded
 * in `rateLimitWaits`, then retried as Probot does), but with every wait a thousand times
 * shorter: a second becomes a millisecond. Requests are validated like TestOctokit's.
 */
export const ResilientTestOctokit = ProbotOctokit.plugin(openApiValidation).defaults(
  (options: Record<string, unknown>) => ({
    ...options,
    retry: { enabled: true, retryAfterBaseValue: 1 },
    throttle: {
      enabled: true,
      retryAfterBaseValue: 1,
      global: unthrottled,
      auth: unthrottled,
      write: unthrottled,
      search: unthrottled,
      notifications: unthrottled,
      onRateLimit: (retryAfter: number) => {
        rateLimitWaits.push({ kind: "primary", retryAfter, at: Date.now() });
        return true;
      },
      onSecondaryRateLimit: (retryAfter: number) => {
        rateLimitWaits.push({ kind: "secondary", retryAfter, at: Date.now() });
        return true;
      },
    },
  }),
) as typeof ProbotOctokit;

/** A Probot authenticated with a fixed token ("test"), with `app` loaded when given. */
export async function createTestProbot(
  app?: ApplicationFunction,
  options: { resilient?: boolean } = {},
): Promise<Probot> {
  const probot = new Probot({
    githubToken: "test",
    Octokit: options.resilient ? ResilientTestOctokit : TestOctokit,
    logLevel: "warn",
  });
  if (app !== undefined) await probot.load(app);
  else await probot.ready();
  return probot;
}

// ---------------------------------------------------------------------------------------------
// nock

export interface SeenRequest {
  method: string;
  url: string;
  body?: unknown;
}

export interface GitHubMock {
  /** Interceptors on https://api.github.com. */
  api: nock.Scope;
  /** Interceptors on another origin, e.g. `https://codeload.github.com` for tarball redirects. */
  scope(origin: string): nock.Scope;
  /** Requests that reached nock, matched or not, in order. */
  readonly requests: SeenRequest[];
  /** Fails listing unused interceptors, unmatched requests and OpenAPI violations; then resets nock. */
  assertDone(): void;
  /** Resets nock without checking (for `after` hooks of tests that already failed). */
  reset(): void;
}

const LOCAL_HOST = /^(127\.0\.0\.1|localhost|\[::1\]|::1)(:\d+)?$/i;

function describeUnmatched(args: unknown[]): SeenRequest | undefined {
  // nock emits `no match` with a ClientRequest, request options, or both (and the body).
  const [first, second, body] = args as [
    Record<string, unknown>,
    Record<string, unknown> | undefined,
    unknown,
  ];
  const o = second !== undefined && typeof second === "object" && "host" in second ? second : first;
  const host = String(o.host ?? o.hostname ?? "");
  if (LOCAL_HOST.test(host)) return undefined;
  const proto = String(o.protocol ?? o.proto ?? "https").replace(/:$/, "");
  const path = String(o.path ?? "");
  return {
    method: String(o.method ?? "GET").toUpperCase(),
    url: `${proto}://${host.replace(/:443$/, "")}${path}`,
    body,
  };
}

/**
 * Starts strict mocking of GitHub. Only one mock may be active at a time (nock is global).
 * Call `assertDone()` at the end of each test, typically in `afterEach`.
 */
export function mockGitHub(): GitHubMock {
  nock.disableNetConnect();
  nock.enableNetConnect((host: string) => LOCAL_HOST.test(host));
  takeOpenApiViolations();

  const scopes: nock.Scope[] = [];
  const requests: SeenRequest[] = [];
  const unmatched: SeenRequest[] = [];
  const onNoMatch = (...args: unknown[]) => {
    const r = describeUnmatched(args);
    if (r !== undefined) {
      unmatched.push(r);
      requests.push({ ...r, url: `${r.url} (no match)` });
    }
  };
  nock.emitter.on("no match", onNoMatch);

  const scope = (origin: string): nock.Scope => {
    const s = nock(origin);
    s.on("request", (req: ClientRequest, _interceptor: unknown, body: string) => {
      requests.push({ method: req.method, url: `${origin}${req.path}`, body: parseBody(body) });
    });
    scopes.push(s);
    return s;
  };

  const reset = () => {
    nock.emitter.removeListener("no match", onNoMatch);
    nock.cleanAll();
    takeOpenApiViolations();
  };

  return {
    api: scope(GITHUB_API),
    scope,
    requests,
    assertDone() {
      const pending = scopes.flatMap((s) => s.pendingMocks());
      const problems: string[] = [];
      if (pending.length > 0)
        problems.push(`mocks never called:\n${pending.map((p) => `    ${p}`).join("\n")}`);
      if (unmatched.length > 0) {
        problems.push(
          `requests without a mock:\n${unmatched.map((r) => `    ${r.method} ${r.url}${bodyText(r.body)}`).join("\n")}`,
        );
      }
      const bad = takeOpenApiViolations();
      if (bad.length > 0)
        problems.push(`requests GitHub would reject:\n${bad.map((v) => `    ${v.message}`).join("\n")}`);
      reset();
      if (problems.length > 0) {
        const seen = requests.map((r) => `    ${r.method} ${r.url}`).join("\n") || "    (none)";
        throw new Error(`GitHub mock not satisfied:\n  ${problems.join("\n  ")}\n  requests made:\n${seen}`);
      }
    },
    reset,
  };
}

function parseBody(body: string | undefined): unknown {
  if (body === undefined || body === "") return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

function bodyText(body: unknown): string {
  if (body === undefined || body === "") return "";
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return ` ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`;
}
