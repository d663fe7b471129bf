// `syncward app list|get|diff|sync|promote|history|set|freeze|unfreeze|rollback|unpin`: the argocd CLI's verbs over a
// local checkout and the current kubeconfig context.
import { userInfo } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { parseDuration } from "../../config/duration.ts";
import { fieldManagersOf } from "../../engine/diff/index.ts";
import { environmentDiff } from "../../engine/environment-diff.ts";
import { assessHealth, worstHealth } from "../../engine/health/index.ts";
import type { SyncOutcome } from "../../engine/sync.ts";
import { type KubeObject, keyOf } from "../../kube/object.ts";
import type { EnvironmentController } from "../../reconciler/environment-controller.ts";
import { pinnedLine, type RollbackTarget, rollbackTargetOf, rollbackText } from "../../reconciler/pin.ts";
import { effectivePolicy } from "../../reconciler/policy.ts";
import { evaluateWindows } from "../../reconciler/sync-windows.ts";
import type { EnvironmentState } from "../../state/types.ts";
import { colorEnabled, colorizeDiff } from "../color.ts";
import { type CliContext, openContext, UsageError } from "../context.ts";
import { destinationMoveMessage } from "../destination-move.ts";
import { fields, short, table } from "../format.ts";
import { type CliIO, EXIT } from "../io.ts";
import { printStructured, type Structured, structured } from "../output.ts";
import type { AppValues } from "../registry.ts";
import { evidenceLines, promoteVerb } from "./app-promote.ts";

const actor = () => process.env.SYNCWARD_ACTOR ?? userInfo().username;

function requireEnv(positionals: string[], verb: string): string {
  const env = positionals[0];
  if (!env) throw new UsageError(`app ${verb}: missing ENV (usage: syncward app ${verb} ENV)`);
  return env;
}

/** `-o json|yaml`, or undefined for the tables (`-o wide` adds columns to them). */
interface Output {
  data?: Structured;
  wide: boolean;
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
    // Entries written before titles were kept have none.
    h.title ?? "",
  ]);
}

/** `app rollback ENV [ID|COMMIT]`: a history id (`app history` lists them) or a commit. */
function rollbackTargetArg(text: string | undefined): RollbackTarget | undefined {
  if (text === undefined) return undefined;
  const target = rollbackTargetOf(text);
  if ("error" in target)
    throw new UsageError(`app rollback: "${text}" ${target.error} (see syncward app history ENV)`);
  return target;
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

export async function appCommand(
  verb: string,
  positionals: string[],
  values: AppValues,
  io: CliIO,
): Promise<number> {
  const output: Output = { data: structured(values.output), wide: values.output === "wide" };
  const asJson = output.data !== undefined;
  const print = (value: unknown) => printStructured(io, output.data ?? "json", value);
  // Checked before connecting: a missing ENV or a bad duration changes nothing and needs no cluster.
  const env = verb === "list" ? undefined : requireEnv(positionals, verb);
  const timeoutMs = verb === "wait" ? parseDuration(values.timeout ?? "5m") : undefined;
  const target = verb === "rollback" ? rollbackTargetArg(positionals[1]) : undefined;
  if (verb === "wait" && (timeoutMs === undefined || timeoutMs <= 0))
    throw new UsageError(`app wait: --timeout "${values.timeout}" is not a duration (e.g. 90s, 5m)`);

  const ctx = await openContext(values);
  try {
    if (env === undefined) return await list(ctx, io, output);
    const controller = ctx.reconciler.controller(env);
    switch (verb) {
      case "get":
        return await get(ctx, controller, io, output);
      case "wait":
        return await wait(controller, io, output, {
          sync: Boolean(values.sync) || !values.health,
          health: Boolean(values.health) || !values.sync,
          timeoutMs: timeoutMs ?? 0,
        });
      case "diff": {
        const { assessment } = await controller.inspect(values.revision);
        const text = environmentDiff(assessment.plan, controller.env);
        if (asJson) print({ environment: controller.env.name, inSync: text === "", diff: text });
        else if (text) io.out(colorEnabled(io) ? colorizeDiff(text) : text);
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
        // A destination moved since the last sync is refused object by object: say what moved instead.
        const moved =
          outcome.phase === "Succeeded"
            ? undefined
            : destinationMoveMessage(
                controller.env,
                await ctx.reconciler.store.load(controller.instance),
                outcome.message,
              );
        const shown = moved === undefined ? outcome : { ...outcome, message: moved };
        if (asJson) print(shown);
        else printOutcome(io, shown);
        return outcome.phase === "Succeeded" ? EXIT.ok : EXIT.different;
      }
      case "history": {
        const state = await ctx.reconciler.store.load(controller.instance);
        if (asJson) print(state.history);
        else {
          if (output.wide)
            io.out(
              table(
                ["ID", "DATE", "REVISION", "TRIGGER", "ACTOR", "RESULT", "TITLE", "STARTED", "MESSAGE"],
                historyRows(state).map((row, i) => [
                  ...row,
                  state.history[i]?.startedAt.replace(/\.\d+Z$/, "Z") ?? "",
                  state.history[i]?.message ?? "",
                ]),
              ),
            );
          else
            io.out(
              table(["ID", "DATE", "REVISION", "TRIGGER", "ACTOR", "RESULT", "TITLE"], historyRows(state)),
            );
          const reverts = revertLines(state);
          if (reverts.length > 0) io.out(`\nREVERTED\n${reverts.join("\n")}`);
          const promotions = evidenceLines(state.history, "promotion");
          if (promotions.length > 0) io.out(`\nPROMOTED\n${promotions.join("\n")}`);
          const byHand = state.history.flatMap((h) =>
            h.rollback ? [`${h.id}: ${rollbackText(h.rollback)}`] : [],
          );
          if (byHand.length > 0) io.out(`\nROLLED BACK\n${byHand.join("\n")}`);
          const rollbacks = evidenceLines(state.history, "autoRollback");
          if (rollbacks.length > 0) io.out(`\nROLLED BACK AUTOMATICALLY\n${rollbacks.join("\n")}`);
        }
        return EXIT.ok;
      }
      case "promote":
        return await promoteVerb(controller, actor(), io, asJson ? print : undefined);
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
        if (asJson) print(policy);
        else io.out(`Sync Policy: ${policy.label}`);
        return EXIT.ok;
      }
      case "rollback": {
        const done = await controller.rollback({
          actor: actor(),
          ...(target ? { target } : {}),
          reason: values.reason,
        });
        if ("refused" in done) throw new UsageError(`app rollback: ${done.refused}`);
        if (asJson) print(done);
        else printOutcome(io, done);
        return done.phase === "Succeeded" ? EXIT.ok : EXIT.different;
      }
      case "unpin": {
        const removed = await controller.unpin(actor());
        if (asJson) print({ environment: controller.env.name, unpinned: removed ?? null });
        else
          io.out(
            removed
              ? `Unpinned ${short(removed.revision)}: the next sync takes the head of ${controller.env.source.branch}`
              : `${controller.env.name} is not pinned`,
          );
        return EXIT.ok;
      }
      case "freeze":
      case "unfreeze": {
        const state = await controller.setFreeze(
          verb === "freeze" ? { by: actor(), reason: values.reason ?? "" } : undefined,
        );
        const policy = effectivePolicy(controller.env, state);
        if (asJson) print(policy);
        else io.out(`Sync Policy: ${policy.label}`);
        return EXIT.ok;
      }
    }
    return EXIT.error;
  } finally {
    await ctx.close();
  }
}

