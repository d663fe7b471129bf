// Outbound webhooks: an environment's `notify` targets are told about its syncs as CloudEvents
// (structured JSON, CloudEvents 1.0), signed with HMAC-SHA256 when the target names a key, and
// sent again with backoff until the receiver answers 2xx. Every attempt of one event carries the
// same CloudEvents `id`, so a receiver that saw it already can drop it.
//
// A repository's configuration chooses the URL, so it could point syncward at anything its pod
// can reach (the cloud's metadata endpoint, the API server, a database): nothing is sent to a host
// the operator has not listed in SYNCWARD_NOTIFY_HOSTS, whatever the configuration says.
import { createHmac, randomUUID } from "node:crypto";
import type { EnvironmentConfig, NotifyEvent, NotifyTarget } from "../config/types.ts";
import type { Logger } from "../reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../reconciler/events.ts";
import { sleep } from "../util/sleep.ts";

export interface CloudEvent {
  specversion: "1.0";
  id: string;
  source: string;
  type: string;
  time: string;
  subject: string;
  datacontenttype: "application/json";
  data: Record<string, unknown>;
}

/** Which notification a reconciler event is, if any. */
export function notifyEventOf(event: ReconcilerEvent): NotifyEvent | undefined {
  switch (event.type) {
    case "syncStarted":
      return "sync-started";
    case "synced":
      return event.outcome.phase === "Succeeded" ? "sync-succeeded" : "sync-failed";
    case "awaitingApproval":
      return "awaiting-approval";
    case "driftFight":
      return "drift-fight";
    case "autoRollback":
      return "auto-rollback";
    default:
      return undefined;
  }
}

/** The CloudEvent for a reconciler event; its data holds names, counts and messages, never object contents. */
export function cloudEventOf(event: ReconcilerEvent, kind: NotifyEvent, now = new Date()): CloudEvent {
  const data: Record<string, unknown> = {
    app: event.instance.slice(0, event.instance.lastIndexOf(".")),
    environment: event.env,
    revision: event.revision,
  };
  if ("trigger" in event) data.trigger = event.trigger;
  if ("actor" in event) data.actor = event.actor;
  if (event.type === "syncStarted") data.changes = event.changes;
  if (event.type === "synced") {
    data.phase = event.outcome.phase;
    data.message = event.outcome.message;
    data.totals = event.outcome.totals;
  }
  if (event.type === "awaitingApproval") {
    data.approvals = event.approvals.length;
    data.needed = event.needed;
  }
  if (event.type === "autoRollback") {
    if (event.to) data.to = event.to;
    if (event.note) data.reason = event.note.reason;
    if (event.outcome) data.phase = event.outcome.phase;
    if (event.refused !== undefined) data.refused = event.refused;
  }
  if (event.type === "driftFight") {
    data.object = event.fight.object;
    data.fields = event.fight.fields;
    data.managers = event.fight.managers;
  }
  return {
    specversion: "1.0",
    id: randomUUID(),
    source: `syncward/${event.instance}`,
    type: `dev.syncward.${kind.replace("-", ".")}`,
    time: now.toISOString(),
    subject: event.revision,
    datacontenttype: "application/json",
    data,
  };
}

/** `sha256=<hex>` of the body under `key`, as GitHub signs its own webhooks. */
export function signatureOf(body: string, key: string): string {
  return `sha256=${createHmac("sha256", key).update(body).digest("hex")}`;
}

/** The operator's allowed hosts (SYNCWARD_NOTIFY_HOSTS: comma-separated, `*.example.com` allowed). */
export function allowedHosts(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.SYNCWARD_NOTIFY_HOSTS ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
}

export function hostAllowed(url: string, allowed: readonly string[]): boolean {
  const host = new URL(url).hostname.toLowerCase();
  return allowed.some((a) => (a.startsWith("*.") ? host.endsWith(a.slice(1)) : host === a));
}

export interface NotifierOptions {
  log: Logger;
  /** Waits before each retry (ms); default 1 s doubling, 6 retries (about a minute). */
  retryMs?: number[];
  env?: NodeJS.ProcessEnv;
  /** Per-attempt timeout (ms, default 10 s). */
  timeoutMs?: number;
}

const DEFAULT_RETRIES = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000];

export class Notifier {
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly o: NotifierOptions) {}

  /** Sends what `event` means to each target of `env` that wants it; never throws, never blocks the caller. */
  handle(event: ReconcilerEvent, env: EnvironmentConfig): void {
    const kind = notifyEventOf(event);
    if (!kind || this.closed) return;
    const targets = env.notify.filter((t) => t.events.includes(kind));
    if (targets.length === 0) return;
    const cloudEvent = cloudEventOf(event, kind);
    for (const target of targets) {
      const sending = this.deliver(target, cloudEvent).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }

  /** Resolves when every delivery started so far has ended (delivered or given up). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Stops retrying: deliveries still waiting are given up. */
  close(): void {
    this.closed = true;
  }

  private async deliver(target: NotifyTarget, event: CloudEvent): Promise<void> {
    const env = this.o.env ?? process.env;
    const where = { url: target.url, event: event.type, id: event.id };
    if (!hostAllowed(target.url, allowedHosts(env))) {
      this.o.log.warn(where, "notification not sent: its host is not in SYNCWARD_NOTIFY_HOSTS");
      return;
    }
    const key = target.secretEnv ? env[target.secretEnv] : undefined;
    if (target.secretEnv && !key) {
      this.o.log.warn({ ...where, secretEnv: target.secretEnv }, "notification not sent: its key is not set");
      return;
    }
    const body = JSON.stringify(event);
    const headers: Record<string, string> = {
      "content-type": "application/cloudevents+json",
      "user-agent": "syncward",
      ...(key ? { "x-syncward-signature-256": signatureOf(body, key) } : {}),
    };
    const waits = this.o.retryMs ?? DEFAULT_RETRIES;
    for (let attempt = 0; ; attempt++) {
      let failure: string;
      try {
        const res = await fetch(target.url, {
          method: "POST",
          headers,
          body,
          redirect: "error",
          signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
        });
        await res.body?.cancel();
        if (res.ok) return;
        failure = `HTTP ${res.status}`;
        // A 4xx other than 408/429 will not get better by sending the same request again.
        if (res.status < 500 && res.status !== 408 && res.status !== 429) {
          this.o.log.warn({ ...where, failure }, "notification refused by its receiver; not sent again");
          return;
        }
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
      }
      const wait = waits[attempt];
      if (wait === undefined || this.closed) {
        this.o.log.warn({ ...where, failure, attempts: attempt + 1 }, "notification given up");
        return;
      }
      await sleep(wait);
    }
  }
}
