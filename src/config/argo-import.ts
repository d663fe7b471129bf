// Converts an Argo CD Application (argoproj.io/v1alpha1) into a syncward environment: the YAML to
// paste under `environments:` in .github/syncward.yml, and the environment it parses to. What has
// no syncward equivalent either fails the import with a clear reason (multi-source beyond one path or
// chart and its value references, plugins, Kustomize overrides, jsonnet) or is
// dropped with a note (project, repoURL, unknown options). Helm sources keep Argo CD's field names.
import { stringify } from "yaml";
import { formatPath } from "./config-error.ts";
import { formatDuration } from "./duration.ts";
import { parseYamlSafely } from "./safe-yaml.ts";
import { SYNC_OPTION_STRINGS, safeParseConfig } from "./schema.ts";
import type { EnvironmentConfig } from "./types.ts";

export interface ArgoImport {
  /** YAML of one environment, as a list item to paste under `environments:` (notes as comments). */
  yaml: string;
  /** The environment that YAML parses to, with every default filled. */
  environment: EnvironmentConfig;
  /** What was changed, assumed or dropped on the way, for the person importing. */
  notes: string[];
}

/** An Application that cannot be imported; `problems` lists every reason. */
export class ArgoImportError extends Error {
  override readonly name = "ArgoImportError";
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`cannot import the Argo CD Application:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.problems = problems;
  }
}

const IN_CLUSTER_SERVER = /^https:\/\/kubernetes\.default\.svc(?:\.cluster\.local)?(?::443)?\/?$/;
const SOURCE_TYPES_REFUSED: Record<string, string> = {
  plugin: "config management plugins (spec.source.plugin) are not supported",
};
const KNOWN_SPEC_FIELDS = new Set([
  "project",
  "source",
  "sources",
  "destination",
  "syncPolicy",
  "ignoreDifferences",
  "revisionHistoryLimit",
  "info",
  "sourceHydrator",
]);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Converts the YAML (or JSON) text of one Argo CD Application.
 * @throws ConfigError when the text is not safe, valid YAML; ArgoImportError when the Application
 * uses what syncward does not support or does not yield a valid environment.
 */
export function importArgoApplication(yamlText: string): ArgoImport {
  const { data: app } = parseYamlSafely(yamlText, "Application");
  const problems: string[] = [];
  const notes: string[] = [];
  if (!isObject(app)) throw new ArgoImportError(["expected a YAML mapping (one Application)"]);
  if (app.apiVersion !== "argoproj.io/v1alpha1" || app.kind !== "Application") {
    throw new ArgoImportError([
      `expected apiVersion argoproj.io/v1alpha1 and kind Application, got ${JSON.stringify(app.apiVersion)} ${JSON.stringify(app.kind)}`,
    ]);
  }
  const metadata = isObject(app.metadata) ? app.metadata : {};
  const spec = isObject(app.spec) ? app.spec : {};

  const env: Json = { name: environmentName(metadata.name, problems, notes) };
  env.source = importSource(spec, problems, notes);
  const helm = (env.source as Json).helm as Json | undefined;
  if (
    helm &&
    helm.releaseName === undefined &&
    typeof metadata.name === "string" &&
    metadata.name !== env.name
  ) {
    // Argo CD names the release after the Application; syncward after the environment.
    helm.releaseName = metadata.name;
  }
  env.destination = importDestination(spec.destination, problems, notes);
  const syncPolicy = importSyncPolicy(spec.syncPolicy, problems, notes);
  if (syncPolicy) env.syncPolicy = syncPolicy;
  if (Array.isArray(spec.ignoreDifferences) && spec.ignoreDifferences.length > 0) {
    env.ignoreDifferences = spec.ignoreDifferences.map((d, i) => importIgnoreDifference(d, i, problems));
  }
  if (spec.revisionHistoryLimit !== undefined) env.revisionHistoryLimit = spec.revisionHistoryLimit;

  if (typeof spec.project === "string" && spec.project !== "default") {
    notes.push(
      `project ${JSON.stringify(spec.project)}: AppProject rules (destinations, resource allow lists, sync windows) are not imported; express them with policy and syncWindows`,
    );
  }
  if (spec.sourceHydrator !== undefined)
    problems.push("source hydrator (spec.sourceHydrator) is not supported");
  for (const key of Object.keys(spec)) {
    if (!KNOWN_SPEC_FIELDS.has(key)) notes.push(`spec.${key} has no syncward equivalent and was dropped`);
  }
  if (problems.length > 0) throw new ArgoImportError(problems);

  const header = [
    `# Imported from Argo CD Application ${JSON.stringify(String(metadata.name ?? ""))}: paste under \`environments:\` in .github/syncward.yml`,
    ...notes.map((note) => `# NOTE: ${note}`),
  ];
  const yaml = `${header.join("\n")}\n${stringify([env], { lineWidth: 0 })}`;

  // Validate the text the user will paste, not only the object it came from.
  const pasted = parseYamlSafely(yaml, "imported environment").data;
  const result = safeParseConfig({ environments: pasted });
  if (!result.success) {
    throw new ArgoImportError(
      result.issues.map((issue) => {
        const where = formatPath(issue.path.slice(2));
        return `${where === "" ? "environment" : where}: ${issue.message}`;
      }),
    );
  }
  const environment = result.data.environments[0];
  if (!environment) throw new ArgoImportError(["the import produced no environment"]);
  return { yaml, environment, notes };
}

