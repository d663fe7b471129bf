// One watch stream per kind for every environment of the process. Each environment used to keep
// its own streams (one per kind and namespace, narrowed by its instance label, and one per risky
// kind and namespace for undeclared objects), so a replica with E environments held E times the
// streams and re-opened E times as many every few minutes: an idle cost that grew with the object
// count. The hub watches each kind once, cluster-wide when allowed and per namespace otherwise:
// every object carrying the instance label (whatever its value), handed to the environments whose
// instance the label names; and, for the undeclared scope, every object, handed to the
// environments watching its namespace.

import { INSTANCE_LABEL } from "../engine/tracking.ts";
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { sleep } from "../util/sleep.ts";

/** Called with each changed object, or with nothing when anything may have changed (a re-list, a gap). */
export type HubListener = (obj?: KubeObject) => void;

interface HubLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Long watches: a reconnect resumes from the last resourceVersion, so the stream's length only
 * bounds how often it is re-opened. 30 to 60 minutes, spread so a fleet does not reconnect at once.
 */
export function hubWatchSeconds(): number {
  return 1800 + Math.floor(Math.random() * 1800);
}

interface Subscriber {
  /** The instance whose labelled objects it wants; undefined: every object (the undeclared scope). */
  instance: string | undefined;
  /** The namespace it cares about (undefined for a cluster-scoped kind). */
  namespace: string | undefined;
  listener: HubListener;
  log: HubLogger;
  stream: Stream | undefined;
}

let streamsStarted = 0;

/** One stream: a kind, in one namespace or (`scope` "*") in all of them. */
class Stream {
  /** Never repeated, so a stream that replaced another never shows an earlier mark. */
  readonly id = ++streamsStarted;
  readonly subscribers = new Set<Subscriber>();
  private readonly abort = new AbortController();
  /** How many times events may have been lost (re-lists, failures) since the stream started. */
  gaps = 0;
  connected = false;
  /** Not allowed to watch what it does not manage: the periodic orphan scan reports what it can. */
  forbidden = false;
  /**
   * Which instance each object was labelled with: an object whose label moves to another instance
   * (or is removed, which the server reports as DELETED without it) concerns its old owner too.
   */
  private readonly owners = new Map<string, string>();

