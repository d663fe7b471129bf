import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import {
  ConfigError,
  findEnvironment,
  loadConfigFile,
  parseConfig,
  UnknownEnvironmentError,
  validateConfig,
} from "../../../src/config/load.ts";
import type { EnvironmentConfig, SyncwardConfig } from "../../../src/config/types.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "config");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
const FILE = ".github/syncward.yml";

/** The problems of a config, without the file prefix; fails if it parses. */
function problemsOf(text: string, file = FILE): string[] {
  try {
    parseConfig(text, file);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    for (const p of err.problems) assert.ok(p.startsWith(`${file}:`), `problem without the file name: ${p}`);
    assert.equal(err.message, err.problems.join("\n"));
    return err.problems.map((p) => p.slice(file.length).replace(/^: |^:/, ""));
  }
  assert.fail("the config was accepted");
}

const base = { name: "dev", source: { path: "overlays/dev" }, destination: { namespace: "dev" } };
/** YAML of one environment: `base` with `fields` on top (a field set to undefined is removed). */
const withEnv = (fields: Record<string, unknown>) => stringify({ environments: [{ ...base, ...fields }] });

const DEFAULT_SYNC_OPTIONS = {
  CreateNamespace: false,
  ApplyOutOfSyncOnly: false,
  PruneLast: false,
  PrunePropagationPolicy: "foreground",
  RespectIgnoreDifferences: false,
  ServerSideApply: true,
  Replace: false,
  FailOnSharedResource: false,
  Validate: true,
} as const;

const DEFAULT_COMMANDS = {
  sync: "write",
  freeze: "write",
  unfreeze: "write",
  approve: "write",
  diff: "read",
  history: "read",
  rollback: "write",
} as const;

