// The schema of `.github/syncward.yml`: the single source of truth for the parsed types (checked
// against src/config/types.ts below), the validation messages and the published JSON Schema
// (tools/gen-schema.ts writes schema/syncward.schema.json from the input side of this schema).
//
// Field names and defaults follow Argo CD's Application spec. Where syncward differs on purpose:
// - retry is always on: `retry` absent means limit 5, backoff 5s x2 up to 3m (Argo CD: no retry,
//   and `retry` without `limit` means 0 retries);
// - ServerSideApply defaults to true (Argo CD: client-side apply unless ServerSideApply=true);
// - unknown fields and unknown sync options are errors (Argo CD ignores them);
// - sync windows belong to the environment (Argo CD: to the AppProject, matched by name).
import { z } from "zod";
import { luaSyntaxProblem } from "../lua/syntax.ts";
import { didYouMeanHint } from "./did-you-mean.ts";
import {
  previewEnvironmentsSchema,
  previewTemplateIssues,
  type previewTemplateSchema,
} from "./preview-schema.ts";
import { promotionIssues } from "./promotion-graph.ts";
import { rollbackIssues } from "./rollback-rule.ts";
import { scheduleProblem, timeZoneProblem } from "./schedule.ts";
import { dnsLabel, duration, integer, LABEL_RE, nonEmpty, strictObject } from "./schema-parts.ts";
import type {
  ApprovalRule,
  EnvironmentConfig,
  HelmSource,
  IgnoreDifference,
  PreviewTemplate,
  PromotionRule,
  RetryPolicy,
  RollbackRule,
  SyncOptions,
  SyncPolicy,
  SyncWindow,
  SyncwardConfig,
} from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Building blocks

// ---------------------------------------------------------------------------------------------
// Sync options: Argo CD's "Name=value" strings, parsed to an object with every option set.

const BOOLEAN_SYNC_OPTIONS = [
  "CreateNamespace",
  "ApplyOutOfSyncOnly",
  "PruneLast",
  "RespectIgnoreDifferences",
  "ServerSideApply",
  "Replace",
  "FailOnSharedResource",
  "Validate",
  "SkipDryRunOnMissingResource",
] as const;
const PROPAGATION_POLICIES = ["foreground", "background", "orphan"] as const;
const SYNC_OPTION_NAMES = [...BOOLEAN_SYNC_OPTIONS, "PrunePropagationPolicy"] as const;

/** Every sync option at its default: all off except ServerSideApply and Validate; foreground. */
export const SYNC_OPTION_DEFAULTS: Readonly<SyncOptions> = Object.freeze({
  CreateNamespace: false,
  ApplyOutOfSyncOnly: false,
  PruneLast: false,
  PrunePropagationPolicy: "foreground",
  RespectIgnoreDifferences: false,
  ServerSideApply: true,
  Replace: false,
  FailOnSharedResource: false,
  Validate: true,
});

/** Every accepted sync option string, e.g. "CreateNamespace=true". */
export const SYNC_OPTION_STRINGS: readonly string[] = [
  ...BOOLEAN_SYNC_OPTIONS.flatMap((name) => [`${name}=true`, `${name}=false`]),
  ...PROPAGATION_POLICIES.map((policy) => `PrunePropagationPolicy=${policy}`),
];

function syncOptionProblem(input: unknown): string {
  if (typeof input !== "string") return 'must be a string like "CreateNamespace=true"';
  const eq = input.indexOf("=");
  const name = (eq < 0 ? input : input.slice(0, eq)).trim();
  const value = eq < 0 ? undefined : input.slice(eq + 1).trim();
  const known = (SYNC_OPTION_NAMES as readonly string[]).includes(name);
  if (!known) {
    return `unknown sync option ${JSON.stringify(name)}${didYouMeanHint(name, SYNC_OPTION_NAMES)}; known options: ${SYNC_OPTION_NAMES.join(", ")}`;
  }
  if (name === "PrunePropagationPolicy") {
    return `must be PrunePropagationPolicy=foreground, =background or =orphan, got ${JSON.stringify(input)}`;
  }
  if (value === undefined) return `must be written ${name}=true or ${name}=false`;
  return `${name} must be true or false, got ${JSON.stringify(value)}`;
}

const syncOptions = z
  .array(
    z.enum(SYNC_OPTION_STRINGS as [string, ...string[]], {
      error: (issue) => syncOptionProblem(issue.input),
    }),
  )
  .default([])
  .transform((list, ctx): SyncOptions => {
    const options: Record<string, string | boolean> = { ...SYNC_OPTION_DEFAULTS };
    const seen = new Map<string, number>();
    for (const [index, text] of list.entries()) {
      const [name = "", value = ""] = text.split("=");
      const earlier = seen.get(name);
      if (earlier !== undefined && list[earlier] !== text) {
        ctx.issues.push({
          code: "custom",
          input: text,
          path: [index],
          message: `conflicts with syncOptions[${earlier}] (${JSON.stringify(list[earlier])})`,
        });
      }
      seen.set(name, index);
      options[name] = name === "PrunePropagationPolicy" ? value : value === "true";
    }
    return options as unknown as SyncOptions;
  })
  .describe(
    `Argo CD sync options as "Name=value" strings. Defaults: ${SYNC_OPTION_STRINGS.filter((s) => {
      const [name, value] = s.split("=");
      return String(SYNC_OPTION_DEFAULTS[name as keyof SyncOptions]) === value;
    }).join(", ")}.`,
  );