async function list(ctx: CliContext, io: CliIO, output: Output): Promise<number> {
  const rows = await Promise.all(
    ctx.reconciler.environments.map(async (c) => {
      const state = await ctx.reconciler.store.load(c.instance);
      return { c, state, policy: effectivePolicy(c.env, state) };
    }),
  );
  if (output.data) {
    printStructured(
      io,
      output.data,
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
    const wide = ["INSTANCE", "LAST SYNC", "RESULT"];
    io.out(
      table(
        [
          "NAME",
          "NAMESPACE",
          "TARGET",
          "PATH",
          "SYNCPOLICY",
          "STATUS",
          "REVISION",
          ...(output.wide ? wide : []),
        ],
        rows.map(({ c, state, policy }) => {
          const last = state.history.at(-1);
          return [
            c.env.name,
            c.env.destination.namespace,
            c.env.source.branch,
            c.env.source.path,
            policy.label,
            state.syncStatus,
            short(state.lastSyncedRevision),
            ...(output.wide
              ? [c.instance, last?.finishedAt.replace(/\.\d+Z$/, "Z") ?? "", last?.result ?? ""]
              : []),
          ];
        }),
      ),
    );
  }
  return EXIT.ok;
}

/** Sync status and health of every resource, as `app get` shows them and `app wait` waits for. */
async function environmentStatus(c: EnvironmentController) {
  const { revision, assessment, state, rendered } = await c.inspect();
  const { plan } = assessment;
  const chart = rendered.chart && `${rendered.chart.name} ${rendered.chart.version}`;
  const policy = effectivePolicy(c.env, state);
  const pending = new Map(plan.steps.flatMap((s) => s.tasks).map((t) => [t.key, t]));
  const resources = assessment.tracked.map((obj) => {
    const k = keyOf(obj);
    const key = `${k.group}/${k.kind}:${k.namespace}/${k.name}`;
    const task = pending.get(key);
    const live = assessment.live.get(key);
    const health = live ? assessHealth(live, c.health) : { status: "Missing" as const };
    const message = !task
      ? ""
      : task.action === "create"
        ? "missing from the cluster"
        : task.drifted.length > 0
          ? `drifted: ${task.drifted.map((p) => withManagers(p, task.live)).join(", ")}`
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
      health: assessHealth(p.live, c.health)?.status ?? "",
      message: "requires pruning",
    });
  }
  const synced = resources.every((r) => r.status === "Synced");
  const health =
    worstHealth(resources.map((r) => (r.health ? { status: r.health as never } : undefined)))?.status ??
    "Healthy";
  return { revision, state, policy, resources, synced, health, chart, rendered };
}

