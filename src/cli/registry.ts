// Every syncward command, verb and option, declared once. This file stays light (no engine, no
// Kubernetes client): main.ts builds the parser and the help from it, and an implementation is
// imported only when its command runs. A new option is one line in the right table.
import type { CommandSpec, OptionSpecs, ValuesOf } from "./spec.ts";
import { pick } from "./spec.ts";

/** Where a repository-bound command finds its repository, config and cluster. */
export const REPO_OPTIONS = {
  repo: {
    type: "string",
    value: "PATH",
    description: "the manifests repository (default: the current directory)",
  },
  kubeconfig: {
    type: "string",
    value: "FILE",
    description: "kubeconfig file (default: KUBECONFIG, then ~/.kube/config)",
  },
  context: {
    type: "string",
    value: "NAME",
    description: "kubeconfig context (default: its current context)",
  },
  config: {
    type: "string",
    value: "FILE",
    description: "syncward config (default: REPO/.github/syncward.yml)",
  },
  app: {
    type: "string",
    value: "NAME",
    description: "application name (default: the repository directory's name)",
  },
  "state-namespace": {
    type: "string",
    value: "NAMESPACE",
    description: "where state is kept (default: syncward)",
  },
  projects: {
    type: "string",
    value: "FILE",
    description: "the operator's projects (default: SYNCWARD_PROJECTS_FILE; none: no project limits)",
  },
  "health-config": {
    type: "string",
    value: "FILE",
    description:
      "the operator's custom Lua health checks (resourceCustomizations, as import-argo prints them; default: the projects document's)",
  },
} as const satisfies OptionSpecs;

export const OUTPUT_FORMATS = ["json", "yaml", "wide"] as const;

export const APP_OPTIONS = {
  ...REPO_OPTIONS,
  output: {
    type: "string",
    short: "o",
    value: "FORMAT",
    choices: OUTPUT_FORMATS,
    description: "output format",
  },
  revision: {
    type: "string",
    value: "REF",
    description: "a branch, tag or commit instead of the target branch",
  },
  prune: { type: "boolean", description: "delete objects no longer in Git" },
  "dry-run": { type: "boolean", description: "show what would change, change nothing" },
  force: { type: "boolean", description: "replace objects that cannot be patched; sync even when frozen" },
  "override-prune-limit": { type: "boolean", description: "prune past the configured prune limit" },
  "allow-empty": {
    type: "boolean",
    description: "let this sync prune every object when the render is empty (allowEmpty, this once)",
  },
  "confirm-prune": {
    type: "boolean",
    description: "prune objects marked Prune=confirm or Delete=confirm",
  },
  "sync-policy": {
    type: "string",
    value: "POLICY",
    choices: ["automated", "none", "config"],
    description: "the policy to set (config: back to the config's)",
  },
  "auto-prune": { type: "boolean", description: "with automated: prune on automated syncs" },
  "self-heal": { type: "boolean", description: "with automated: revert changes made out of band" },
  reason: { type: "string", value: "TEXT", description: "why (shown in app get and the check run)" },
  health: { type: "boolean", description: "wait until Healthy" },
  sync: { type: "boolean", description: "wait until Synced" },
  timeout: { type: "string", value: "DURATION", description: "give up after this long (default 5m)" },
} as const satisfies OptionSpecs;

export type AppValues = ValuesOf<typeof APP_OPTIONS>;

export const CONTROLLER_OPTIONS = {
  ...REPO_OPTIONS,
  repos: {
    type: "string",
    value: "DIR",
    description:
      "run every repository directly under DIR that has a syncward config, one app each (named by its directory); replicas share the apps out",
  },
  poll: { type: "string", value: "DURATION", description: "how often to poll the repository (default 3m)" },
  "no-leases": { type: "boolean", description: "do not take a lease per environment (one replica only)" },
  "lease-duration": { type: "string", value: "DURATION", description: "lease duration (default 15s)" },
  identity: {
    type: "string",
    value: "NAME",
    description: "this replica's lease identity (default HOST-PID)",
  },
  "log-level": {
    type: "string",
    value: "LEVEL",
    choices: ["trace", "debug", "info", "warn", "error", "silent"],
    description: "log level (logs go to stderr)",
  },
} as const satisfies OptionSpecs;