// ---------------------------------------------------------------------------------------------
// Sync policy

const automated = strictObject({
  prune: z.boolean().default(false).describe("Delete live resources that are no longer in Git."),
  selfHeal: z
    .boolean()
    .default(false)
    .describe("Re-apply when the live state drifts from Git, not only when Git changes."),
  allowEmpty: z
    .boolean()
    .default(false)
    .describe("Allow a prune that would delete every managed resource (refused by default)."),
  enabled: z
    .boolean()
    .optional()
    .describe("false: keep these settings but sync manually only (Argo CD's automated.enabled)."),
}).describe(
  "Sync automatically when the environment is OutOfSync. Absent: manual syncs only. Write `automated: {}` for automated sync with every flag off.",
);

const backoff = strictObject({
  duration: duration(1)
    .prefault("5s")
    .describe("Wait before the first retry (Go-style duration, default 5s)."),
  factor: z
    .number({ error: (issue) => (issue.input === undefined ? undefined : "must be a number >= 1") })
    .min(1, { error: "must be a number >= 1" })
    .max(100, { error: "must be a number <= 100" })
    .default(2)
    .describe("Multiplier of the wait after each failed retry (default 2)."),
  maxDuration: duration(1).prefault("3m").describe("Longest wait between retries (default 3m)."),
})
  .refine(
    (b) =>
      !(typeof b.duration === "number" && typeof b.maxDuration === "number" && b.maxDuration < b.duration),
    {
      path: ["maxDuration"],
      error: "must not be shorter than backoff.duration",
    },
  )
  .prefault({})
  .describe("Wait before retry n (from 0) = duration x factor^n, capped at maxDuration.");

const retry = strictObject({
  limit: z
    .int({ error: (issue) => (issue.input === undefined ? undefined : "must be an integer >= -1") })
    .min(-1, { error: "must be an integer >= -1 (-1 retries forever, 0 never)" })
    .default(5)
    .describe("Retries after a failed sync: -1 forever, 0 never (default 5; Argo CD's default is 0)."),
  backoff,
  refresh: z
    .boolean()
    .optional()
    .describe(
      "Each retry syncs the branch's newest commit instead of the failed one, which must pass every gate again (signatures, windows, freeze, approval).",
    ),
})
  .prefault({})
  .describe("Retry of failed syncs. Always on: absent means limit 5 with backoff 5s x2 up to 3m.");

const pruneLimitProblem = (issue: { input?: unknown }) =>
  `must be a whole number >= 0 or a percentage from "0%" to "100%" (got ${describeInput(issue.input)})`;
const pruneLimit = z
  .union(
    [
      z.int({ error: pruneLimitProblem }).min(0, { error: pruneLimitProblem }),
      z.string().regex(/^(?:100|[1-9]?\d)%$/, { error: pruneLimitProblem }),
    ],
    { error: pruneLimitProblem },
  )
  .describe(
    'Refuse a sync that would prune more than this many managed objects, or this share of them ("20%").',
  );

const managedNamespaceMetadata = strictObject({
  labels: z.record(z.string(), z.string()).optional().describe("Labels of the created namespace."),
  annotations: z.record(z.string(), z.string()).optional().describe("Annotations of the created namespace."),
}).describe(
  "Labels and annotations of the namespace CreateNamespace=true creates (Argo CD's field of the same name).",
);

const syncPolicy = strictObject({
  automated: automated.optional(),
  managedNamespaceMetadata: managedNamespaceMetadata.optional(),
  syncOptions,
  retry,
  pruneLimit: pruneLimit.optional(),
  healthTimeout: duration(1_000)
    .optional()
    .describe(
      "How long a wave may take to become Healthy before the sync fails, naming what it waited for (Go-style duration, default 5m; Flux's `timeout`).",
    ),
})
  .prefault({})
  .describe("When and how to sync, as in Argo CD's Application spec.syncPolicy.");

// ---------------------------------------------------------------------------------------------
// ignoreDifferences, sync windows, approval, policy

const jsonPointer = z.string().regex(/^(?:\/(?:[^~/]|~[01])*)+$/, {
  error: (issue) =>
    `must be a JSON pointer like "/spec/replicas" ("~1" for "/" and "~0" for "~" inside a key), got ${JSON.stringify(issue.input)}`,
});