function environmentName(name: unknown, problems: string[], notes: string[]): string {
  if (typeof name !== "string" || name === "") {
    problems.push("metadata.name is required");
    return "";
  }
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  if (cleaned === "")
    problems.push(`metadata.name ${JSON.stringify(name)} cannot be made into an environment name`);
  else if (cleaned !== name) notes.push(`name ${JSON.stringify(name)} became ${JSON.stringify(cleaned)}`);
  return cleaned;
}

/**
 * `sources` that amount to one source: a single entry, or one path (a chart) beside `ref` entries of the
 * same repository whose `$ref/...` value files become repository-root paths.
 */
function singleSource(
  sources: unknown[],
): { source: Json; refs: Map<string, string>; refRevision?: unknown } | undefined {
  const withPath = sources.filter(
    (s): s is Json => isObject(s) && (s.path !== undefined || s.chart !== undefined),
  );
  const refs = sources.filter(
    (s): s is Json => isObject(s) && typeof s.ref === "string" && s.path === undefined,
  );
  const only = withPath[0];
  if (withPath.length !== 1 || !only || withPath.length + refs.length !== sources.length) return undefined;
  // A path's value references must be its own repository at its revision; a chart from a chart
  // repository takes its value files from one repository (this one) at one revision (its branch).
  const [first] = refs;
  const same = (r: Json, to: Json) =>
    r.repoURL === to.repoURL && (r.targetRevision ?? "") === (to.targetRevision ?? "");
  if (refs.some((r) => !same(r, typeof only.chart === "string" && first ? first : only))) return undefined;
  return {
    source: only,
    refs: new Map(refs.map((r) => [String(r.ref), String(r.repoURL)])),
    refRevision: first?.targetRevision,
  };
}

function importSource(spec: Json, problems: string[], notes: string[]): Json {
  let source = spec.source;
  let refs = new Map<string, string>();
  let refRevision: unknown;
  if (Array.isArray(spec.sources) && spec.sources.length > 0) {
    const single = singleSource(spec.sources);
    if (!single) {
      const kinds = spec.sources.map((s: unknown, i) => `sources[${i}]: ${describeSource(s)}`);
      problems.push(
        `multi-source applications (spec.sources) are not supported beyond one path or chart and value references from one repository and revision: syncward deploys one source per environment (${kinds.join("; ")})`,
      );
      return { path: "." };
    }
    source = single.source;
    refs = single.refs;
    refRevision = single.refRevision;
  }
  if (!isObject(source)) {
    problems.push("spec.source is required");
    return { path: "." };
  }
  for (const [key, reason] of Object.entries(SOURCE_TYPES_REFUSED)) {
    if (source[key] !== undefined && source[key] !== "") problems.push(reason);
  }
  if (isObject(source.kustomize) && Object.keys(source.kustomize).length > 0) {
    problems.push(
      `Kustomize overrides in the Application (spec.source.kustomize: ${Object.keys(source.kustomize).join(", ")}) are not supported: move them into kustomization.yaml`,
    );
  }
  if (isObject(source.directory)) {
    const { recurse, ...rest } = source.directory;
    const refused = Object.keys(rest).filter((k) => rest[k] !== undefined && rest[k] !== "");
    if (refused.length > 0) {
      problems.push(
        `directory options (spec.source.directory: ${refused.join(", ")}) are not supported: syncward reads the directory's manifests or its kustomization`,
      );
    }
    if (recurse === true)
      notes.push(
        "spec.source.directory.recurse: check that the manifests of subdirectories are still included",
      );
  }
  const remote = typeof source.chart === "string" && source.chart !== "";
  if (remote) {
    notes.push(
      `chart ${source.chart} comes from ${String(source.repoURL)}: the operator must allow that chart repository (SYNCWARD_HELM_REPOSITORIES)`,
    );
    if (refs.size > 0)
      notes.push(
        `value files come from ${[...new Set(refs.values())].join(", ")}: keep this file in that repository`,
      );
  } else if (typeof source.repoURL === "string") {
    notes.push(
      `repoURL ${source.repoURL}: syncward deploys from the repository it reads this file from; keep this file in that repository`,
    );
  }

  let path = typeof source.path === "string" ? source.path.trim() : "";
  path = path.replace(/^(?:\.\/)+/, "").replace(/\/+$/, "");
  if (path === "") path = ".";
  const out: Json = remote
    ? {
        path,
        branch: branchOf(refRevision, notes),
        chart: source.chart,
        repoURL: source.repoURL,
        targetRevision: source.targetRevision,
      }
    : { path, branch: branchOf(source.targetRevision, notes) };
  if (source.helm !== undefined) {
    const helm = importHelm(source.helm, refs, problems, notes);
    if (helm) out.helm = helm;
  } else if (refs.size > 0 && typeof source.chart !== "string") {
    notes.push(
      `value references (${[...refs.keys()].join(", ")}) are unused without spec.source.helm and were dropped`,
    );
  }
  return out;
}