describe("parseConfig: valid files", () => {
  it("fills every default for the smallest config (basic.yml)", () => {
    const expected: SyncwardConfig = {
      environments: [
        {
          name: "dev",
          source: { path: "overlays/dev", branch: "main" },
          destination: { namespace: "payments-dev", inCluster: false },
          syncPolicy: {
            syncOptions: DEFAULT_SYNC_OPTIONS,
            retry: { limit: 5, backoff: { duration: 5_000, factor: 2, maxDuration: 180_000 } },
          },
          ignoreDifferences: [],
          trustedManagers: [],
          notify: [],
          syncWindows: [],
          policy: { namespaces: ["payments-dev"], clusterResources: [], requireSignedCommits: false },
          revisionHistoryLimit: 10,
          pollInterval: 180_000,
          production: false,
          commands: DEFAULT_COMMANDS,
        },
      ],
    };
    assert.deepEqual(parseConfig(fixture("basic.yml")), expected);
  });

  it("reads every field of full.yml into the parsed shape", () => {
    const config = parseConfig(fixture("full.yml"));
    const [dev, prod] = config.environments;
    const expectedDev: EnvironmentConfig = {
      name: "dev",
      source: { path: "overlays/dev", branch: "main" },
      destination: { namespace: "payments-dev", context: "kind-dev", inCluster: false },
      syncPolicy: {
        automated: { prune: true, selfHeal: true, allowEmpty: false },
        syncOptions: {
          CreateNamespace: true,
          ApplyOutOfSyncOnly: true,
          PruneLast: true,
          PrunePropagationPolicy: "background",
          RespectIgnoreDifferences: true,
          ServerSideApply: true,
          Replace: false,
          FailOnSharedResource: true,
          Validate: false,
        },
        retry: { limit: 5, backoff: { duration: 5_000, factor: 2, maxDuration: 180_000 } },
        pruneLimit: 10,
      },
      ignoreDifferences: [
        {
          group: "apps",
          kind: "Deployment",
          name: "web",
          namespace: "x",
          jsonPointers: ["/spec/replicas"],
          jqPathExpressions: ['.spec.template.spec.containers[] | select(.name=="istio-proxy")'],
          managedFieldsManagers: ["kube-controller-manager"],
        },
      ],
      trustedManagers: [],
      notify: [],
      syncWindows: [
        {
          kind: "allow",
          schedule: "0 9 * * 1-5",
          duration: 8 * 3_600_000,
          timeZone: "Europe/Berlin",
          manualSync: true,
        },
      ],
      approval: { users: ["alice"], teams: ["org/sre"], minimum: 1, allowAuthor: false, trustedBots: [] },
      policy: {
        namespaces: ["payments-dev"],
        clusterResources: [{ group: "", kind: "Namespace" }],
        requireSignedCommits: false,
      },
      revisionHistoryLimit: 10,
      pollInterval: 180_000,
      production: false,
      commands: DEFAULT_COMMANDS,
      environmentUrl: "https://dev.example.com",
    };
    assert.deepEqual(dev, expectedDev);
    assert.deepEqual(prod?.syncPolicy.retry, {
      limit: -1,
      backoff: { duration: 250, factor: 1.5, maxDuration: 5_400_000 },
    });
    assert.equal(prod?.syncPolicy.pruneLimit, "20%");
    assert.equal(prod?.syncPolicy.automated, undefined, "absent automated means manual");
    assert.deepEqual(prod?.destination, { namespace: "payments", inCluster: true });
    assert.deepEqual(prod?.syncWindows, [
      { kind: "deny", schedule: "0 22 * * *", duration: 36_000_000, timeZone: "UTC", manualSync: false },
    ]);
    assert.equal(prod?.pollInterval, 90_000);
    assert.equal(prod?.production, true);
  });

  it("allows anchors and merge keys (anchors.yml)", () => {
    const config = parseConfig(fixture("anchors.yml"));
    assert.deepEqual(
      config.environments.map((e) => [e.name, e.destination.namespace, e.syncPolicy.automated?.prune]),
      [
        ["dev", "dev", true],
        ["staging", "staging", true],
      ],
    );
  });

  const accepted: Array<[string, Record<string, unknown>, (env: EnvironmentConfig) => unknown, unknown]> = [
    [
      "automated: {} turns every flag off",
      { syncPolicy: { automated: {} } },
      (e) => e.syncPolicy.automated,
      { prune: false, selfHeal: false, allowEmpty: false },
    ],
    ["duration 1h30m", { pollInterval: "1h30m" }, (e) => e.pollInterval, 5_400_000],
    ["duration 1.5h", { pollInterval: "1.5h" }, (e) => e.pollInterval, 5_400_000],
    [
      "duration 250ms",
      { syncPolicy: { retry: { backoff: { duration: "250ms" } } } },
      (e) => e.syncPolicy.retry.backoff.duration,
      250,
    ],
    ["retry limit 0 (never)", { syncPolicy: { retry: { limit: 0 } } }, (e) => e.syncPolicy.retry.limit, 0],
    ["pruneLimit 0", { syncPolicy: { pruneLimit: 0 } }, (e) => e.syncPolicy.pruneLimit, 0],
    ["pruneLimit 100%", { syncPolicy: { pruneLimit: "100%" } }, (e) => e.syncPolicy.pruneLimit, "100%"],
    ["path .", { source: { path: "." } }, (e) => e.source.path, "."],
    [
      "branch with slashes",
      { source: { path: "a", branch: "release/2.1" } },
      (e) => e.source.branch,
      "release/2.1",
    ],
    [
      "sync option repeated with the same value",
      { syncPolicy: { syncOptions: ["PruneLast=true", "PruneLast=true"] } },
      (e) => e.syncPolicy.syncOptions.PruneLast,
      true,
    ],
    [
      "explicit policy namespaces",
      { policy: { namespaces: ["dev", "dev-jobs"] } },
      (e) => e.policy.namespaces,
      ["dev", "dev-jobs"],
    ],
    [
      "cron with names and ?",
      { syncWindows: [{ kind: "deny", schedule: "30 22 ? DEC SAT,SUN", duration: "2h" }] },
      (e) => e.syncWindows[0]?.schedule,
      "30 22 ? DEC SAT,SUN",
    ],
  ];
  for (const [name, fields, pick, expected] of accepted) {
    it(`accepts ${name}`, () => {
      const env = parseConfig(withEnv(fields)).environments[0];
      assert.ok(env);
      assert.deepEqual(pick(env), expected);
    });
  }
});

