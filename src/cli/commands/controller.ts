// `syncward controller --repo PATH`: the reconcile loop against a local git repository, without
// GitHub. How a person tries syncward on a laptop, and what the demo runs.
import { existsSync, readdirSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { parseDuration } from "../../config/duration.ts";
import { DEFAULT_CONFIG_FILE } from "../../config/load.ts";
import { createLogger, logLevel } from "../../observability/logger.ts";
import { Shutdown, stopTimeoutMs } from "../../observability/shutdown.ts";
import type { Logger } from "../../reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../reconciler/events.ts";
import { Reconciler } from "../../reconciler/reconciler.ts";
import { LocalGitSource } from "../../reconciler/revision-source.ts";
import { Shard } from "../../reconciler/shard.ts";
import { checkoutApp } from "../app-identity.ts";
import { loadRepoConfig, makeClient, openContext, treeCacheDir, UsageError } from "../context.ts";
import { short } from "../format.ts";
import type { CliIO } from "../io.ts";
import type { ControllerValues } from "../registry.ts";

/** One line a person reads per event (the structured log carries the details). */
export function describeEvent(e: ReconcilerEvent): string {
  const at = `[${e.env}] ${short(e.revision)}`;
  switch (e.type) {
    case "synced":
      return `${at} sync (${e.trigger} by ${e.actor}): ${e.outcome.phase}: ${e.outcome.message}`;
    case "selfHealed":
      return `${at} self-heal: reverted ${e.drifted.join(", ")} (${e.outcome.phase})${securityNote(e.reverted)}`;
    case "driftFight":
      return `${at} DRIFT FIGHT: ${e.fight.object} healed ${e.fight.heals} times in ${e.fight.windowMinutes} min; ${e.fight.fields.join(", ")} changed by ${e.fight.managers.join(", ") || "an unknown field manager"}; backing off ${Math.round(e.fight.backoffMs / 1000)}s. To stop fighting, add:\n${e.fight.ignoreSnippet}`;
    case "outOfSync":
      return `${at} OutOfSync (${e.reason}): ${[...e.drifted, ...e.requiresPruning.map((k) => `${k} requires pruning`)].join(", ")}`;
    case "renderError":
      return `${at} render failed, nothing applied:\n${e.message}`;
    case "clusterUnavailable":
      return `${at} Unknown: ${e.message}; nothing applied`;
    case "stuck":
      return `${at} stuck: ${e.reason}`;
    case "refused":
      return `${at} ${e.outcome.message} (${e.trigger} by ${e.actor})`;
    case "unchanged":
      return `${at} ${e.entry.message}: renders what is deployed, nothing to sync or approve`;
    case "waiting":
      return `${at} waiting: ${e.reason}${e.until ? ` until ${e.until}` : ""}`;
    case "awaitingApproval":
      return `${at} ${e.reason ?? `waiting for approval (${e.approvals.length}/${e.needed})`}${e.approvals.length > 0 ? ` (approved by ${e.approvals.join(", ")})` : ""}`;
    case "syncStarted":
      return `${at} syncing ${e.changes} change(s) (${e.trigger} by ${e.actor})`;
    case "syncProgress":
      return `${at} wave ${e.wave}: ${e.objects} object(s)`;
    case "autoRollback":
      return e.refused !== undefined
        ? `${at} AUTOMATIC ROLLBACK not done: ${e.refused}`
        : `${at} AUTOMATIC ROLLBACK to ${short(e.to ?? "")}: ${e.note?.reason ?? ""}; pinned (${e.outcome?.phase ?? "?"}), \`syncward app unpin ${e.env}\` resumes`;
    case "orphans":
      return `${at} not declared in Git (left alone): ${e.orphans.map((o) => (o.risk ? `${o.object} [${o.risk}]` : o.object)).join(", ")}`;
  }
}

export async function controllerCommand(values: ControllerValues, io: CliIO): Promise<number> {
  const pollIntervalMs = values.poll ? parseDuration(values.poll) : undefined;
  if (values.poll && pollIntervalMs === undefined)
    throw new UsageError(`--poll: "${values.poll}" is not a duration (e.g. 30s, 3m)`);
  const leaseMs = values["lease-duration"] ? parseDuration(values["lease-duration"]) : undefined;
  if (values["lease-duration"] && (leaseMs === undefined || leaseMs < 1000)) {
    throw new UsageError(`--lease-duration: "${values["lease-duration"]}" is not a duration of at least 1s`);
  }
  // Logs go to stderr as JSON; stdout carries one readable line per event.
  const level = values["log-level"]
    ? logLevel(values["log-level"], "--log-level")
    : logLevel(process.env.LOG_LEVEL);
  const log = createLogger({ level, fd: 2 });
  const options = {
    log,
    leases: !values["no-leases"],
    watch: true,
    pollIntervalMs,
    identity: values.identity ?? `${hostname()}-${process.pid}`,
    leaseDurationSeconds: leaseMs ? Math.round(leaseMs / 1000) : undefined,
  };
  if (values.repos !== undefined) return manyRepositories(values, values.repos, options, io);
  const ctx = await openContext(values, { ...options, emit: (e) => io.out(describeEvent(e)) });
  io.out(
    `syncward controller: watching ${ctx.config.environments.map((e) => e.name).join(", ")} of ${ctx.repo} on ${ctx.client.server.origin}`,
  );
  ctx.reconciler.start();
  return stopOnSignal(log, io, () => ctx.close());
}

/** Waits for SIGTERM or SIGINT, then stops within SYNCWARD_STOP_TIMEOUT: 0 when all is released. */
async function stopOnSignal(log: Logger, io: CliIO, close: () => Promise<unknown>): Promise<number> {
  const shutdown = new Shutdown({ log, timeoutMs: stopTimeoutMs() });
  shutdown.add("stopping the reconcile loops and releasing every Lease", close);
  await untilSignalled();
  io.out("syncward controller: stopping");
  return shutdown.stop("signal");
}

function untilSignalled(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

/**
 * `--repos DIR`: every repository under DIR is an app of its own, and with leases the replicas
 * running over the same DIR share the apps out (reconciler/shard.ts) instead of contending for all.
 */
async function manyRepositories(
  values: ControllerValues,
  dir: string,
  options: {
    log: Logger;
    leases: boolean;
    watch: boolean;
    pollIntervalMs?: number;
    identity: string;
    leaseDurationSeconds?: number;
  },
  io: CliIO,
): Promise<number> {
  for (const single of ["repo", "config", "app"] as const) {
    if (values[single] !== undefined)
      throw new UsageError(
        `--${single} names one repository; with --repos each app is a directory under ${dir}`,
      );
  }
  const repos = repositoriesUnder(dir);
  if (repos.length === 0)
    throw new UsageError(
      `--repos: no git repository with ${DEFAULT_CONFIG_FILE} directly under ${resolve(dir)}`,
    );
  const client = makeClient(values);
  const stateNamespace = values["state-namespace"] ?? "syncward";
  const shard = options.leases
    ? new Shard({
        client,
        namespace: stateNamespace,
        identity: options.identity,
        leaseDurationSeconds: options.leaseDurationSeconds,
        log: options.log,
      })
    : undefined;
  const reconcilers: Reconciler[] = [];
  for (const repo of repos) {
    const { config } = await loadRepoConfig({ repo });
    const app = checkoutApp(repo);
    reconcilers.push(
      new Reconciler({
        ...options,
        app: app.id,
        repository: app.name,
        legacy: app.legacy ? { app: app.legacy } : undefined,
        config,
        client,
        source: new LocalGitSource(repo, treeCacheDir()),
        emit: (e) => io.out(`${app.name} ${describeEvent(e)}`),
        stateNamespace,
        shard,
      }),
    );
  }
  io.out(
    `syncward controller: watching ${reconcilers.length} apps under ${resolve(dir)} on ${client.server.origin} as ${options.identity}`,
  );
  for (const r of reconcilers) r.start();
  return stopOnSignal(options.log, io, async () => {
    await Promise.all(reconcilers.map((r) => r.stop()));
    await shard?.stop();
    client.close();
  });
}

/** Git repositories directly under `dir` that carry a syncward config, sorted by name. */
function repositoriesUnder(dir: string): string[] {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new UsageError(`--repos: ${root} is not a directory`);
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(root, e.name))
    .filter((repo) => existsSync(join(repo, ".git")) && existsSync(join(repo, DEFAULT_CONFIG_FILE)))
    .sort();
}

/** ` SECURITY: privileged by kubectl-patch; ...` for the reverts that matter, else "". */
function securityNote(
  reverted: Array<{ path: string; manager?: string; security?: string; spoofing?: string }> = [],
): string {
  const risky = reverted.filter((r) => r.security);
  const spoofed = reverted.filter((r) => r.spoofing);
  const security =
    risky.length === 0
      ? ""
      : ` SECURITY: ${risky.map((r) => `${r.security} at ${r.path} by ${r.manager ?? "an unknown manager"}`).join("; ")}`;
  const spoofing =
    spoofed.length === 0 ? "" : ` SPOOFING: ${spoofed.map((r) => `${r.path} ${r.spoofing}`).join("; ")}`;
  return security + spoofing;
}