export type ControllerValues = ValuesOf<typeof CONTROLLER_OPTIONS>;

const app = () => import("./commands/app.ts");

function appVerb(
  verb: string,
  summary: string,
  args: readonly string[],
  options: OptionSpecs,
  details?: string,
): CommandSpec {
  return {
    summary,
    details,
    args,
    options: { ...REPO_OPTIONS, ...options },
    run: async ({ positionals, values, io }) => (await app()).appCommand(verb, positionals, values, io),
  };
}

const output = pick(APP_OPTIONS, "output");

/** `cluster` verbs: the registry lives on the cluster of --context, in --state-namespace. */
function clusterVerb(
  verb: string,
  summary: string,
  args: readonly string[],
  options: OptionSpecs,
): CommandSpec {
  return {
    summary,
    args,
    options: { ...pick(REPO_OPTIONS, "kubeconfig", "context", "state-namespace"), ...options },
    run: async ({ positionals, values, io }) =>
      (await import("./commands/cluster.ts")).clusterCommand(verb, positionals, values, io),
  };
}

export const COMMANDS: Record<string, CommandSpec> = {
  app: {
    summary: "list, inspect, diff, sync, wait for and set the policy of environments",
    verbs: {
      list: appVerb("list", "environments and their state", [], output),
      get: appVerb("get", "sync policy, status, health and resources of an environment", ["<ENV>"], output),
      diff: appVerb(
        "diff",
        "what a sync would change (exit 1 when there is a diff)",
        ["<ENV>"],
        pick(APP_OPTIONS, "revision", "output"),
      ),
      sync: appVerb(
        "sync",
        "apply Git to the cluster now",
        ["<ENV>"],
        pick(
          APP_OPTIONS,
          "revision",
          "prune",
          "dry-run",
          "force",
          "override-prune-limit",
          "allow-empty",
          "confirm-prune",
          "output",
        ),
      ),
      wait: appVerb(
        "wait",
        "wait until an environment is synced and healthy (exit 1 on timeout)",
        ["<ENV>"],
        pick(APP_OPTIONS, "health", "sync", "timeout", "output"),
        "With neither --health nor --sync, waits for both.",
      ),
      promote: appVerb(
        "promote",
        "deploy the commit the upstream (promotion.after) runs now, once it has proven it",
        ["<ENV>"],
        output,
      ),
      history: appVerb("history", "past operations", ["<ENV>"], output),
      set: appVerb(
        "set",
        "override the sync policy",
        ["<ENV>"],
        pick(APP_OPTIONS, "sync-policy", "auto-prune", "self-heal", "output"),
      ),
      freeze: appVerb(
        "freeze",
        "stop automated sync and self-heal",
        ["<ENV>"],
        pick(APP_OPTIONS, "reason", "output"),
      ),
      unfreeze: appVerb("unfreeze", "resume automated sync and self-heal", ["<ENV>"], output),
      rollback: appVerb(
        "rollback",
        "re-deploy an earlier history entry's revision and pin the environment there",
        ["<ENV>", "[ID|COMMIT]"],
        pick(APP_OPTIONS, "reason", "output"),
        "ID is a history id (`syncward app history ENV` lists them); COMMIT a commit sha or a prefix of at least 7 hex digits, which takes the newest successful entry of that commit. Without either, the newest successful entry of another revision than the current one. While pinned, automated syncs take the pinned revision instead of the branch head; `syncward app unpin ENV` resumes.",
      ),
      unpin: appVerb(
        "unpin",
        "remove a rollback's pin: the next sync takes the branch head",
        ["<ENV>"],
        output,
      ),
    },
  },
  controller: {
    summary: "run the reconcile loop against a local git repository",
    options: CONTROLLER_OPTIONS,
    run: async ({ values, io }) => (await import("./commands/controller.ts")).controllerCommand(values, io),
  },
  health: {
    summary: "assess the health of saved objects (kubectl get -o yaml output)",
    args: ["<FILE...>"],
    options: {
      output: {
        type: "string",
        short: "o",
        value: "FORMAT",
        choices: ["json", "text"],
        description: "output format",
      },
      "health-config": {
        type: "string",
        value: "FILE",
        description:
          "the operator's custom Lua health checks (resourceCustomizations, as import-argo prints them, or a projects document)",
      },
    },
    run: async ({ positionals, values, io }) => {
      const { toArgv } = await import("./spec.ts");
      return (await import("./commands/health.ts")).healthCommand(
        [...toArgv(values), "--", ...positionals],
        io,
      );
    },
  },
  diff: {
    summary: "compare a desired object with a saved live object",
    details:
      "Compares like syncward's engine (server defaults, status and fields only live has are not differences)\nand applies the ignoreDifferences of --env. Secret values are masked. Exit status: 0 in sync, 1 different, 2 error.",
    options: {
      desired: { type: "string", value: "FILE", description: "the object from Git (required)" },
      live: {
        type: "string",
        value: "FILE",
        description: "the live object, saved with kubectl get -o yaml (required)",
      },
      config: { type: "string", value: "FILE", description: "syncward config for ignoreDifferences" },
      env: {
        type: "string",
        value: "NAME",
        description: "environment whose ignoreDifferences apply (default: the first)",
      },
    },
    run: async ({ values, io }) => {
      const { toArgv } = await import("./spec.ts");
      return (await import("./commands/diff.ts")).diffCommand(toArgv(values), io);
    },
  },
  cluster: {
    summary: "the cluster registry: destination clusters syncward deploys to (Secrets in its namespace)",
    verbs: {
      add: clusterVerb(
        "add",
        "register a kubeconfig context as a cluster (its credentials go into a Secret)",
        ["<CONTEXT>"],
        {
          name: { type: "string", value: "NAME", description: "the cluster's name (default: the context's)" },
        },
      ),
      list: clusterVerb("list", "the registered clusters (never their credentials)", [], {
        output: {
          type: "string",
          short: "o",
          value: "FORMAT",
          choices: ["json", "yaml"],
          description: "output format",
        },
      }),
      rm: clusterVerb("rm", "remove a cluster from the registry", ["<NAME>"], {}),
    },
  },
  "import-argo": {
    summary:
      "turn an Argo CD Application, AppProject, argocd-cm or cluster Secret into syncward configuration",
    args: ["<APPLICATION.yaml>"],
    run: async ({ positionals, io }) =>
      (await import("./commands/import-argo.ts")).importArgoCommand(positionals, io),
  },
  version: {
    summary: "print the version and the commit it was built from",
    options: {
      output: {
        type: "string",
        short: "o",
        value: "FORMAT",
        choices: ["json", "yaml"],
        description: "output format",
      },
    },
    run: async ({ values, io }) => (await import("./commands/version.ts")).versionCommand(values, io),
  },
  completion: {
    summary: "print a shell completion script (bash, zsh or fish)",
    details:
      "bash: source <(syncward completion bash)\nzsh:  source <(syncward completion zsh)\nfish: syncward completion fish | source\nEnvironment names are completed from the config of the repository in the current directory (or --repo).",
    args: ["<SHELL>"],
    run: async ({ positionals, io }) =>
      (await import("./commands/completion.ts")).completionCommand(positionals, io),
  },
  __complete: {
    summary: "candidates for the word being completed (used by the completion scripts)",
    hidden: true,
    args: ["[WORDS...]"],
    run: async ({ positionals, io }) =>
      (await import("./commands/completion.ts")).completeCommand(positionals, io),
  },
};