describe("parseConfig: every class of error, with its field path", () => {
  const cases: Array<{ name: string; fields?: Record<string, unknown>; text?: string; problems: string[] }> =
    [
      // wrong types
      {
        name: "boolean given as a string",
        fields: { production: "yes" },
        problems: ['environments[0].production: must be true or false (got "yes")'],
      },
      {
        name: "list given as a mapping",
        fields: { syncWindows: { kind: "deny" } },
        problems: ["environments[0].syncWindows: must be a list (got a mapping)"],
      },
      {
        name: "null for automated",
        fields: { syncPolicy: { automated: null } },
        problems: ["environments[0].syncPolicy.automated: must be a mapping (got null)"],
      },
      {
        name: "integer given as a string",
        fields: { revisionHistoryLimit: "ten" },
        problems: ["environments[0].revisionHistoryLimit: must be an integer from 1 to 100"],
      },
      { name: "the file is a list", text: "- dev\n", problems: ["must be a mapping (got a list)"] },
      // out of range
      {
        name: "factor below 1",
        text: stringify({
          environments: [
            base,
            { ...base, name: "prod", syncPolicy: { retry: { backoff: { factor: 0.5 } } } },
          ],
        }),
        problems: ["environments[1].syncPolicy.retry.backoff.factor: must be a number >= 1"],
      },
      {
        name: "requireChecks pinned to something that is not an app's slug",
        fields: { requireChecks: ["ci", { name: "ci", app: "GitHub Actions" }] },
        problems: [
          `environments[0].requireChecks[1].app: "GitHub Actions" is not a GitHub App's slug (as in github.com/apps/<slug>)`,
        ],
      },
      {
        name: "trustedBots: a person's login, and the bot that acts for whoever triggers a workflow",
        fields: { approval: { users: ["carol"], trustedBots: ["mallory", "github-actions[bot]"] } },
        problems: [
          `environments[0].approval.trustedBots[0]: "mallory" is not a bot's login (e.g. dependabot[bot])`,
          `environments[0].approval.trustedBots[1]: "github-actions[bot]" acts for whoever triggers a workflow, so the person behind its commits is unknown; it cannot be trusted`,
        ],
      },
      {
        name: "requireChecks entry that is neither a name nor {name, app}",
        fields: { requireChecks: [{ name: "ci" }] },
        problems: [
          "environments[0].requireChecks: must be true or a list of checks: a name, or {name: ci, app: github-actions}",
        ],
      },
      {
        name: "revisionHistoryLimit 0",
        fields: { revisionHistoryLimit: 0 },
        problems: ["environments[0].revisionHistoryLimit: must be an integer from 1 to 100"],
      },
      {
        name: "retry limit below -1",
        fields: { syncPolicy: { retry: { limit: -2 } } },
        problems: [
          "environments[0].syncPolicy.retry.limit: must be an integer >= -1 (-1 retries forever, 0 never)",
        ],
      },
      {
        name: "fractional retry limit",
        fields: { syncPolicy: { retry: { limit: 1.5 } } },
        problems: ["environments[0].syncPolicy.retry.limit: must be an integer >= -1"],
      },
      {
        name: "approval minimum 0",
        fields: { approval: { users: ["alice"], minimum: 0 } },
        problems: ["environments[0].approval.minimum: must be an integer from 1 to 100"],
      },
      {
        name: "no environments",
        text: "environments: []\n",
        problems: ["environments: must list at least one environment"],
      },
      // unknown keys
      {
        name: "misspelt field, with a suggestion",
        fields: { syncPolicy: { automated: { prun: true } } },
        problems: ['environments[0].syncPolicy.automated.prun: unknown field (did you mean "prune"?)'],
      },
      {
        name: "field with the wrong case",
        fields: { syncPolicy: { automated: { selfheal: true } } },
        problems: ['environments[0].syncPolicy.automated.selfheal: unknown field (did you mean "selfHeal"?)'],
      },
      {
        name: "unknown field without a close match",
        fields: { replicas: 3 },
        problems: ["environments[0].replicas: unknown field"],
      },
      {
        name: "two unknown fields in one mapping",
        fields: { destination: { namespace: "dev", contxt: "kind", incluster: "x" } },
        problems: [
          'environments[0].destination.contxt: unknown field (did you mean "context"?)',
          'environments[0].destination.incluster: unknown field (did you mean "inCluster"?)',
        ],
      },
      {
        name: "misspelt top-level key",
        text: stringify({ enviroments: [base] }),
        problems: ['enviroments: unknown field (did you mean "environments"?)', "environments: required"],
      },
      // required
      {
        name: "missing namespace",
        fields: { destination: { context: "kind-dev" } },
        problems: ["environments[0].destination.namespace: required"],
      },
      {
        name: "missing source",
        fields: { source: undefined },
        problems: ["environments[0].source: required"],
      },
      // duplicates
      {
        name: "duplicate environment names",
        text: stringify({ environments: [base, { ...base, name: "prod" }, base] }),
        problems: ['environments[2].name: duplicate environment name "dev" (also environments[0].name)'],
      },
      {
        name: "duplicate names reported alongside other problems",
        text: stringify({ environments: [{ ...base, production: 1 }, base] }),
        problems: [
          "environments[0].production: must be true or false (got 1)",
          'environments[1].name: duplicate environment name "dev" (also environments[0].name)',
        ],
      },
      // durations
      {
        name: "duration without a unit",
        fields: { pollInterval: "5" },
        problems: [
          'environments[0].pollInterval: must be a duration like "30s", "5m" or "1h30m" (units ms, s, m, h), got "5"',
        ],
      },
      {
        name: "duration as a number",
        fields: { pollInterval: 5 },
        problems: ['environments[0].pollInterval: must be a duration like "30s", "5m" or "1h30m"'],
      },
      {
        name: "duration with an unknown unit",
        fields: { syncPolicy: { retry: { backoff: { duration: "5d" } } } },
        problems: [
          'environments[0].syncPolicy.retry.backoff.duration: must be a duration like "30s", "5m" or "1h30m" (units ms, s, m, h), got "5d"',
        ],
      },
      {
        name: "duration too short",
        fields: { pollInterval: "0s" },
        problems: ["environments[0].pollInterval: must be at least 1s"],
      },
      {
        name: "window shorter than a minute",
        fields: { syncWindows: [{ kind: "deny", schedule: "0 1 * * *", duration: "30s" }] },
        problems: ["environments[0].syncWindows[0].duration: must be at least 1m"],
      },
      {
        name: "maxDuration shorter than duration",
        fields: { syncPolicy: { retry: { backoff: { duration: "5m", maxDuration: "1m" } } } },
        problems: [
          "environments[0].syncPolicy.retry.backoff.maxDuration: must not be shorter than backoff.duration",
        ],
      },
      // sync options
      {
        name: "unknown sync option",
        fields: { syncPolicy: { syncOptions: ["Prune=false"] } },
        problems: [
          'environments[0].syncPolicy.syncOptions[0]: unknown sync option "Prune"; known options: CreateNamespace, ApplyOutOfSyncOnly, PruneLast, RespectIgnoreDifferences, ServerSideApply, Replace, FailOnSharedResource, Validate, SkipDryRunOnMissingResource, PrunePropagationPolicy',
        ],
      },
      {
        name: "misspelt sync option",
        fields: { syncPolicy: { syncOptions: ["CreateNamspace=true"] } },
        problems: [
          'environments[0].syncPolicy.syncOptions[0]: unknown sync option "CreateNamspace" (did you mean "CreateNamespace"?); known options: CreateNamespace, ApplyOutOfSyncOnly, PruneLast, RespectIgnoreDifferences, ServerSideApply, Replace, FailOnSharedResource, Validate, SkipDryRunOnMissingResource, PrunePropagationPolicy',
        ],
      },
      {
        name: "sync option with a bad boolean",
        fields: { syncPolicy: { syncOptions: ["CreateNamespace=yes"] } },
        problems: [
          'environments[0].syncPolicy.syncOptions[0]: CreateNamespace must be true or false, got "yes"',
        ],
      },
      {
        name: "sync option without a value",
        fields: { syncPolicy: { syncOptions: ["ServerSideApply"] } },
        problems: [
          "environments[0].syncPolicy.syncOptions[0]: must be written ServerSideApply=true or ServerSideApply=false",
        ],
      },
      {
        name: "bad propagation policy",
        fields: { syncPolicy: { syncOptions: ["PrunePropagationPolicy=all"] } },
        problems: [
          'environments[0].syncPolicy.syncOptions[0]: must be PrunePropagationPolicy=foreground, =background or =orphan, got "PrunePropagationPolicy=all"',
        ],
      },
      {
        name: "conflicting sync options",
        fields: { syncPolicy: { syncOptions: ["Replace=true", "Validate=false", "Replace=false"] } },
        problems: [
          'environments[0].syncPolicy.syncOptions[2]: conflicts with syncOptions[0] ("Replace=true")',
        ],
      },
      // pruneLimit
      {
        name: "pruneLimit above 100%",
        fields: { syncPolicy: { pruneLimit: "120%" } },
        problems: [
          'environments[0].syncPolicy.pruneLimit: must be a whole number >= 0 or a percentage from "0%" to "100%" (got "120%")',
        ],
      },
      {
        name: "negative pruneLimit",
        fields: { syncPolicy: { pruneLimit: -1 } },
        problems: [
          'environments[0].syncPolicy.pruneLimit: must be a whole number >= 0 or a percentage from "0%" to "100%" (got -1)',
        ],
      },
      {
        name: "pruneLimit as words",
        fields: { syncPolicy: { pruneLimit: "ten" } },
        problems: [
          'environments[0].syncPolicy.pruneLimit: must be a whole number >= 0 or a percentage from "0%" to "100%" (got "ten")',
        ],
      },
      // cron
      {
        name: "cron value out of range",
        fields: { syncWindows: [{ kind: "allow", schedule: "0 25 * * *", duration: "1h" }] },
        problems: [
          "environments[0].syncWindows[0].schedule: invalid cron expression: Invalid value for hour: 25",
        ],
      },
      {
        name: "cron with three fields",
        fields: { syncWindows: [{ kind: "allow", schedule: "* * *", duration: "1h" }] },
        problems: [
          "environments[0].syncWindows[0].schedule: must be a cron expression with 5 fields (minute hour day-of-month month day-of-week), got 3",
        ],
      },
      {
        name: "cron nickname (not in Argo CD's dialect)",
        fields: { syncWindows: [{ kind: "allow", schedule: "@daily", duration: "1h" }] },
        problems: [
          "environments[0].syncWindows[0].schedule: must be a cron expression with 5 fields (minute hour day-of-month month day-of-week), got 1",
        ],
      },
      {
        name: "cron extension L",
        fields: { syncWindows: [{ kind: "allow", schedule: "0 0 L * *", duration: "1h" }] },
        problems: [
          'environments[0].syncWindows[0].schedule: invalid day of month field "L" (use numbers, names like MON or JAN, *, ranges a-b, lists a,b and steps /n)',
        ],
      },
      {
        name: "cron that never fires",
        fields: { syncWindows: [{ kind: "allow", schedule: "0 0 30 2 *", duration: "1h" }] },
        problems: ["environments[0].syncWindows[0].schedule: never fires (no date matches it)"],
      },
      // time zones
      {
        name: "misspelt time zone",
        fields: {
          syncWindows: [{ kind: "allow", schedule: "0 9 * * *", duration: "1h", timeZone: "Europe/Berln" }],
        },
        problems: [
          'environments[0].syncWindows[0].timeZone: unknown time zone "Europe/Berln" (did you mean "Europe/Berlin"?) (use an IANA name like "Europe/Berlin" or "UTC")',
        ],
      },
      {
        name: "unknown time zone",
        fields: {
          syncWindows: [
            { kind: "allow", schedule: "0 9 * * *", duration: "1h", timeZone: "Mars/Olympus_Mons" },
          ],
        },
        problems: [
          'environments[0].syncWindows[0].timeZone: unknown time zone "Mars/Olympus_Mons" (use an IANA name like "Europe/Berlin" or "UTC")',
        ],
      },
      {
        name: "window kind misspelt",
        fields: { syncWindows: [{ kind: "alow", schedule: "0 9 * * *", duration: "1h" }] },
        problems: ['environments[0].syncWindows[0].kind: must be "allow" or "deny" (did you mean "allow"?)'],
      },
      // names, paths, references
      {
        name: "environment name with capitals",
        fields: { name: "Prod" },
        problems: [
          'environments[0].name: "Prod" is not a valid environment name: use lowercase letters, digits and "-", e.g. "prod" or "eu-staging"',
        ],
      },
      {
        name: "source path escaping the repository",
        fields: { source: { path: "overlays/../../secrets" } },
        problems: [
          'environments[0].source.path: must be relative to the repository root, without a leading "/", "\\" or ".."',
        ],
      },
      {
        name: "absolute source path",
        fields: { source: { path: "/etc" } },
        problems: [
          'environments[0].source.path: must be relative to the repository root, without a leading "/", "\\" or ".."',
        ],
      },
      {
        name: "empty source path",
        fields: { source: { path: "" } },
        problems: ['environments[0].source.path: must not be empty (use "." for the repository root)'],
      },
      {
        name: "invalid branch name",
        fields: { source: { path: "a", branch: "feature..x" } },
        problems: ['environments[0].source.branch: "feature..x" is not a valid branch name'],
      },
      {
        name: "invalid namespace",
        fields: { destination: { namespace: "Payments_Dev" } },
        problems: [
          'environments[0].destination.namespace: namespace "Payments_Dev" is not valid: use lowercase letters, digits and "-", starting and ending with a letter or digit',
        ],
      },
      {
        name: "context together with inCluster",
        fields: { destination: { namespace: "dev", context: "kind", inCluster: true } },
        problems: [
          "environments[0].destination.context: cannot be combined with inCluster: true (choose one)",
        ],
      },
      {
        name: "policy namespaces without the destination namespace",
        fields: { policy: { namespaces: ["other"] } },
        problems: ['environments[0].policy.namespaces: must include destination.namespace "dev"'],
      },
      {
        name: "environmentUrl that is not http(s)",
        fields: { environmentUrl: "ftp://example.com" },
        problems: ["environments[0].environmentUrl: must be an http(s) URL"],
      },
      {
        name: "ignoreDifferences entry that ignores nothing",
        fields: { ignoreDifferences: [{ kind: "Deployment" }] },
        problems: [
          "environments[0].ignoreDifferences[0]: ignores nothing: set jsonPointers, jqPathExpressions or managedFieldsManagers",
        ],
      },
      {
        name: "JSON pointer without a leading slash",
        fields: { ignoreDifferences: [{ kind: "Deployment", jsonPointers: ["spec/replicas"] }] },
        problems: [
          'environments[0].ignoreDifferences[0].jsonPointers[0]: must be a JSON pointer like "/spec/replicas" ("~1" for "/" and "~0" for "~" inside a key), got "spec/replicas"',
        ],
      },
      {
        name: "team without an organisation",
        fields: { approval: { teams: ["sre"] } },
        problems: ['environments[0].approval.teams[0]: "sre" is not a team: write "org/team-slug"'],
      },
    ];

  for (const c of cases) {
    it(c.name, () => {
      const text = c.text ?? withEnv(c.fields ?? {});
      assert.deepEqual(problemsOf(text), c.problems);
    });
  }

  it("lists every problem of a file at once, in file order, with lines (invalid.yml)", () => {
    let error: ConfigError | undefined;
    try {
      parseConfig(fixture("invalid.yml"));
    } catch (err) {
      error = err as ConfigError;
    }
    assert.ok(error instanceof ConfigError);
    assert.equal(
      error.message,
      [
        '.github/syncward.yml: environments[0].syncPolicy.automated.prun: unknown field (did you mean "prune"?)',
        ".github/syncward.yml: environments[1].destination.namespace: required",
        ".github/syncward.yml: environments[1].syncPolicy.retry.backoff.factor: must be a number >= 1",
      ].join("\n"),
    );
    assert.deepEqual(
      error.issues.map((i) => [i.path, i.line]),
      [
        ["environments[0].syncPolicy.automated.prun", 6],
        ["environments[1].destination.namespace", 10],
        ["environments[1].syncPolicy.retry.backoff.factor", 12],
      ],
    );
  });
});