  constructor(
    private readonly hub: KindHub,
    readonly scope: string | undefined,
  ) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.abort.abort();
  }

  private everyone(): void {
    for (const s of this.subscribers) s.listener();
  }

  private inScope(s: Subscriber, obj: KubeObject): boolean {
    return this.scope !== "*" || s.namespace === obj.metadata.namespace;
  }

  private dispatch(type: string, obj: KubeObject): void {
    if (this.hub.all) {
      for (const s of this.subscribers) if (this.inScope(s, obj)) s.listener(obj);
      return;
    }
    const id = `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
    const instance = obj.metadata.labels?.[INSTANCE_LABEL];
    const before = this.owners.get(id);
    if (type === "DELETED" || instance === undefined) this.owners.delete(id);
    else this.owners.set(id, instance);
    for (const s of this.subscribers)
      if ((s.instance === instance || s.instance === before) && this.inScope(s, obj)) s.listener(obj);
  }

  private remember(items: KubeObject[]): void {
    this.owners.clear();
    if (this.hub.all) return;
    for (const obj of items) {
      const instance = obj.metadata.labels?.[INSTANCE_LABEL];
      if (instance !== undefined)
        this.owners.set(`${obj.metadata.namespace ?? ""}/${obj.metadata.name}`, instance);
    }
  }

  private async run(): Promise<void> {
    const { client, apiVersion, kind } = this.hub;
    const signal = this.abort.signal;
    const namespace = this.scope === "*" ? undefined : this.scope;
    // Every object carrying the label, whatever the instance: one stream serves them all.
    const labelSelector = this.hub.all ? undefined : INSTANCE_LABEL;
    const log = () => [...this.subscribers][0]?.log;
    let rv: string | undefined;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (!rv) {
          const listed = await client.list(apiVersion, kind, { namespace, labelSelector });
          this.remember(listed.items);
          rv = listed.resourceVersion;
        }
        this.connected = true;
        rv = await client.watch(
          apiVersion,
          kind,
          { namespace, labelSelector, resourceVersion: rv, signal, timeoutSeconds: hubWatchSeconds() },
          (type, obj) => this.dispatch(type, obj),
        );
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        this.connected = false;
        const refused = err instanceof KubeApiError && err.status === 403;
        if (refused && this.scope === "*") {
          // Not allowed cluster-wide: each namespace gets its own stream.
          log()?.debug({ kind }, "cluster-wide watch not allowed; watching per namespace");
          this.hub.fallBack(this);
          return;
        }
        if (refused && this.hub.all) {
          log()?.debug({ kind, namespace }, "not allowed to watch undeclared objects of this kind");
          this.forbidden = true;
          return;
        }
        this.gaps++;
        if (err instanceof KubeApiError && err.status === 410) {
          log()?.debug({ kind, namespace }, "watch expired (410); re-listing");
          rv = undefined;
          this.everyone();
          continue;
        }
        failures++;
        log()?.warn({ err, kind, namespace }, "watch failed; retrying");
        // Events may have been missed while disconnected (a failed list or an error mid-stream).
        this.everyone();
        await sleep(Math.min(1000 * 2 ** failures, 30_000), signal);
      }
    }
  }
}

/** The streams of one kind: one cluster-wide, or one per namespace when that is not allowed. */
class KindHub {
  /** Whether a cluster-wide stream was refused: the first subscriber of a namespaced kind tries one. */
  private perNamespace = false;
  private readonly streams = new Map<string, Stream>();

  constructor(
    readonly client: KubeClient,
    readonly apiVersion: string,
    readonly kind: string,
    readonly namespaced: boolean,
    /** Every object of the kind (the undeclared scope), not only those carrying the label. */
    readonly all: boolean,
  ) {}

  subscribe(sub: Subscriber): void {
    const scope = !this.namespaced ? "" : this.perNamespace ? (sub.namespace ?? "") : "*";
    let stream = this.streams.get(scope);
    if (!stream) {
      stream = new Stream(this, scope === "" ? undefined : scope);
      this.streams.set(scope, stream);
      stream.start();
    }
    stream.subscribers.add(sub);
    sub.stream = stream;
  }

  unsubscribe(sub: Subscriber): void {
    const stream = sub.stream;
    sub.stream = undefined;
    if (!stream) return;
    stream.subscribers.delete(sub);
    if (stream.subscribers.size > 0) return;
    stream.stop();
    if (this.streams.get(stream.scope ?? "") === stream) this.streams.delete(stream.scope ?? "");
  }

  fallBack(from: Stream): void {
    this.perNamespace = true;
    this.streams.delete("*");
    for (const sub of [...from.subscribers]) {
      from.subscribers.delete(sub);
      this.subscribe(sub);
    }
  }
}

const hubs = new WeakMap<KubeClient, Map<string, KindHub>>();

/** One environment's subscription to a stream of the hub. */
export interface HubSubscription {
  /** Whether the kind is namespaced (a cluster-scoped kind needs one subscription, not one per namespace). */
  readonly namespaced: boolean;
  stop(): void;
  /**
   * Stays the same for as long as the stream serving it stays connected without a gap; undefined
   * while it is not connected. Equal marks at two moments: every event in between was delivered.
   */
  mark(): string | undefined;
  /** The stream may not be opened here (the undeclared scope without the right to list the kind). */
  forbidden(): boolean;
}

/**
 * Subscribes `listener` to the objects of a kind in `namespace` (ignored for a cluster-scoped kind)
 * labelled with `instance`, or to every object there when `instance` is undefined, through the one
 * stream the process keeps for that kind. Undefined when the API server does not serve the kind.
 */
export async function subscribeManaged(
  client: KubeClient,
  what: { apiVersion: string; kind: string; namespace: string | undefined; instance: string | undefined },
  log: HubLogger,
  listener: HubListener,
): Promise<HubSubscription | undefined> {
  const { apiVersion, kind, instance } = what;
  const resource = await client.resourceFor(apiVersion, kind).catch(() => undefined);
  if (!resource) return undefined;
  // Keyed on the cluster's client, not an impersonating view of it: one hub per cluster.
  const root = client.root;
  const byKind = hubs.get(root) ?? new Map<string, KindHub>();
  hubs.set(root, byKind);
  const all = instance === undefined;
  const id = `${apiVersion}|${kind}|${all ? "all" : "labelled"}`;
  const hub = byKind.get(id) ?? new KindHub(root, apiVersion, kind, resource.namespaced, all);
  byKind.set(id, hub);
  const sub: Subscriber = {
    instance,
    namespace: resource.namespaced ? what.namespace : undefined,
    listener,
    log,
    stream: undefined,
  };
  hub.subscribe(sub);
  return {
    namespaced: resource.namespaced,
    stop: () => hub.unsubscribe(sub),
    mark: () => (sub.stream?.connected ? `${sub.stream.id}.${sub.stream.gaps}` : undefined),
    forbidden: () => sub.stream?.forbidden ?? false,
  };
}
