// The ids listed repositories were pinned to at first sight (match.ts), kept in the ConfigMap
// `syncward-repository-pins` of syncward's state namespace (a reserved namespace: no sync writes
// it). A pin is written once and never replaced by a later lookup: another replica's pin wins.
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { RepositoryPins } from "./match.ts";

export const PINS_CONFIGMAP = "syncward-repository-pins";

interface PinsObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  data?: Record<string, string>;
}

export function configMapPins(client: KubeClient, namespace: string): RepositoryPins {
  const read = async () =>
    (await client.get("v1", "ConfigMap", namespace, PINS_CONFIGMAP)) as PinsObject | undefined;
  return {
    pinned: async (fullName) => {
      const value = (await read())?.data?.[keyOf(fullName)];
      return value === undefined ? undefined : Number(value);
    },
    pin: async (fullName, id) => {
      const key = keyOf(fullName);
      for (let attempt = 0; ; attempt++) {
        const cm = await read();
        const kept = cm?.data?.[key];
        if (kept !== undefined) return Number(kept);
        const next: PinsObject = {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            name: PINS_CONFIGMAP,
            namespace,
            ...(cm ? { resourceVersion: cm.metadata.resourceVersion } : {}),
          },
          data: { ...cm?.data, [key]: String(id) },
        };
        try {
          await (cm ? client.replace(next as never) : client.create(next as never));
          return id;
        } catch (err) {
          // Another replica wrote first: read again (its pin wins if it is this name's).
          if (!(err instanceof KubeApiError) || (err.status !== 409 && err.status !== 422) || attempt >= 4)
            throw err;
        }
      }
    },
  };
}

/** ConfigMap keys allow `[-._a-zA-Z0-9]`: `owner/name` lowercased with "/" as "..". */
function keyOf(fullName: string): string {
  return fullName.toLowerCase().replace("/", "..");
}

/** Pins kept in memory only (tests, and a process without a cluster). */
export function memoryPins(): RepositoryPins {
  const pins = new Map<string, number>();
  return {
    pinned: async (n) => pins.get(n.toLowerCase()),
    pin: async (n, id) => {
      const key = n.toLowerCase();
      if (!pins.has(key)) pins.set(key, id);
      return pins.get(key) as number;
    },
  };
}
