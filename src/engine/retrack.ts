// Renaming the instance that manages objects (a repository renamed or transferred): every object
// `from` manages gets `to` in its tracking annotation and instance label, with one JSON patch each
// that tests the resourceVersion it was read at. Nothing is applied, pruned, deleted or recreated,
// and the applied-hash annotation is left alone, so the next sync of `to` finds everything in sync.
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import { escapeToken } from "./diff/json-pointer.ts";
import type { KindRef } from "./live.ts";
import { INSTANCE_LABEL, isManagedBy, TRACKING_ANNOTATION, trackingId } from "./tracking.ts";

/** Objects of `kinds` in `namespaces` (cluster-scoped ones once) that `instance` manages. */
async function managedBy(
  client: KubeClient,
  instance: string,
  namespaces: string[],
  kinds: KindRef[],
): Promise<KubeObject[]> {
  const found: KubeObject[] = [];
  await mapLimit(kinds, 4, async (k) => {
    const resource = await client.resourceFor(k.apiVersion, k.kind);
    if (!resource) return;
    for (const namespace of resource.namespaced ? namespaces : [undefined]) {
      const { items } = await client.list(k.apiVersion, k.kind, {
        namespace,
        labelSelector: `${INSTANCE_LABEL}=${instance}`,
      });
      found.push(...items.filter((o) => isManagedBy(o, instance)));
    }
  });
  return found;
}

/** Moves every object `from` manages to `to`; returns how many were moved. */
export async function retrack(
  client: KubeClient,
  from: string,
  to: string,
  namespaces: string[],
  kinds: KindRef[],
): Promise<number> {
  const objects = await managedBy(client, from, namespaces, kinds);
  await mapLimit(objects, 8, async (obj) => {
    for (let current: KubeObject | undefined = obj, attempt = 1; current; attempt++) {
      const ops = [
        { op: "test", path: "/metadata/resourceVersion", value: current.metadata.resourceVersion },
        {
          op: "replace",
          path: `/metadata/annotations/${escapeToken(TRACKING_ANNOTATION)}`,
          value: trackingId(to, keyOf(current)),
        },
        { op: "replace", path: `/metadata/labels/${escapeToken(INSTANCE_LABEL)}`, value: to },
      ];
      const resource = await client.mustResource(current.apiVersion, current.kind);
      const path = client.objectPath(resource, current.metadata.namespace, current.metadata.name);
      try {
        await client.request("PATCH", `${path}?fieldManager=syncward`, {
          body: ops,
          contentType: "application/json-patch+json",
        });
        return;
      } catch (err) {
        // Changed since it was listed (a controller's status write): read it again and retry.
        if (!(err instanceof KubeApiError) || (err.status !== 422 && err.status !== 409) || attempt >= 5)
          throw err;
        const { apiVersion, kind, metadata } = current;
        current = await client.get(apiVersion, kind, metadata.namespace, metadata.name);
        if (current && !isManagedBy(current, from)) return;
      }
    }
  });
  return objects.length;
}
