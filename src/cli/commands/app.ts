// `syncward app list|get|diff|sync|history|set|freeze|unfreeze`: the argocd CLI's verbs over a
// local checkout and the current kubeconfig context.
import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { environmentDiff } from "../../engine/environment-diff.ts";
import { assessHealth, worstHealth } from "../../engine/health/index.ts";
import type { SyncOutcome } from "../../engine/sync.ts";
import { keyOf } from "../../kube/object.ts";
import type { EnvironmentController } from "../../reconciler/environment-controller.ts";
import { effectivePolicy } from "../../reconciler/policy.ts";
import { evaluateWindows } from "../../reconciler/sync-windows.ts";
import type { EnvironmentState } from "../../state/types.ts";
import { type CliContext, GLOBAL_OPTIONS, openContext, UsageError } from "../context.ts";
import { fields, short, table } from "../format.ts";
import { type CliIO, EXIT } from "../io.ts";

export const APP_USAGE = `usage: syncward app <command> [ENV] [options]
  list                                   environments and their state
  get ENV                                sync policy, status, health and resources
  diff ENV [--revision REF]              what a sync would change (exit 1 when there is a diff)
  sync ENV [--revision REF] [--prune] [--dry-run] [--force] [--override-prune-limit] [--allow-empty] [--confirm-prune]
  history ENV                            past operations
  set ENV --sync-policy automated|none|config [--auto-prune] [--self-heal]
  freeze ENV [--reason TEXT]             stop automated sync and self-heal
  unfreeze ENV
options: --repo PATH (default .), --kubeconfig FILE, --context NAME, --config FILE, -o json`;

const actor = () => process.env.SYNCWARD_ACTOR ?? userInfo().username;

function requireEnv(positionals: string[], verb: string): string {
  const env = positionals[0];
  if (!env) throw new UsageError(`app ${verb}: missing ENV (usage: syncward app ${verb} ENV)`);
  return env;
}

function json(io: CliIO, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}

function windowLabel(c: EnvironmentController): string {
  if (c.env.syncWindows.length === 0) return "Sync Allowed";
  const w = evaluateWindows(c.env.syncWindows, new Date(), false);
  return w.allowed
    ? "Sync Allowed"
    : `Sync Denied (${w.reason}${w.nextOpen ? `; opens ${w.nextOpen.toISOString()}` : ""})`;
}

function historyRows(state: EnvironmentState): string[][] {
  return state.history.map((h) => [
    String(h.id),
    h.finishedAt.replace(/\.\d+Z$/, "Z"),
    short(h.revision),
    h.trigger,
    h.actor,
    h.result,
  ]);
}

function printOutcome(io: CliIO, outcome: SyncOutcome): void {
  const rows = outcome.resources.map((r) => [
    r.group,
    r.kind,
    r.namespace,
    r.name,
    r.status,
    r.health?.status ?? "",
    r.message,
  ]);
  if (rows.length > 0)
    io.out(table(["GROUP", "KIND", "NAMESPACE", "NAME", "STATUS", "HEALTH", "MESSAGE"], rows));
  io.out(
    `\n${outcome.dryRun ? "Dry run" : "Operation"}: ${outcome.phase} at ${short(outcome.revision)}: ${outcome.message}`,
  );
}