const ignoreDifference = strictObject({
  group: z.string().default("").describe('API group; "" (default) is the core group.'),
  kind: nonEmpty().describe("Kind, e.g. Deployment."),
  name: nonEmpty().optional().describe("Only the object with this name."),
  namespace: nonEmpty().optional().describe("Only objects in this namespace."),
  jsonPointers: z.array(jsonPointer).default([]).describe("RFC 6901 pointers of fields to ignore."),
  jqPathExpressions: z.array(nonEmpty()).default([]).describe("jq path expressions of fields to ignore."),
  managedFieldsManagers: z
    .array(nonEmpty())
    .default([])
    .describe("Ignore every field owned by these field managers (server-side apply managedFields)."),
})
  .refine((d) => d.jsonPointers.length + d.jqPathExpressions.length + d.managedFieldsManagers.length > 0, {
    error: "ignores nothing: set jsonPointers, jqPathExpressions or managedFieldsManagers",
  })
  .describe("Differences to ignore when comparing desired and live objects (Argo CD's ignoreDifferences).");

const trustedManager = z.union(
  [
    nonEmpty(),
    strictObject({
      manager: nonEmpty().describe("Field manager name as in metadata.managedFields (* and ? globs)."),
      paths: z
        .array(jsonPointer)
        .min(1, { error: "must list at least one JSON pointer, e.g. /spec/replicas" })
        .describe(
          "Fields (and what is below them) the manager is trusted for; a * token matches any key or index.",
        ),
    }),
  ],
  {
    error:
      'must be a field manager name or {manager, paths}, e.g. {manager: my-autoscaler, paths: ["/spec/replicas"]}',
  },
);

const syncWindow = strictObject({
  kind: z
    .enum(["allow", "deny"], {
      error: (issue) => `must be "allow" or "deny"${hintFor(issue.input, ["allow", "deny"])}`,
    })
    .describe("allow: syncs only inside allow windows. deny: no syncs inside the window."),
  schedule: z
    .string()
    .check(
      z.superRefine((value, ctx) => {
        const problem = scheduleProblem(value);
        if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
      }),
    )
    .describe(
      'When the window opens: five-field cron (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5".',
    ),
  duration: duration(60_000).describe(
    'How long the window stays open after each start, e.g. "8h" (at least 1m).',
  ),
  timeZone: z
    .string()
    .check(
      z.superRefine((value, ctx) => {
        const problem = timeZoneProblem(value);
        if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
      }),
    )
    .default("UTC")
    .describe('IANA time zone of the schedule, e.g. "Europe/Berlin" (default "UTC").'),
  manualSync: z
    .boolean()
    .default(false)
    .describe("Let manual syncs through while this window blocks syncs (default false)."),
  selfHeal: z
    .boolean()
    .optional()
    .describe(
      "false: a deny window also stops self-heal. Absent: drift is still reverted inside it (unlike Argo CD, which blocks self-heal too).",
    ),
}).describe(
  "A time window that allows or denies syncs (Argo CD semantics: an active deny wins; if allow windows exist, one must be active).",
);