/** Argo CD's source.helm fields that syncward takes as they are. */
const HELM_FIELDS = [
  "releaseName",
  "ignoreMissingValueFiles",
  "values",
  "valuesObject",
  "parameters",
  "fileParameters",
  "skipCrds",
  "skipTests",
  "namespace",
  "kubeVersion",
  "apiVersions",
  "passCredentials",
];

function importHelm(
  input: unknown,
  refs: Map<string, string>,
  problems: string[],
  notes: string[],
): Json | undefined {
  if (!isObject(input)) {
    problems.push("spec.source.helm must be a mapping");
    return undefined;
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined || value === null || value === "") continue;
    if (HELM_FIELDS.includes(key)) {
      if (key === "valuesObject" && isObject(value) && Object.keys(value).length === 0) continue;
      if (
        (key === "parameters" || key === "fileParameters" || key === "apiVersions") &&
        Array.isArray(value) &&
        value.length === 0
      )
        continue;
      out[key] = value;
    } else if (key === "valueFiles" && Array.isArray(value)) {
      out.valueFiles = value.map((file) => {
        const text = String(file);
        const ref = /^\$([^/]+)\/(.*)$/.exec(text);
        if (!ref) return text;
        if (!refs.has(ref[1] ?? "")) {
          problems.push(`spec.source.helm.valueFiles: ${text} names no ref source`);
          return text;
        }
        return `/${ref[2]}`;
      });
    } else if (key === "version") {
      if (value !== "v3") notes.push(`helm.version ${JSON.stringify(value)}: syncward renders with Helm v3`);
    } else notes.push(`spec.source.helm.${key} has no syncward equivalent and was dropped`);
  }
  return out;
}

function describeSource(source: unknown): string {
  if (!isObject(source)) return "not a mapping";
  if (typeof source.chart === "string") return `Helm chart ${JSON.stringify(source.chart)}`;
  if (source.helm !== undefined) return `Helm at ${JSON.stringify(source.path ?? "")}`;
  if (source.plugin !== undefined) return "plugin";
  if (typeof source.ref === "string" && source.path === undefined)
    return `values reference ${JSON.stringify(source.ref)}`;
  return `path ${JSON.stringify(source.path ?? "")}`;
}

function branchOf(targetRevision: unknown, notes: string[]): string {
  const revision = typeof targetRevision === "string" ? targetRevision.trim() : "";
  if (revision === "" || revision === "HEAD") {
    notes.push(
      `targetRevision ${revision === "" ? "(empty)" : "HEAD"} means the default branch; assumed "main" (change branch if yours differs)`,
    );
    return "main";
  }
  if (revision.startsWith("refs/heads/")) return revision.slice("refs/heads/".length);
  if (/^[0-9a-f]{7,40}$/.test(revision)) {
    notes.push(
      `targetRevision ${revision} looks like a commit SHA; syncward tracks a branch, so it was kept as the branch name: replace it with the branch to deploy`,
    );
  } else if (revision.startsWith("refs/tags/") || /^v?\d+(?:\.\d+)+/.test(revision)) {
    notes.push(
      `targetRevision ${revision} looks like a tag; syncward tracks a branch, so it was kept as the branch name: replace it with the branch to deploy`,
    );
  }
  return revision;
}

function importDestination(destination: unknown, problems: string[], notes: string[]): Json {
  if (!isObject(destination)) {
    problems.push("spec.destination is required");
    return {};
  }
  const out: Json = {};
  if (typeof destination.namespace === "string" && destination.namespace !== "") {
    out.namespace = destination.namespace;
  } else {
    problems.push(
      "spec.destination.namespace is empty: syncward needs a destination namespace (objects that name their own namespace keep it, within policy.namespaces)",
    );
  }
  const server = typeof destination.server === "string" ? destination.server : "";
  const name = typeof destination.name === "string" ? destination.name : "";
  if (IN_CLUSTER_SERVER.test(server) || name === "in-cluster") {
    out.inCluster = true;
  } else if (name !== "") {
    out.cluster = name;
    notes.push(
      `destination.name ${JSON.stringify(name)} became destination.cluster: a cluster of syncward's registry (syncward import-argo converts Argo CD's cluster Secret) or a kubeconfig context of that name`,
    );
  } else if (server !== "") {
    notes.push(
      `destination.server ${server}: set destination.cluster to the name of that cluster in syncward's registry (without it, syncward's own cluster is used)`,
    );
  }
  return out;
}

