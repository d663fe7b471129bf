// Reading the live side: every object Git declares (by listing its kind in its namespace), and
// every object this instance manages (by label, across the kinds it has ever applied, so a kind
// that vanished from Git entirely is still found for pruning).
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import type { PreparedObject } from "./prepare.ts";
import { errorMessage } from "./resource-results.ts";
import { INSTANCE_LABEL } from "./tracking.ts";

/** A kind this environment has applied; persisted by the caller between syncs. */
export interface KindRef {
  apiVersion: string;
  kind: string;
}

interface ListCall {
  apiVersion: string;
  kind: string;
  namespace?: string;
  selector?: string;
}

export interface LiveState {
  live: Map<string, KubeObject>;
  /**
   * Objects Git declares whose kind syncward may not list where they live, by keyString, with why.
   * Each fails on its own; a kind it may not list for pruning fails the whole sync instead, since
   * skipping it would leave orphans without a word.
   */
  denied: Map<string, string>;
}

export async function fetchLive(
  client: KubeClient,
  instance: string,
  namespaces: string[],
  prepared: PreparedObject[],
  inventory: KindRef[],
): Promise<LiveState> {
  const calls = new Map<string, ListCall>();
  const add = (c: ListCall) =>
    calls.set(`${c.apiVersion}|${c.kind}|${c.namespace ?? "*"}|${c.selector ?? ""}`, c);
  const plain = new Set<string>();
  for (const p of prepared) {
    if (!p.resource) continue; // kind defined by a CRD in this render: nothing of it can exist yet
    const ns = p.namespaced ? p.obj.metadata.namespace : undefined;
    plain.add(`${p.obj.apiVersion}|${p.obj.kind}|${ns ?? "*"}`);
    add({ apiVersion: p.obj.apiVersion, kind: p.obj.kind, namespace: ns });
  }
  const kinds = new Map<string, KindRef>();
  for (const k of [...inventory, ...prepared.map((p) => p.obj)]) kinds.set(`${k.apiVersion}|${k.kind}`, k);
  const applied = new Set(inventory.map((k) => `${k.apiVersion}|${k.kind}`));
  const selector = `${INSTANCE_LABEL}=${instance}`;
  await mapLimit([...kinds.values()], 8, async (k) => {
    const resource = await client.resourceFor(k.apiVersion, k.kind);
    if (!resource) return;
    for (const ns of resource.namespaced ? namespaces : [undefined]) {
      if (!plain.has(`${k.apiVersion}|${k.kind}|${ns ?? "*"}`)) {
        add({ apiVersion: k.apiVersion, kind: k.kind, namespace: ns, selector });
      }
    }
  });
  const live = new Map<string, KubeObject>();
  const deniedCalls = new Map<string, string>();
  await mapLimit([...calls.values()], 8, async (c) => {
    try {
      const { items } = await client.list(c.apiVersion, c.kind, {
        namespace: c.namespace,
        labelSelector: c.selector,
      });
      for (const item of items) live.set(keyString(keyOf(item)), item);
    } catch (err) {
      // Only a kind applied before must be listable for pruning; for one Git declares for the first
      // time, a denied list (in any namespace the environment covers) is the declared objects' own failure.
      const mayBeDenied = c.selector === undefined || !applied.has(`${c.apiVersion}|${c.kind}`);
      if (!(mayBeDenied && err instanceof KubeApiError && err.forbidden)) throw err;
      deniedCalls.set(`${c.apiVersion}|${c.kind}|${c.namespace ?? "*"}`, errorMessage(err));
    }
  });
  const denied = new Map<string, string>();
  for (const p of prepared) {
    const ns = p.namespaced ? p.obj.metadata.namespace : undefined;
    const why = deniedCalls.get(`${p.obj.apiVersion}|${p.obj.kind}|${ns ?? "*"}`);
    if (why) denied.set(keyString(keyOf(p.obj)), why);
  }
  return { live, denied };
}

/**
 * Reads each declared object by name instead of listing its kinds: for the few objects a watch
 * event named. Nothing else is read, so nothing is found to prune.
 */
export async function fetchEach(client: KubeClient, prepared: PreparedObject[]): Promise<LiveState> {
  const live = new Map<string, KubeObject>();
  const denied = new Map<string, string>();
  await mapLimit(prepared, 8, async (p) => {
    if (!p.resource) return;
    const { apiVersion, kind, metadata } = p.obj;
    const key = keyString(keyOf(p.obj));
    try {
      const obj = await client.get(
        apiVersion,
        kind,
        p.namespaced ? metadata.namespace : undefined,
        metadata.name,
      );
      if (obj) live.set(key, { ...obj, apiVersion, kind });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.forbidden)) throw err;
      denied.set(key, errorMessage(err));
    }
  });
  return { live, denied };
}
