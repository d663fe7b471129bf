// Watches on the kinds an environment manages, narrowed by its instance label. Any change to a
// managed object nudges the controller (debounced), which then decides by comparing with Git:
// the watch carries no logic of its own. The streams themselves are the process's (watch-hub.ts),
// shared with every other environment: this is one environment's subscription to them.

import type { KubeClient } from "../kube/client.ts";
import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
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
  /** Events heard so far: a changed count means something changed. */
  private events = 0;
  /** Kinds still being looked up or subscribed to. */
  private pending = 0;

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
      this.pending++;
      void this.watchKind(k.apiVersion, k.kind).finally(() => this.pending--);
    }
  }

  /**
   * Stays the same while every stream stays connected and no event arrives; undefined while any
   * stream is not connected or a kind is still being set up. Equal marks at two moments: nothing
   * this watch covers changed in between, as far as the API server told it. Streams the undeclared
   * scope may not open (see `blind`) do not count.
   */
  mark(): string | undefined {
    if (this.pending > 0) return undefined;
    const marks = this.subscriptions.filter((s) => !s.forbidden()).map((s) => s.mark());
    if (marks.includes(undefined)) return undefined;
    return `${this.events}|${marks.join(",")}`;
  }

  /** Some kind may not be watched here (the undeclared scope without the right to list it). */
  get blind(): boolean {
    return this.subscriptions.some((s) => s.forbidden());
  }

  stop(): void {
    clearTimeout(this.timer);
    this.abort.abort();
    for (const sub of this.subscriptions.splice(0)) sub.stop();
  }

  private changed(obj?: KubeObject): void {
    this.events++;
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
    const undeclared = Boolean(this.scope.undeclared);
    const accept = this.scope.accept;
    for (const ns of this.namespaces) {
      if (this.abort.signal.aborted) return;
      const sub = await subscribeManaged(
        this.client,
        { apiVersion, kind, namespace: ns, instance: undeclared ? undefined : this.instance },
        this.log,
        (obj) => {
          if (!obj) this.changed();
          else if (!accept || accept(obj)) this.changed({ ...obj, apiVersion, kind });
        },
      );
      if (!sub) {
        // Not served (yet): a later ensureKinds after the CRD lands will try again.
        this.kinds.delete(`${apiVersion}|${kind}`);
        return;
      }
      if (this.abort.signal.aborted) sub.stop();
      else this.subscriptions.push(sub);
      // A cluster-scoped kind: one subscription serves every namespace.
      if (!sub.namespaced) return;
    }
  }
}
