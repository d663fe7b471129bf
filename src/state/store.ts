// Durable per-environment state: one ConfigMap per environment instance in syncward's own
// namespace, written with optimistic concurrency so that concurrent writers never lose an update.
//
// Storage format (ConfigMap `syncward-state-<sanitized instance>-<hash>`):
//   labels:      app.kubernetes.io/managed-by=syncward, syncward.dev/state=true (retired: "retired")
//   annotations: syncward.dev/instance=<instance name, exactly>
//                syncward.dev/moved-to=<instance> (only on a state an upgrade moved: identity.ts)
//   data:        state.json = JSON of EnvironmentState
// The instance name embeds the app's identity (identity.ts), so two repositories never meet here.
import { createHash } from "node:crypto";
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { nextDegradedStretch } from "./degraded-stretch.ts";
import { nextHealthRecords } from "./health-records.ts";
import type { EnvironmentState } from "./types.ts";

export const STATE_LABEL = "syncward.dev/state";
export const INSTANCE_ANNOTATION = "syncward.dev/instance";
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const STATE_KEY = "state.json";
export const MOVED_TO_ANNOTATION = "syncward.dev/moved-to";

export interface StateStoreOptions {
  /** Read-modify-write attempts before `update` gives up on conflicts (default 10). */
  maxAttempts?: number;
  /**
   * The readable name (`owner/repo`) of the app this store writes for, recorded in each state it
   * writes for people (it follows a rename). It decides nothing: the instance name, built from the
   * repository's id, is what keeps repositories apart. Absent: the recorded name is kept.
   */
  repository?: string;
}

/** The state's ConfigMap exists but cannot be read as state: refuse to overwrite it silently. */
export class StateCorruptError extends Error {
  constructor(
    readonly namespace: string,
    readonly configMap: string,
    detail: string,
  ) {
    super(
      `the state ConfigMap ${namespace}/${configMap} is not valid syncward state (${detail}); ` +
        `fix or delete its data["${STATE_KEY}"] (deleting it forgets the environment's history)`,
    );
    this.name = "StateCorruptError";
  }
}

export function defaultState(instance: string): EnvironmentState {
  return { environment: instance, syncStatus: "Unknown", history: [], pendingApprovals: [], selfHeals: {} };
}

/** Lowercase DNS-label-safe form of `text`, at most `max` characters; may be empty. */
export function sanitizeName(text: string, max: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, max)
    .replace(/^-+|-+$/g, "");
}

/** Short stable hash of the exact instance name: keeps `a.b` and `a-b` apart after sanitizing. */
export function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 10);
}

/** `syncward-state-payments-config-dev-<hash>`: a valid, collision-free ConfigMap name. */
export function stateConfigMapName(instance: string): string {
  const readable = sanitizeName(instance, 36); // keeps the whole name within 63 characters
  return readable
    ? `syncward-state-${readable}-${shortHash(instance)}`
    : `syncward-state-${shortHash(instance)}`;
}

/**
 * Creates `namespace` when it is missing (a 409 means it exists, which is fine). Only called when a
 * write found no namespace, so a syncward that may not create namespaces works in an existing one.
 */
export async function ensureNamespace(client: KubeClient, namespace: string): Promise<void> {
  try {
    await client.create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespace, labels: { [MANAGED_BY_LABEL]: "syncward" } },
    });
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 409) return;
    if (err instanceof KubeApiError && err.status === 403) {
      throw new Error(
        `namespace ${namespace} does not exist and syncward may not create it (${err.message}): ` +
          `create it (kubectl create namespace ${namespace}) or grant syncward "create" on namespaces`,
      );
    }
    throw err;
  }
}

/** True for a 404 on creating an object in a namespace that is not there. */
function isMissingNamespace(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 404;
}

function isConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 409;
}