describe("parseConfig: YAML syntax and safety", () => {
  it("names the file and line of a syntax error (malformed.yml)", () => {
    assert.deepEqual(problemsOf(fixture("malformed.yml")), [
      "7: All mapping items must start at the same column",
    ]);
  });

  it("names the file given", () => {
    assert.throws(() => parseConfig(fixture("malformed.yml"), "deploy/syncward.yml"), {
      name: "ConfigError",
      message: "deploy/syncward.yml:7: All mapping items must start at the same column",
    });
  });

  it("reports an unclosed quote", () => {
    const [problem] = problemsOf('environments:\n  - name: "dev\n');
    assert.match(problem ?? "", /^\d+: Missing closing "quote/);
  });

  it("refuses duplicate keys", () => {
    const [problem] = problemsOf("environments: []\nenvironments: []\n");
    assert.match(problem ?? "", /^2: Map keys must be unique/);
  });

  it("refuses several documents in one file", () => {
    const [problem] = problemsOf(`${withEnv({})}---\n${withEnv({})}`);
    assert.match(problem ?? "", /multiple documents/);
  });

  it("refuses an alias bomb without expanding it (evil-alias-bomb.yml)", () => {
    // The refusal comes from the alias count, before anything is expanded.
    const problems = problemsOf(fixture("evil-alias-bomb.yml"));
    assert.deepEqual(problems, [
      "cannot be loaded: Excessive alias count indicates a resource exhaustion attack (aliases are limited)",
    ]);
  });

  it("refuses language-specific and custom tags (evil-tags.yml)", () => {
    assert.deepEqual(problemsOf(fixture("evil-tags.yml")), [
      "4: Unresolved tag: !!js/function (custom YAML tags are not allowed)",
      "5: Unresolved tag: !!python/object/apply:os.system (custom YAML tags are not allowed)",
      "6: Unresolved tag: !ruby/object:Gem::Installer (custom YAML tags are not allowed)",
    ]);
  });

  it("reads yes/no/on/off as strings (YAML 1.2), so they are not silently booleans", () => {
    assert.deepEqual(problemsOf(`${withEnv({})}    production: yes\n`), [
      'environments[0].production: must be true or false (got "yes")',
    ]);
  });

  it("refuses an empty file (empty.yml)", () => {
    assert.deepEqual(problemsOf(fixture("empty.yml")), ["is empty: it must define `environments`"]);
  });

  it("refuses a file over 512 KiB", () => {
    assert.deepEqual(problemsOf(`# ${"x".repeat(600 * 1024)}\n`), ["is larger than 512 KiB"]);
  });
});

describe("validateConfig, loadConfigFile", () => {
  it("validates already-loaded data with the same rules", () => {
    const config = validateConfig({ environments: [base] });
    assert.equal(config.environments[0]?.pollInterval, 180_000);
    assert.throws(
      () => validateConfig({ environments: [{ ...base, pollInterval: "soon" }] }, "org/.github:syncward.yml"),
      {
        name: "ConfigError",
        message:
          'org/.github:syncward.yml: environments[0].pollInterval: must be a duration like "30s", "5m" or "1h30m" (units ms, s, m, h), got "soon"',
      },
    );
    assert.throws(() => validateConfig(null), {
      message: ".github/syncward.yml: is empty: it must define `environments`",
    });
  });

  it("loads a file, naming it in errors", async () => {
    const config = await loadConfigFile(join(FIXTURES, "full.yml"));
    assert.deepEqual(
      config.environments.map((e) => e.name),
      ["dev", "prod"],
    );
    const missing = join(FIXTURES, "missing.yml");
    await assert.rejects(loadConfigFile(missing), {
      name: "ConfigError",
      message: `${missing}: file not found`,
    });
  });
});

describe("findEnvironment", () => {
  const config = parseConfig(
    stringify({ environments: [base, { ...base, name: "staging" }, { ...base, name: "prod" }] }),
  );

  it("returns the named environment", () => {
    assert.equal(findEnvironment(config, "prod").name, "prod");
  });

  const unknown: Array<[string, string, string | undefined]> = [
    ["prd", 'unknown environment "prd" (did you mean "prod"?); environments: dev, staging, prod', "prod"],
    [
      "Staging",
      'unknown environment "Staging" (did you mean "staging"?); environments: dev, staging, prod',
      "staging",
    ],
    ["qa", 'unknown environment "qa"; environments: dev, staging, prod', undefined],
  ];
  for (const [name, message, suggestion] of unknown) {
    it(`explains an unknown name: ${name}`, () => {
      assert.throws(
        () => findEnvironment(config, name),
        (err) => {
          assert.ok(err instanceof UnknownEnvironmentError);
          assert.equal(err.message, message);
          assert.equal(err.suggestion, suggestion);
          assert.deepEqual(err.known, ["dev", "staging", "prod"]);
          return true;
        },
      );
    });
  }
});
