// One watch stream per kind for every environment of the process. Each environment used to keep
// its own streams (one per kind and namespace, narrowed by its instance label), so a replica with
// E environments held E times the streams and re-opened E times as many every few minutes: an idle
// cost that grew with the object count. The hub watches every object carrying the instance label
// (whatever its value) once, cluster-wide when allowed and per namespace otherwise, and hands each
// event to the environments whose instance the label names.

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
  instance: string;
  /** The namespace it cares about (undefined for a cluster-scoped kind). */
  namespace: string | undefined;
  listener: HubListener;
  log: HubLogger;
  stream: Stream | undefined;
}

/** One stream: a kind, in one namespace or (`scope` "*") in all of them. */
class Stream {
  readonly subscribers = new Set<Subscriber>();
  private readonly abort = new AbortController();
  /** Counts the gaps (re-lists, failures) since the stream started: a changed count means events may be lost. */
  gaps = 0;
  connected = false;

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

  /**
   * Which instance each object was labelled with: an object whose label moves to another instance
   * (or is removed, which the server reports as DELETED without it) concerns its old owner too.
   */
  private readonly owners = new Map<string, string>();

  private dispatch(type: string, obj: KubeObject): void {
    const id = `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
    const instance = obj.metadata.labels?.[INSTANCE_LABEL];
    const before = this.owners.get(id);
    if (type === "DELETED" || instance === undefined) this.owners.delete(id);
    else this.owners.set(id, instance);
    for (const s of this.subscribers)
      if (
        (s.instance === instance || s.instance === before) &&
        (this.scope !== "*" || s.namespace === obj.metadata.namespace)
      )
        s.listener(obj);
  }

  private remember(items: KubeObject[]): void {
    this.owners.clear();
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
    const labelSelector = INSTANCE_LABEL;
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
        if (this.scope === "*" && rv === undefined && err instanceof KubeApiError && err.status === 403) {
          // Not allowed cluster-wide: each namespace gets its own stream.
          log()?.debug({ kind }, "cluster-wide watch not allowed; watching per namespace");
          this.hub.fallBack(this);
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
  /** undefined: not yet known; the first subscriber of a namespaced kind tries cluster-wide. */
  private perNamespace: boolean | undefined;
  private readonly streams = new Map<string, Stream>();

  constructor(
    readonly client: KubeClient,
    readonly apiVersion: string,
    readonly kind: string,
    private readonly namespaced: boolean,
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
    this.streams.delete(stream.scope ?? "");
  }

  fallBack(from: Stream): void {
    this.perNamespace = true;
    this.streams.delete("*");
    for (const sub of [...from.subscribers]) {
      from.subscribers.delete(sub);
      this.subscribe(sub);
    }
  }

  /** The streams a subscriber's namespace is served by are connected, with `gaps` as returned. */
  streamOf(sub: Subscriber): Stream | undefined {
    return sub.stream;
  }
}

const hubs = new WeakMap<KubeClient, Map<string, KindHub>>();

/** What a subscription can tell about its stream, for deciding whether an idle poll may trust it. */
export interface HubSubscription {
  stop(): void;
  /** The stream's gap count and whether it is connected now. */
  health(): { connected: boolean; gaps: number };
}

/**
 * Subscribes `listener` to the objects of a kind labelled with `instance` in `namespace` (undefined
 * for a cluster-scoped kind), through the one stream the process keeps for that kind.
 */
export async function subscribeManaged(
  client: KubeClient,
  apiVersion: string,
  kind: string,
  namespace: string | undefined,
  instance: string,
  log: HubLogger,
  listener: HubListener,
): Promise<HubSubscription | undefined> {
  const resource = await client.resourceFor(apiVersion, kind).catch(() => undefined);
  if (!resource) return undefined;
  const byKind = hubs.get(client) ?? new Map<string, KindHub>();
  hubs.set(client, byKind);
  const id = `${apiVersion}|${kind}`;
  const hub = byKind.get(id) ?? new KindHub(client, apiVersion, kind, resource.namespaced);
  byKind.set(id, hub);
  const sub: Subscriber = {
    instance,
    namespace: resource.namespaced ? namespace : undefined,
    listener,
    log,
    stream: undefined,
  };
  hub.subscribe(sub);
  return {
    stop: () => hub.unsubscribe(sub),
    health: () => {
      const s = hub.streamOf(sub);
      return { connected: s?.connected ?? false, gaps: s?.gaps ?? 0 };
    },
  };
}