const LOGIN_RE = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
const TEAM_RE = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}\/[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const teamName = z.string().regex(TEAM_RE, {
  error: (i) => `${JSON.stringify(i.input)} is not a team: write "org/team-slug"`,
});

const APP_SLUG_RE = /^[a-z0-9][a-z0-9-]*$/;
/** A check a revision must pass: by name (any source), or pinned to the GitHub App that must report it. */
const requiredCheck = z.union(
  [
    nonEmpty(),
    strictObject({
      name: nonEmpty().describe("The check run's name."),
      app: z
        .string()
        .regex(APP_SLUG_RE, {
          error: (i) =>
            `${JSON.stringify(i.input)} is not a GitHub App's slug (as in github.com/apps/<slug>)`,
        })
        .describe("Slug of the GitHub App whose check run alone counts (github-actions for workflows)."),
    }),
  ],
  { error: "must be a check name or {name: ci, app: github-actions}" },
);

const promotion = strictObject({
  after: z
    .union([nonEmpty(), z.array(nonEmpty()).min(1)], {
      error: "must be an environment's name or a list of them, e.g. staging or [staging, canary]",
    })
    .transform((after) => (typeof after === "string" ? [after] : after))
    .describe(
      "The upstream environment(s), by name in this file: this environment deploys only commits every one of them has synced and kept Healthy for healthyFor (a list: all must hold). Unknown names and cycles are errors.",
    ),
  healthyFor: duration(0).describe(
    'How long each upstream must have kept the commit synced and Healthy without a break before it is promoted here (Go-style duration, e.g. "10m"; "0s": as soon as it is Healthy).',
  ),
  checks: z
    .array(requiredCheck)
    .default([])
    .describe(
      "Checks that must have passed on the commit as well, named as in requireChecks: a name (any source) or {name, app} (default none).",
    ),
}).describe(
  "Ordering between environments: the commits this environment takes are those its upstream(s) have proven. It takes the newest commit of its branch they have proven, even when its branch head is newer, or holds at its current one; a gated environment still waits for approval. `/promote <env>` deploys the commit the upstream runs now.",
);

const rollback = strictObject({
  onDegraded: duration(1_000)
    .refine((ms) => ms <= 86_400_000, {
      error: "must be at most 24h: a release bad for longer is a person's to roll back",
    })
    .describe(
      'How long a new release may stay Degraded (or its sync stay failed) before the environment goes back on its own to the last release that was Healthy, and is pinned there (Go-style duration, e.g. "5m", at most "24h"). Once per bad release; /unpin resumes the branch.',
    ),
  acrossCRDChanges: z
    .boolean()
    .default(false)
    .describe(
      "Roll back past a release that created or changed a CustomResourceDefinition (default false: such a release is reported, not rolled back, since the old objects may not fit the new schema and CRDs are never pruned back).",
    ),
  acrossHooks: z
    .boolean()
    .default(false)
    .describe(
      "Roll back past a release that ran a hook (default false: a hook's effects, a migration say, are not undone by re-applying the old objects).",
    ),
}).describe(
  "Automatic rollback (needs syncPolicy.automated): a release that stays Degraded or failed for onDegraded goes back to the last release that was Healthy, pinned there, and says so on its check run, its pull request, the notifications and the metrics.",
);

const BOT_LOGIN_RE = /^[A-Za-z0-9][A-Za-z0-9-]*\[bot\]$/;
/** Bots whose token acts for whoever triggered them: anyone with write could launder a change through them. */
const ACTS_FOR_ITS_TRIGGER = ["github-actions[bot]"];

const approval = strictObject({
  users: z
    .array(z.string().regex(LOGIN_RE, { error: (i) => `${JSON.stringify(i.input)} is not a GitHub login` }))
    .default([])
    .describe("GitHub logins whose approval counts."),
  teams: z.array(teamName).default([]).describe('Teams whose members\' approval counts, as "org/team-slug".'),
  minimum: integer(1, 100).default(1).describe("Approvals needed (default 1)."),
  allowAuthor: z
    .boolean()
    .default(false)
    .describe("May the author of the change approve it? (default false)"),
  expiresAfter: duration(1)
    .optional()
    .describe(
      'An approval lapses this long after it was given (Go-style duration, e.g. "24h"). Absent: never.',
    ),
  trustedBots: z
    .array(
      z
        .string()
        .regex(BOT_LOGIN_RE, {
          error: (i) => `${JSON.stringify(i.input)} is not a bot's login (e.g. dependabot[bot])`,
        })
        .refine((l) => !ACTS_FOR_ITS_TRIGGER.includes(l.toLowerCase()), {
          error: (i) =>
            `${JSON.stringify(i.input)} acts for whoever triggers a workflow, so the person behind its commits is unknown; it cannot be trusted`,
        }),
    )
    .default([])
    .describe(
      "Bots that act on their own (e.g. dependabot[bot]): their commits and pull requests hide no person, so they do not stop approvals. Any other bot in what would be deployed does.",
    ),
}).describe("Approval needed before a sync of this environment. Absent: no approval needed.");

const permissionLevel = z.enum(["read", "triage", "write", "maintain", "admin"]);

export const NOTIFY_EVENTS = [
  "sync-started",
  "sync-succeeded",
  "sync-failed",
  "awaiting-approval",
  "drift-fight",
  "auto-rollback",
] as const;

const notifyTarget = strictObject({
  url: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
    .describe(
      "Where to POST the CloudEvent; its host must be allowed by the operator (SYNCWARD_NOTIFY_HOSTS).",
    ),
  events: z
    .array(z.enum(NOTIFY_EVENTS))
    .min(1)
    .default([...NOTIFY_EVENTS])
    .describe("Which events to send (default all)."),
  secretEnv: z
    .string()
    .regex(/^SYNCWARD_NOTIFY_[A-Z0-9_]+$/, {
      error: "must name an environment variable of syncward's that starts with SYNCWARD_NOTIFY_",
    })
    .optional()
    .describe(
      "Environment variable of the syncward process holding the HMAC-SHA256 key that signs each delivery (X-Syncward-Signature-256).",
    ),
});

const commandPermissions = strictObject({
  sync: permissionLevel.default("write"),
  freeze: permissionLevel.default("write"),
  unfreeze: permissionLevel.default("write"),
  approve: permissionLevel.default("write"),
  diff: permissionLevel.default("read"),
  history: permissionLevel.default("read"),
  rollback: permissionLevel
    .default("write")
    .describe(
      "/rollback and /unpin (default write). In an environment with an approval rule they need at least the approve permission, whatever this says: a rollback there takes no fresh approval.",
    ),
}).describe(
  "Repository permission each PR comment command needs in this environment (defaults: write to act, read to look).",
);

const clusterResource = strictObject({
  group: z.string().default("").describe('API group; "" (default) is the core group; "*" any.'),
  kind: nonEmpty().describe('Kind, e.g. Namespace; "*" any.'),
});

const policy = strictObject({
  namespaces: z
    .array(dnsLabel("namespace"))
    .min(1, { error: "must list at least one namespace (omit it to allow only destination.namespace)" })
    .optional()
    .describe("Namespaces objects may land in (default: only destination.namespace)."),
  clusterResources: z
    .array(clusterResource)
    .default([])
    .describe("Cluster-scoped kinds this environment may manage (default none)."),
  requireSignedCommits: z
    .boolean()
    .default(false)
    .describe(
      "Deploy only commits that GitHub shows as Verified (signed); others are refused with GitHub's reason (default false).",
    ),
})
  .prefault({})
  .describe("What this environment may touch in its cluster.");

// ---------------------------------------------------------------------------------------------
// Environment and file

// git check-ref-format, roughly: no "..", "@{", "//", "/." or ".lock" component, no spaces or
// control characters or any of ~^:?*[\, not starting with "-", not ending with "/" or ".".
const GIT_REF_RE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are refused on purpose
  /^(?!-)(?!.*(?:\.\.|@\{|\/\/|\/\.|\.lock(?:\/|$)))[^\s\u0000-\u001f\u007f~^:?*[\\]+(?<![./])$/;

// Argo CD's `source.helm`, field for field (its ApplicationSourceHelm). Paths stay inside the
// repository: a leading "/" means its root, anything else is relative to the chart.
const repoFile = (what: string) =>
  nonEmpty().refine(
    (p) => !p.includes("\\") && !p.split("/").includes("..") && !/^[a-z][a-z0-9+.-]*:\/\//i.test(p),
    {
      error: `${what} must be a path in the repository (relative to the chart, or to the repository root with a leading "/"), without ".." or a URL`,
    },
  );

const helmParameter = strictObject({
  name: nonEmpty().describe("Helm --set path, e.g. image.tag."),
  value: z.string().default("").describe("The value (a string; parsed by Helm unless forceString)."),
  forceString: z.boolean().default(false).describe("Pass with --set-string (default false)."),
});

const helmFileParameter = strictObject({
  name: nonEmpty().describe("Helm --set-file path."),
  path: repoFile("path").describe("File whose content becomes the value."),
});

const helm = strictObject({
  releaseName: z
    .string()
    .max(53, { error: "must be at most 53 characters (Helm's limit)" })
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
      error: (i) =>
        `${JSON.stringify(i.input)} is not a valid Helm release name: lowercase letters, digits, "-" and "."`,
    })
    .optional()
    .describe("Helm release name (default: the environment's name)."),
  valueFiles: z
    .array(repoFile("a value file"))
    .default([])
    .describe('Values files, relative to the chart or, with a leading "/", to the repository root.'),
  ignoreMissingValueFiles: z
    .boolean()
    .default(false)
    .describe("Skip value files that do not exist instead of failing (default false)."),
  values: z.string().optional().describe("Values as an inline YAML string (after valueFiles)."),
  valuesObject: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("Values as a map (after valueFiles; wins over values)."),
  parameters: z.array(helmParameter).default([]).describe("Helm --set / --set-string parameters."),
  fileParameters: z.array(helmFileParameter).default([]).describe("Helm --set-file parameters."),
  skipCrds: z.boolean().default(false).describe("Leave out the chart's crds/ directory (default false)."),
  skipTests: z.boolean().default(false).describe("Leave out Helm test hooks (default false)."),
  namespace: dnsLabel("namespace")
    .optional()
    .describe("The release namespace (.Release.Namespace; default destination.namespace)."),
  kubeVersion: z
    .string()
    .regex(/^v?\d+\.\d+(\.\d+)?([-+].*)?$/, {
      error: (i) => `${JSON.stringify(i.input)} is not a Kubernetes version, e.g. 1.37.0`,
    })
    .optional()
    .describe("Kubernetes version for .Capabilities.KubeVersion (default: the destination cluster's)."),
  apiVersions: z
    .array(nonEmpty())
    .optional()
    .describe("API versions for .Capabilities.APIVersions (default: what the destination cluster serves)."),
  passCredentials: z
    .boolean()
    .default(false)
    .describe("Send a chart repository's credentials to other hosts its index points at (default false)."),
}).describe("Helm rendering of a chart source (a path holding Chart.yaml), with Argo CD's field names.");

const source = strictObject({
  path: z
    .string()
    .min(1, { error: 'must not be empty (use "." for the repository root)' })
    .refine((p) => !p.startsWith("/") && !p.includes("\\") && !p.split("/").includes(".."), {
      error: 'must be relative to the repository root, without a leading "/", "\\" or ".."',
    })
    .describe(
      'Directory of the manifests (plain YAML, a kustomization or a Helm chart), relative to the repository root ("." for the root).',
    ),
  branch: z
    .string()
    .regex(GIT_REF_RE, { error: (i) => `${JSON.stringify(i.input)} is not a valid branch name` })
    .default("main")
    .describe('Branch whose head is deployed (default "main").'),
  helm: helm.optional(),
  chart: nonEmpty()
    .optional()
    .describe(
      "A chart from a chart repository (with repoURL and targetRevision), rendered with this repository's value files.",
    ),
  repoURL: z
    .string()
    .regex(/^(https?|oci):\/\/\S+$/, { error: "must be an http(s):// or oci:// chart repository URL" })
    .optional()
    .describe("The chart repository of chart (allowed by the operator)."),
  targetRevision: nonEmpty().optional().describe("The version of chart."),
})
  .check(
    z.superRefine((s, ctx) => {
      const given = (["chart", "repoURL", "targetRevision"] as const).filter((k) => s[k] !== undefined);
      if (given.length === 0 || given.length === 3) return;
      for (const key of ["chart", "repoURL", "targetRevision"] as const)
        if (s[key] === undefined)
          ctx.addIssue({
            code: "custom",
            path: [key],
            input: undefined,
            message: `required with ${given.join(" and ")} (a chart from a chart repository needs chart, repoURL and targetRevision)`,
          });
    }),
  )
  .describe("Where in the repository the manifests of this environment live.");

const destination = strictObject({
  namespace: dnsLabel("namespace").describe("Namespace of namespaced objects that do not name one."),
  cluster: nonEmpty()
    .optional()
    .describe(
      "The cluster, by name: a cluster of syncward's registry (a cluster Secret), else a kubeconfig context of that name. Absent: syncward's own cluster.",
    ),
  context: nonEmpty()
    .optional()
    .describe("The same as cluster (the name of a registry cluster or a kubeconfig context)."),
  inCluster: z
    .boolean()
    .default(false)
    .describe("Deploy to the cluster syncward runs in, with its service account (default false)."),
})
  .refine((d) => !(d.inCluster && d.context !== undefined), {
    path: ["context"],
    error: "cannot be combined with inCluster: true (choose one)",
  })
  .refine((d) => !(d.cluster !== undefined && (d.context !== undefined || d.inCluster)), {
    path: ["cluster"],
    error: "cannot be combined with context or inCluster: true (choose one)",
  })
  .describe("The cluster and namespace to deploy to.");

const environment = strictObject({
  name: z
    .string()
    .max(63, { error: "must be at most 63 characters" })
    .regex(LABEL_RE, {
      error: (i) =>
        `${JSON.stringify(i.input)} is not a valid environment name: use lowercase letters, digits and "-", e.g. "prod" or "eu-staging"`,
    })
    .describe("Unique name of the environment, e.g. dev, staging, prod."),
  source,
  destination,
  syncPolicy,
  ignoreDifferences: z
    .array(ignoreDifference)
    .describe("Differences between Git and the cluster to ignore (default none).")
    .default([]),
  trustedManagers: z
    .array(trustedManager)
    .default([])
    .describe(
      "Field managers trusted for some fields, beyond Kubernetes' own controllers (docs/semantics.md lists them): {manager, paths} pairs (manager as in metadata.managedFields, * and ? globs; paths JSON pointers, a * token matching any key or index), or a bare name, trusted for /spec/replicas, /metadata/labels/* and /metadata/annotations/* only. A manager's changes outside its paths are drift, and security-relevant fields (containers, images, env, volumes, securityContext, host namespaces, ServiceAccount, RBAC, webhooks) are never trusted by name. A trusted manager that changes a field Git declares is still reverted, with backoff (default none).",
    ),
  syncWindows: z
    .array(syncWindow)
    .describe("Windows that allow or deny syncs (default none: always allowed).")
    .prefault([]),
  approval: approval.optional(),
  commands: commandPermissions.prefault({}),
  policy,
  revisionHistoryLimit: integer(1, 100).default(10).describe("Sync operations kept in history (default 10)."),
  pollInterval: duration(1_000)
    .prefault("3m")
    .describe("How often to check the tracked branch (default 3m)."),
  production: z.boolean().default(false).describe("Report GitHub deployments as production (default false)."),
  requireChecks: z
    .union([z.literal(true), z.array(requiredCheck).min(1)], {
      error: "must be true or a list of checks: a name, or {name: ci, app: github-actions}",
    })
    .optional()
    .describe(
      "Deploy a revision only when these checks passed on it: a name (any source, as branch protection's \"any source\": green only when no run or status of that name is failing or pending) or {name, app} (only that GitHub App's check run counts); true: the tracked branch's required status checks.",
    ),
  promotion: promotion.optional(),
  rollback: rollback.optional(),
  previews: z
    .boolean()
    .optional()
    .describe(
      "Preview pull requests against this environment's live cluster (default true, but false for an environment marked production or gated by approval: their previews are opt-in).",
    ),
  environmentUrl: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
    .optional()
    .describe("URL shown on GitHub deployments."),
  notify: z
    .array(notifyTarget)
    .max(5)
    .default([])
    .describe(
      "Outbound webhooks told about this environment's syncs as CloudEvents (default none; the operator allows hosts with SYNCWARD_NOTIFY_HOSTS).",
    ),
})
  .check(
    z.superRefine((env, ctx) => {
      const ns = env.policy?.namespaces;
      const dest = env.destination?.namespace;
      if (Array.isArray(ns) && typeof dest === "string" && !ns.includes(dest)) {
        ctx.addIssue({
          code: "custom",
          path: ["policy", "namespaces"],
          input: ns,
          message: `must include destination.namespace ${JSON.stringify(dest)}`,
        });
      }
    }),
  )
  .transform((env) => ({
    ...env,
    policy: {
      namespaces: env.policy.namespaces ?? [env.destination.namespace],
      clusterResources: env.policy.clusterResources,
      requireSignedCommits: env.policy.requireSignedCommits,
    },
  }))
  .describe("One destination of this repository's manifests.");

// ---------------------------------------------------------------------------------------------
// resourceCustomizations (Argo CD's `resource.customizations`: custom health checks in Lua)

const customizationKeyText =
  'must be "group/Kind" as in Argo CD\'s resource.customizations ("Kind" alone for the core group; "*" and "?" match any characters)';

const customizationKey = z.string().regex(/^(?:[^\s/]+\/)?[^\s/]+$/, {
  error: (issue) => `${JSON.stringify(issue.input)} ${customizationKeyText}`,
});

const healthLua = z
  .string()
  .check(
    z.superRefine((source, ctx) => {
      const problem = luaSyntaxProblem(source);
      if (!problem) return;
      const where = problem.line === undefined ? "" : ` (line ${problem.line} of the script)`;
      ctx.addIssue({
        code: "custom",
        input: source,
        message: `Lua does not compile${where}: ${problem.message}`,
      });
    }),
  )
  .describe(
    "Lua health check, as in Argo CD: receives `obj` and returns a table with `status` and `message`.",
  );

const resourceCustomization = strictObject({
  "health.lua": healthLua.optional(),
  "health.lua.useOpenLibs": z
    .never({
      error:
        "is refused: every health script runs in syncward's sandbox (no os.execute, io, package or debug, whoever wrote it); remove the field",
    })
    .optional(),
}).describe("How syncward treats one kind, with Argo CD's key names.");

const resourceCustomizations = z
  .record(customizationKey, resourceCustomization)
  .describe(
    "Custom health checks keyed \"group/Kind\" as in Argo CD's argocd-cm resource.customizations; a check wins over syncward's built-in rule for its kind.",
  );

/** Where the operator sets custom health checks, for the refusal of a repository's. */
export const OPERATOR_HEALTH_CHECKS =
  "the operator sets them in syncward's projects document (ConfigMap syncward-projects, key projects.yaml: top-level resourceCustomizations for every project, or a project's own), `syncward import-argo argocd-cm.yaml` converts Argo CD's, and the CLI reads them from --projects or --health-config FILE";

/** The whole `.github/syncward.yml`. Use safeParseConfig(), which adds the checks across environments. */
export const configSchema = strictObject({
  environments: z
    .array(environment)
    .min(1, { error: "must list at least one environment" })
    .describe("The environments this repository deploys to."),
  previewEnvironments: previewEnvironmentsSchema,
  // Lua runs inside syncward, which holds the App's key: a repository never supplies it.
  resourceCustomizations: z
    .never({
      error: `is not allowed in a repository's config: custom health checks (Lua) are the operator's; ${OPERATOR_HEALTH_CHECKS}. Remove resourceCustomizations from this file`,
    })
    .optional()
    .describe("Not allowed here: custom health checks are set by the operator (projects document)."),
});

/** A problem found in a config, before it is given a file name. */
export interface SchemaIssue {
  path: PropertyKey[];
  message: string;
  code: string;
  /** For "unrecognized_keys": the unknown keys, one per line of `message`. */
  keys?: string[];
}

export type SafeParseConfigResult =
  | { success: true; data: SyncwardConfig }
  | { success: false; issues: SchemaIssue[] };

/**
 * Validates already-loaded data (from YAML, or from Probot's `context.config()`) against the
 * schema and the rules across environments (unique names), with config-author messages.
 */
export function safeParseConfig(data: unknown): SafeParseConfigResult {
  const result = configSchema.safeParse(data, { error: configErrorMap });
  const issues: SchemaIssue[] = result.success ? [] : schemaIssuesOf(result.error);
  // Checked on the raw input rather than as a zod refinement: refinements are skipped once a
  // field has failed, and a duplicate name is worth reporting alongside other problems.
  issues.push(...duplicateNames(data));
  issues.push(...promotionIssues(data));
  if (result.success) {
    issues.push(...rollbackIssues(result.data));
    issues.push(...previewTemplateIssues(result.data).map((i) => ({ ...i, code: "custom" })));
  }
  if (issues.length > 0) return { success: false, issues: sortByPath(issues) };
  return { success: true, data: (result as { data: SyncwardConfig }).data };
}

/** zod's issues as SchemaIssues (unknown keys listed for one problem each). */
export function schemaIssuesOf(error: z.ZodError): SchemaIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path,
    message: issue.message,
    code: issue.code,
    ...(issue.code === "unrecognized_keys" ? { keys: issue.keys } : {}),
  }));
}