async function get(ctx: CliContext, c: EnvironmentController, io: CliIO, output: Output): Promise<number> {
  const { revision, state, policy, resources, synced, health, chart, rendered } = await environmentStatus(c);
  const branch = c.env.source.branch;
  // A pinned environment follows its pin, not the branch: say which it is compared with.
  const target = state.pin ? "pin" : branch;
  const syncStatus = `${synced ? "Synced to" : "OutOfSync from"} ${target} (${short(revision)})`;
  if (output.data) {
    printStructured(io, output.data, {
      name: `${ctx.appName}.${c.env.name}`,
      instance: c.instance,
      environment: c.env.name,
      repo: ctx.repo,
      target: branch,
      path: c.env.source.path,
      ...(rendered.chart ? { chart: rendered.chart } : {}),
      namespace: c.env.destination.namespace,
      ...(c.env.project ? { project: c.env.project.name } : {}),
      syncWindow: windowLabel(c),
      syncPolicy: policy,
      syncStatus: synced ? "Synced" : "OutOfSync",
      revision,
      health,
      lastSyncedRevision: state.lastSyncedRevision ?? null,
      stuck: state.stuck ?? null,
      freeze: state.freeze ?? null,
      pin: state.pin ?? null,
      resources,
    });
    return EXIT.ok;
  }
  const pairs: Array<[string, string]> = [
    ["Name", `${ctx.appName}.${c.env.name}`],
    ["Instance", c.instance],
    ["Repo", ctx.repo],
    ["Target", branch],
    ["Path", c.env.source.path],
    ...(chart ? [["Chart", chart] as [string, string]] : []),
    ["Namespace", c.env.destination.namespace],
    ...(c.env.project ? [["Project", c.env.project.name] as [string, string]] : []),
    ["SyncWindow", windowLabel(c)],
    [
      "Sync Policy",
      `${policy.label}${policy.source === "override" ? "" : policy.source === "config" ? "" : ""}`,
    ],
    ["Sync Status", syncStatus],
    ["Health Status", health],
  ];
  if (state.stuck) pairs.push(["Stuck", `${short(state.stuck.revision)}: ${state.stuck.reason}`]);
  if (state.pin) pairs.push(["Pinned", pinnedLine(state.pin, c.env.name)]);
  const rolledBack = state.autoRollbacks?.at(-1);
  if (rolledBack)
    pairs.push(["Auto Rollback", `${short(rolledBack.revision)} at ${rolledBack.at}: ${rolledBack.outcome}`]);
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

/** `/spec/replicas (by kubectl)`: who changed a drifted field, from the live object's managedFields. */
function withManagers(pointer: string, live: KubeObject | undefined): string {
  const managers = live ? fieldManagersOf(live, pointer).filter((m) => m !== "syncward") : [];
  return managers.length > 0 ? `${pointer} (by ${managers.join(", ")})` : pointer;
}

/** `#2 /spec/replicas: kubectl (Update scale) at ...`, with a SECURITY mark where it matters. */
function revertLines(state: EnvironmentState): string[] {
  return state.history.flatMap((h) =>
    (h.reverted ?? []).map(
      (r) =>
        `#${h.id} ${r.object} ${r.path}: ${r.manager ?? "unknown manager"}${r.operation ? ` (${r.operation})` : ""}${r.at ? ` at ${r.at}` : ""}${r.value !== undefined ? ` was ${r.value}` : ""}${r.security ? ` [SECURITY: ${r.security}]` : ""}`,
    ),
  );
}

/** Polls until the environment is Synced and/or Healthy, like `argocd app wait`; exit 1 on timeout. */
async function wait(
  c: EnvironmentController,
  io: CliIO,
  output: Output,
  want: { sync: boolean; health: boolean; timeoutMs: number },
): Promise<number> {
  const deadline = Date.now() + want.timeoutMs;
  let last = "";
  for (;;) {
    const { synced, health, revision } = await environmentStatus(c);
    const done = (!want.sync || synced) && (!want.health || health === "Healthy");
    const line = `${c.env.name}: ${synced ? "Synced" : "OutOfSync"}, ${health} at ${short(revision)}`;
    if (done || Date.now() >= deadline) {
      const result = {
        environment: c.env.name,
        syncStatus: synced ? "Synced" : "OutOfSync",
        health,
        revision,
        done,
      };
      if (output.data) printStructured(io, output.data, result);
      else
        io.out(
          done
            ? line
            : `${line}: timed out waiting for ${[want.sync && "Synced", want.health && "Healthy"].filter(Boolean).join(" and ")}`,
        );
      return done ? EXIT.ok : EXIT.different;
    }
    if (io.isTTY && line !== last) io.err(line);
    last = line;
    await sleep(Math.min(2000, Math.max(0, deadline - Date.now())));
  }
}