function importSyncPolicy(input: unknown, problems: string[], notes: string[]): Json | undefined {
  if (input !== undefined && !isObject(input)) {
    problems.push("spec.syncPolicy must be a mapping");
    return undefined;
  }
  const policy: Json = input ?? {};
  const out: Json = {};
  const automated = policy.automated;
  if (isObject(automated)) {
    out.automated = {
      prune: automated.prune === true,
      selfHeal: automated.selfHeal === true,
      allowEmpty: automated.allowEmpty === true,
      ...(automated.enabled === false ? { enabled: false } : {}),
    };
  }

  if (Array.isArray(policy.syncOptions)) {
    const kept: string[] = [];
    for (const option of policy.syncOptions) {
      const text = typeof option === "string" ? option.trim() : String(option);
      if (SYNC_OPTION_STRINGS.includes(text)) kept.push(text);
      else notes.push(`sync option ${JSON.stringify(text)} has no syncward equivalent and was dropped`);
    }
    if (kept.length > 0) out.syncOptions = kept;
  }
  const ssa =
    Array.isArray(out.syncOptions) && out.syncOptions.some((o) => String(o).startsWith("ServerSideApply="));
  if (!ssa)
    notes.push(
      "Argo CD applied client-side unless ServerSideApply=true; syncward applies server-side by default",
    );

  if (isObject(policy.retry)) {
    const retry = policy.retry;
    const imported: Json = {};
    if (retry.limit === undefined) {
      imported.limit = 0;
      notes.push(
        "retry without limit does not retry in Argo CD: imported as limit: 0 (raise it to retry failed syncs)",
      );
    } else imported.limit = typeof retry.limit === "string" ? Number(retry.limit) : retry.limit;
    if (isObject(retry.backoff)) {
      const backoff: Json = {};
      for (const key of ["duration", "maxDuration"] as const) {
        const value = retry.backoff[key];
        if (value === undefined || value === "") continue;
        const text = argoDuration(value);
        if (text === undefined)
          problems.push(`spec.syncPolicy.retry.backoff.${key}: ${JSON.stringify(value)} is not a duration`);
        else backoff[key] = text;
      }
      if (retry.backoff.factor !== undefined) backoff.factor = retry.backoff.factor;
      if (Object.keys(backoff).length > 0) imported.backoff = backoff;
    }
    if (retry.refresh === true) imported.refresh = true;
    out.retry = imported;
  } else {
    notes.push(
      "Argo CD did not retry failed syncs of this Application (no syncPolicy.retry); syncward retries 5 times by default",
    );
  }
  const nsMeta = policy.managedNamespaceMetadata;
  if (isObject(nsMeta)) {
    const meta: Json = {};
    for (const key of ["labels", "annotations"] as const) if (isObject(nsMeta[key])) meta[key] = nsMeta[key];
    out.managedNamespaceMetadata = meta;
  } else if (nsMeta !== undefined)
    problems.push("spec.syncPolicy.managedNamespaceMetadata must be a mapping");
  return Object.keys(out).length > 0 ? out : undefined;
}

const IGNORE_FIELDS = [
  "group",
  "kind",
  "name",
  "namespace",
  "jsonPointers",
  "jqPathExpressions",
  "managedFieldsManagers",
];

function importIgnoreDifference(entry: unknown, index: number, problems: string[]): Json {
  if (!isObject(entry)) {
    problems.push(`spec.ignoreDifferences[${index}] must be a mapping`);
    return {};
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(entry)) {
    if (IGNORE_FIELDS.includes(key)) {
      if (!(key === "group" && value === "")) out[key] = value;
    } else problems.push(`spec.ignoreDifferences[${index}].${key} is not supported`);
  }
  return out;
}

const GO_UNIT_MS: Record<string, number> = {
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
  us: 1e-3,
  µs: 1e-3,
  ns: 1e-6,
};

/** An Argo CD duration (Go duration, or a bare number of seconds) as a syncward duration string. */
function argoDuration(value: unknown): string | undefined {
  const text = String(value).trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1_000;
  else {
    if (!/^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:h|ms|m|s|us|µs|ns))+$/.test(text)) return undefined;
    ms = 0;
    for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)/g)) {
      ms += Number(amount) * (GO_UNIT_MS[unit ?? ""] ?? Number.NaN);
    }
  }
  if (!Number.isFinite(ms) || ms <= 0) return undefined;
  return formatDuration(Math.max(1, Math.round(ms)));
}