function duplicateNames(data: unknown): SchemaIssue[] {
  const list = (data as { environments?: unknown } | null)?.environments;
  if (!Array.isArray(list)) return [];
  const firstIndex = new Map<string, number>();
  const issues: SchemaIssue[] = [];
  for (const [index, env] of list.entries()) {
    const name = (env as { name?: unknown } | null)?.name;
    if (typeof name !== "string") continue;
    const first = firstIndex.get(name);
    if (first === undefined) firstIndex.set(name, index);
    else {
      issues.push({
        path: ["environments", index, "name"],
        code: "custom",
        message: `duplicate environment name ${JSON.stringify(name)} (also environments[${first}].name)`,
      });
    }
  }
  return issues;
}

/** Stable order by path, so that problems read top to bottom like the file. */
function sortByPath(issues: SchemaIssue[]): SchemaIssue[] {
  const compare = (a: PropertyKey[], b: PropertyKey[]): number => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const x = a[i];
      const y = b[i];
      if (x === y) continue;
      if (typeof x === "number" && typeof y === "number") return x - y;
      return 0; // different keys of one object: keep zod's order (the schema's field order)
    }
    return a.length - b.length;
  };
  return issues
    .map((issue, index) => ({ issue, index }))
    .sort((a, b) => compare(a.issue.path, b.issue.path) || a.index - b.index)
    .map(({ issue }) => issue);
}