export async function appCommand(argv: string[], io: CliIO): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === "help" || verb === "--help") {
    io.out(APP_USAGE);
    return verb ? EXIT.ok : EXIT.error;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      ...GLOBAL_OPTIONS,
      output: { type: "string", short: "o" },
      revision: { type: "string" },
      prune: { type: "boolean" },
      "dry-run": { type: "boolean" },
      force: { type: "boolean" },
      "override-prune-limit": { type: "boolean" },
      "allow-empty": { type: "boolean" },
      "confirm-prune": { type: "boolean" },
      "sync-policy": { type: "string" },
      "auto-prune": { type: "boolean" },
      "self-heal": { type: "boolean" },
      reason: { type: "string" },
    },
  });
  const asJson = values.output === "json";
  if (values.output && !asJson)
    throw new UsageError(`unknown output format "${values.output}" (only -o json)`);
  const known = ["list", "get", "diff", "sync", "history", "set", "freeze", "unfreeze"];
  if (!known.includes(verb)) throw new UsageError(`unknown app command "${verb}"\n${APP_USAGE}`);

  const ctx = await openContext(values);
  try {
    if (verb === "list") return await list(ctx, io, asJson);
    const controller = ctx.reconciler.controller(requireEnv(positionals, verb));
    switch (verb) {
      case "get":
        return await get(ctx, controller, io, asJson);
      case "diff": {
        const { assessment } = await controller.inspect(values.revision);
        const text = environmentDiff(assessment.plan, controller.env);
        if (asJson) json(io, { environment: controller.env.name, inSync: text === "", diff: text });
        else if (text) io.out(text);
        return text ? EXIT.different : EXIT.ok;
      }
      case "sync": {
        const progress = io.isTTY && !asJson;
        const outcome = await controller.sync({
          trigger: "cli",
          actor: actor(),
          revision: values.revision,
          prune: values.prune ? true : undefined,
          dryRun: values["dry-run"],
          force: values.force,
          ignoreFreeze: values.force,
          overridePruneLimit: values["override-prune-limit"],
          allowEmpty: values["allow-empty"],
          confirmPrune: values["confirm-prune"],
          onProgress: progress
            ? (e) => {
                if (e.type === "wave") io.err(`wave ${e.wave}: applying ${e.objects} object(s)`);
                else if (e.type === "waiting")
                  io.err(`wave ${e.wave}: waiting for health: ${e.pending.join(", ")}`);
                else if (e.type === "pruned") io.err(`pruned ${e.key}`);
                else if (e.type === "hook") io.err(`${e.phase} hook ${e.name}: ${e.outcome}`);
              }
            : undefined,
        });
        if (asJson) json(io, outcome);
        else printOutcome(io, outcome);
        return outcome.phase === "Succeeded" ? EXIT.ok : EXIT.different;
      }
      case "history": {
        const state = await ctx.reconciler.store.load(controller.instance);
        if (asJson) json(io, state.history);
        else io.out(table(["ID", "DATE", "REVISION", "TRIGGER", "ACTOR", "RESULT"], historyRows(state)));
        return EXIT.ok;
      }
      case "set": {
        const mode = values["sync-policy"];
        if (mode !== "automated" && mode !== "none" && mode !== "config") {
          throw new UsageError("app set: --sync-policy must be automated, none or config");
        }
        const state = await controller.setPolicy(
          mode === "config"
            ? undefined
            : {
                automated: mode === "automated",
                prune: Boolean(values["auto-prune"]),
                selfHeal: Boolean(values["self-heal"]),
                by: actor(),
              },
        );
        const policy = effectivePolicy(controller.env, state);
        if (asJson) json(io, policy);
        else io.out(`Sync Policy: ${policy.label}`);
        return EXIT.ok;
      }
      case "freeze":
      case "unfreeze": {
        const state = await controller.setFreeze(
          verb === "freeze" ? { by: actor(), reason: values.reason ?? "" } : undefined,
        );
        const policy = effectivePolicy(controller.env, state);
        if (asJson) json(io, policy);
        else io.out(`Sync Policy: ${policy.label}`);
        return EXIT.ok;
      }
    }
    return EXIT.error;
  } finally {
    await ctx.close();
  }
}

