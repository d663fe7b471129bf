// Watches on the kinds an environment manages, narrowed by its instance label. Any change to a
// managed object nudges the controller (debounced), which then decides by comparing with Git:
// the watch carries no logic of its own. Label-scoped watches go through the process's shared
// streams (watch-hub.ts); the undeclared scope keeps its own, resuming from the last
// resourceVersion and re-listing on 410.

import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
import { sleep } from "../util/sleep.ts";
import { type HubSubscription, subscribeManaged } from "./watch-hub.ts";

interface WatchLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Long enough to coalesce one burst of events (a rollout's), short next to a heal's round trips. */
const DEBOUNCE_MS = 10;

export class ManagedWatch {
  private readonly kinds = new Set<string>();
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** The objects the events since the last nudge named (keyString), or "all" after a re-list. */
  private named: Set<string> | "all" = new Set();
  private readonly subscriptions: HubSubscription[] = [];

  constructor(
    private readonly client: KubeClient,
    private readonly instance: string,
    private readonly namespaces: string[],
    private readonly log: WatchLogger,
    /** `named`: the objects the coalesced events were about, or undefined when any may have changed. */
    private readonly onChange: (named?: ReadonlySet<string>) => void,
    /**
     * Which objects to watch: by default those of this instance (its label). `undeclared` watches
     * every object of the kinds, and only events `accept` keeps nudge.
     */
    private readonly scope: { undeclared?: boolean; accept?: (obj: KubeObject) => boolean } = {},
  ) {}

  /** Starts watching any kind not yet watched. */
  ensureKinds(kinds: Array<{ apiVersion: string; kind: string }>): void {
    for (const k of kinds) {
      const id = `${k.apiVersion}|${k.kind}`;
      if (this.kinds.has(id)) continue;
      this.kinds.add(id);
      void this.watchKind(k.apiVersion, k.kind);
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.abort.abort();
    for (const sub of this.subscriptions.splice(0)) sub.stop();
  }

  private changed(obj?: KubeObject): void {
    if (this.named !== "all") {
      if (obj) this.named.add(keyString(keyOf(obj)));
      else this.named = "all";
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const named = this.named;
      this.named = new Set();
      if (!this.abort.signal.aborted) this.onChange(named === "all" ? undefined : named);
    }, DEBOUNCE_MS);
  }

  private async watchKind(apiVersion: string, kind: string): Promise<void> {
    const resource = await this.client.resourceFor(apiVersion, kind).catch(() => undefined);
    if (!resource) {
      // Not served (yet): a later ensureKinds after the CRD lands will try again.
      this.kinds.delete(`${apiVersion}|${kind}`);
      return;
    }
    const scopes = resource.namespaced ? this.namespaces : [undefined];
    if (!this.scope.undeclared) {
      // Label-scoped: through the process's one stream per kind, shared with every environment.
      for (const ns of scopes) {
        if (this.abort.signal.aborted) return;
        const sub = await subscribeManaged(
          this.client,
          apiVersion,
          kind,
          ns,
          this.instance,
          this.log,
          (obj) => this.changed(obj && { ...obj, apiVersion, kind }),
        );
        if (!sub) continue;
        if (this.abort.signal.aborted) sub.stop();
        else this.subscriptions.push(sub);
      }
      return;
    }
    await Promise.all(scopes.map((ns) => this.loop(apiVersion, kind, ns)));
  }

  private async loop(apiVersion: string, kind: string, namespace: string | undefined): Promise<void> {
    const signal = this.abort.signal;
    const accept = this.scope.accept;
    let rv: string | undefined;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (!rv) rv = (await this.client.list(apiVersion, kind, { namespace })).resourceVersion;
        rv = await this.client.watch(
          apiVersion,
          kind,
          { namespace, resourceVersion: rv, signal },
          (_type, obj) => {
            if (!accept || accept(obj)) this.changed({ ...obj, apiVersion, kind });
          },
        );
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof KubeApiError && err.status === 410) {
          // Our version is too old: re-list, and look again since events may have been missed.
          this.log.debug({ kind, namespace }, "watch expired (410); re-listing");
          rv = undefined;
          this.changed();
          continue;
        }
        if (this.scope.undeclared && err instanceof KubeApiError && err.status === 403) {
          // Not allowed to watch what it does not manage: the periodic scan reports what it can list.
          this.log.debug({ kind, namespace }, "not allowed to watch undeclared objects of this kind");
          return;
        }
        failures++;
        this.log.warn({ err, kind, namespace }, "watch failed; retrying");
        await sleep(Math.min(1000 * 2 ** failures, 30_000), signal);
      }
    }
  }
}