/** Jittered exponential backoff between conflicting writes: spreads out writers that keep colliding. */
function backoff(attempt: number): Promise<void> {
  const ceiling = Math.min(1_000, 25 * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}

export class StateStore {
  private readonly maxAttempts: number;
  private readonly repository: string | undefined;

  constructor(
    private readonly client: KubeClient,
    /** syncward's own namespace, e.g. `syncward`. */
    readonly namespace: string,
    options: StateStoreOptions = {},
  ) {
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 10);
    this.repository = options.repository;
  }

  /** The stored state of `instance`, or a fresh default state when none is stored. */
  async load(instance: string): Promise<EnvironmentState> {
    const cm = await this.read(instance);
    return cm ? this.parse(instance, cm) : defaultState(instance);
  }

  /**
   * The state stored under `instance` and whether it was retired (moved to another instance by an
   * upgrade, see retire); undefined when none is stored.
   */
  async stored(instance: string): Promise<{ state: EnvironmentState; movedTo?: string } | undefined> {
    const cm = await this.read(instance);
    if (!cm) return undefined;
    return { state: this.parse(instance, cm), movedTo: cm.metadata.annotations?.[MOVED_TO_ANNOTATION] };
  }

  /**
   * Retires the state of `instance`, now held by `movedTo`: it leaves list() and is marked with
   * where it went, its data kept for an operator to read. Its recorded repository becomes a note a
   * syncward from before identities refuses as another repository's, so an old replica still
   * running during a rolling upgrade writes nothing more under the old name. Deleting it would need
   * a verb syncward's state Role does not grant; an operator may remove it.
   */
  async retire(instance: string, movedTo: string): Promise<void> {
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const cm = await this.read(instance);
      if (!cm || cm.metadata.annotations?.[MOVED_TO_ANNOTATION] === movedTo) return;
      const state = { ...this.parse(instance, cm), repository: `(moved to ${movedTo})` };
      const { managedFields: _m, ...meta } = cm.metadata;
      try {
        await this.client.replace({
          ...cm,
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            ...meta,
            labels: { ...(meta.labels ?? {}), [STATE_LABEL]: "retired" },
            annotations: { ...(meta.annotations ?? {}), [MOVED_TO_ANNOTATION]: movedTo },
          },
          data: { ...(cm.data ?? {}), [STATE_KEY]: JSON.stringify(state) },
        });
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
        if (attempt < this.maxAttempts) await backoff(attempt);
      }
    }
  }

  /**
   * Read-modify-write of one environment's state. `mutate` changes the state in place or returns a
   * replacement; it may run more than once (once per attempt, always on freshly read state), so it
   * must not have side effects outside the state. Nothing is written when it changes nothing.
   * Resolves with the state as stored.
   */
  async update(
    instance: string,
    // biome-ignore lint/suspicious/noConfusingVoidType: lets a mutator that changes `s` in place return nothing
    mutate: (s: EnvironmentState) => void | EnvironmentState,
  ): Promise<EnvironmentState> {
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const cm = await this.read(instance);
      const current = cm ? this.parse(instance, cm) : defaultState(instance);
      const before = JSON.stringify(current);
      const next = mutate(current) ?? current;
      // Whoever wrote the health or the revision, the evidence of promotions follows it.
      const records = nextHealthRecords(next.healthRecords ?? [], next, new Date());
      if (records.length > 0) next.healthRecords = records;
      // And the clock of an automatic rollback.
      next.degraded = nextDegradedStretch(next.degraded, next, new Date());
      if (!next.degraded) delete next.degraded;
      if (this.repository !== undefined && (!cm || JSON.stringify(next) !== before))
        next.repository = this.repository;
      const text = JSON.stringify(next);
      if (cm && text === before) return next;
      try {
        if (cm) {
          await this.client.replace({
            ...cm,
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: this.metadata(instance, cm.metadata),
            data: { ...(cm.data ?? {}), [STATE_KEY]: text },
          });
        } else {
          await this.create(instance, text);
        }
        return JSON.parse(text) as EnvironmentState;
      } catch (err) {
        // 409: someone wrote (or created) it since we read it; read again and re-apply `mutate`.
        if (!isConflict(err)) throw err;
        if (attempt < this.maxAttempts) await backoff(attempt);
      }
    }
    throw new Error(
      `could not update the state of ${instance} (ConfigMap ${this.namespace}/${stateConfigMapName(instance)}): ` +
        `${this.maxAttempts} attempts in a row lost to concurrent writers; try again`,
    );
  }

  /** Every stored environment state in the namespace, sorted by environment instance name. */
  async list(): Promise<EnvironmentState[]> {
    const { items } = await this.client.list("v1", "ConfigMap", {
      namespace: this.namespace,
      labelSelector: `${STATE_LABEL}=true`,
    });
    const states: EnvironmentState[] = [];
    for (const item of items) {
      const instance = item.metadata.annotations?.[INSTANCE_ANNOTATION];
      if (!instance) continue; // labelled by hand, not ours to interpret
      states.push(this.parse(instance, item as ConfigMap));
    }
    return states.sort((a, b) =>
      a.environment < b.environment ? -1 : a.environment > b.environment ? 1 : 0,
    );
  }

  // ---- internals ----

  private async read(instance: string): Promise<ConfigMap | undefined> {
    return (await this.client.get("v1", "ConfigMap", this.namespace, stateConfigMapName(instance))) as
      | ConfigMap
      | undefined;
  }

  private async create(instance: string, text: string): Promise<void> {
    const cm: ConfigMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: this.metadata(instance, { name: stateConfigMapName(instance) }),
      data: { [STATE_KEY]: text },
    };
    try {
      await this.client.create(cm);
    } catch (err) {
      if (!isMissingNamespace(err)) throw err;
      await ensureNamespace(this.client, this.namespace);
      await this.client.create(cm);
    }
  }

  private metadata(instance: string, meta: KubeObject["metadata"]): KubeObject["metadata"] {
    const { managedFields: _managedFields, ...rest } = meta;
    return {
      ...rest,
      name: stateConfigMapName(instance),
      namespace: this.namespace,
      labels: { ...(meta.labels ?? {}), [MANAGED_BY_LABEL]: "syncward", [STATE_LABEL]: "true" },
      annotations: { ...(meta.annotations ?? {}), [INSTANCE_ANNOTATION]: instance },
    };
  }

  private parse(instance: string, cm: ConfigMap): EnvironmentState {
    const text = cm.data?.[STATE_KEY];
    if (text === undefined) return defaultState(instance);
    let stored: unknown;
    try {
      stored = JSON.parse(text);
    } catch (err) {
      throw new StateCorruptError(
        this.namespace,
        cm.metadata.name,
        `invalid JSON: ${(err as Error).message}`,
      );
    }
    if (typeof stored !== "object" || stored === null || Array.isArray(stored)) {
      throw new StateCorruptError(this.namespace, cm.metadata.name, "not a JSON object");
    }
    // Fields added to EnvironmentState after the state was written get their defaults.
    const state = { ...defaultState(instance), ...(stored as Partial<EnvironmentState>) };
    if (!Array.isArray(state.history) || !Array.isArray(state.pendingApprovals)) {
      throw new StateCorruptError(
        this.namespace,
        cm.metadata.name,
        "history and pendingApprovals must be arrays",
      );
    }
    return state;
  }
}

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}