/** One environment, for callers that build or validate a single entry (e.g. the Argo CD import). */
export const environmentSchema = environment;

// ---------------------------------------------------------------------------------------------
// Messages for everything the fields above do not phrase themselves. Passed to every parse.

function hintFor(input: unknown, candidates: readonly string[]): string {
  return typeof input === "string" ? didYouMeanHint(input, candidates) : "";
}

function describeInput(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "a list";
  if (typeof input === "object") return "a mapping";
  if (typeof input === "string")
    return JSON.stringify(input.length > 40 ? `${input.slice(0, 37)}...` : input);
  return String(input);
}

const EXPECTED: Record<string, string> = {
  object: "a mapping",
  record: "a mapping",
  array: "a list",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
};

/** The error map that phrases zod's generic issues for config authors. */
export const configErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "required";
      return `must be ${EXPECTED[issue.expected] ?? issue.expected} (got ${describeInput(issue.input)})`;
    case "too_small":
      if (issue.origin === "array") return `must have at least ${issue.minimum} item(s)`;
      if (issue.origin === "string")
        return Number(issue.minimum) <= 1
          ? "must not be empty"
          : `must be at least ${issue.minimum} characters`;
      return `must be a number ${issue.inclusive ? ">=" : ">"} ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "array") return `must have at most ${issue.maximum} item(s)`;
      if (issue.origin === "string") return `must be at most ${issue.maximum} characters`;
      return `must be a number ${issue.inclusive ? "<=" : "<"} ${issue.maximum}`;
    case "invalid_value": {
      const values = issue.values.map((v) => JSON.stringify(v));
      return `must be ${values.length === 1 ? values[0] : `one of ${values.join(", ")}`}${hintFor(issue.input, issue.values.map(String))}`;
    }
    case "invalid_format":
      return `has an invalid format (got ${describeInput(issue.input)})`;
    case "unrecognized_keys":
      return issue.keys.map(() => "unknown field").join("\n");
    case "invalid_union":
      return `is not valid (got ${describeInput(issue.input)})`;
    case "invalid_key":
      // A record key (resourceCustomizations): the key's own check phrased the problem.
      return issue.issues[0]?.message;
    default:
      return undefined;
  }
};

// ---------------------------------------------------------------------------------------------
// Compile-time proof that the hand-written types in types.ts are exactly what this schema produces.

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type SchemaMatchesTypes = [
  Assert<Same<z.output<typeof configSchema>, SyncwardConfig>>,
  Assert<Same<z.output<typeof environment>, EnvironmentConfig>>,
  Assert<Same<z.output<typeof syncPolicy>, SyncPolicy>>,
  Assert<Same<z.output<typeof syncOptions>, SyncOptions>>,
  Assert<Same<z.output<typeof retry>, RetryPolicy>>,
  Assert<Same<z.output<typeof ignoreDifference>, IgnoreDifference>>,
  Assert<Same<z.output<typeof syncWindow>, SyncWindow>>,
  Assert<Same<z.output<typeof approval>, ApprovalRule>>,
  Assert<Same<z.output<typeof helm>, HelmSource>>,
  Assert<Same<z.output<typeof previewTemplateSchema>, PreviewTemplate>>,
  Assert<Same<z.output<typeof promotion>, PromotionRule>>,
  Assert<Same<z.output<typeof rollback>, RollbackRule>>,
];

/** `resourceCustomizations` alone, for the argocd-cm import's check of what it produced. */
export const resourceCustomizationsSchema = resourceCustomizations;

/** Building blocks the operator's project file (src/projects/schema.ts) shares with this one. */
export { clusterResource as kindSchema, strictObject, syncWindow as syncWindowSchema, teamName };