async function list(ctx: CliContext, io: CliIO, asJson: boolean): Promise<number> {
  const rows = await Promise.all(
    ctx.reconciler.environments.map(async (c) => {
      const state = await ctx.reconciler.store.load(c.instance);
      return { c, state, policy: effectivePolicy(c.env, state) };
    }),
  );
  if (asJson) {
    json(
      io,
      rows.map(({ c, state, policy }) => ({
        name: c.env.name,
        namespace: c.env.destination.namespace,
        branch: c.env.source.branch,
        path: c.env.source.path,
        syncPolicy: policy.label,
        syncStatus: state.syncStatus,
        revision: state.lastSyncedRevision ?? null,
      })),
    );
  } else {
    io.out(
      table(
        ["NAME", "NAMESPACE", "TARGET", "PATH", "SYNCPOLICY", "STATUS", "REVISION"],
        rows.map(({ c, state, policy }) => [
          c.env.name,
          c.env.destination.namespace,
          c.env.source.branch,
          c.env.source.path,
          policy.label,
          state.syncStatus,
          short(state.lastSyncedRevision),
        ]),
      ),
    );
  }
  return EXIT.ok;
}

async function get(ctx: CliContext, c: EnvironmentController, io: CliIO, asJson: boolean): Promise<number> {
  const { revision, assessment, state } = await c.inspect();
  const { plan } = assessment;
  const policy = effectivePolicy(c.env, state);
  const pending = new Map(plan.steps.flatMap((s) => s.tasks).map((t) => [t.key, t]));
  const resources = assessment.tracked.map((obj) => {
    const k = keyOf(obj);
    const key = `${k.group}/${k.kind}:${k.namespace}/${k.name}`;
    const task = pending.get(key);
    const live = assessment.live.get(key);
    const health = live ? assessHealth(live) : { status: "Missing" as const };
    const message = !task
      ? ""
      : task.action === "create"
        ? "missing from the cluster"
        : task.drifted.length > 0
          ? `drifted: ${task.drifted.join(", ")}`
          : "changed in Git";
    return {
      group: k.group,
      kind: k.kind,
      namespace: k.namespace,
      name: k.name,
      status: task ? "OutOfSync" : "Synced",
      health: health?.status ?? "",
      message,
    };
  });
  for (const p of [...plan.prunes, ...plan.requiresPruning]) {
    const k = keyOf(p.live);
    resources.push({
      group: k.group,
      kind: k.kind,
      namespace: k.namespace,
      name: k.name,
      status: "OutOfSync",
      health: assessHealth(p.live)?.status ?? "",
      message: "requires pruning",
    });
  }
  const synced = resources.every((r) => r.status === "Synced");
  const health =
    worstHealth(resources.map((r) => (r.health ? { status: r.health as never } : undefined)))?.status ??
    "Healthy";
  const branch = c.env.source.branch;
  const syncStatus = `${synced ? "Synced to" : "OutOfSync from"} ${branch} (${short(revision)})`;
  if (asJson) {
    json(io, {
      name: c.instance,
      environment: c.env.name,
      repo: ctx.repo,
      target: branch,
      path: c.env.source.path,
      namespace: c.env.destination.namespace,
      syncWindow: windowLabel(c),
      syncPolicy: policy,
      syncStatus: synced ? "Synced" : "OutOfSync",
      revision,
      health,
      lastSyncedRevision: state.lastSyncedRevision ?? null,
      stuck: state.stuck ?? null,
      freeze: state.freeze ?? null,
      resources,
    });
    return EXIT.ok;
  }
  const pairs: Array<[string, string]> = [
    ["Name", c.instance],
    ["Repo", ctx.repo],
    ["Target", branch],
    ["Path", c.env.source.path],
    ["Namespace", c.env.destination.namespace],
    ["SyncWindow", windowLabel(c)],
    [
      "Sync Policy",
      `${policy.label}${policy.source === "override" ? "" : policy.source === "config" ? "" : ""}`,
    ],
    ["Sync Status", syncStatus],
    ["Health Status", health],
  ];
  if (state.stuck) pairs.push(["Stuck", `${short(state.stuck.revision)}: ${state.stuck.reason}`]);
  io.out(fields(pairs));
  io.out("");
  io.out(
    table(
      ["GROUP", "KIND", "NAMESPACE", "NAME", "STATUS", "HEALTH", "MESSAGE"],
      resources.map((r) => [r.group, r.kind, r.namespace, r.name, r.status, r.health, r.message]),
    ),
  );
  return EXIT.ok;
}
