// What a cluster serves, as Helm's .Capabilities wants it (Argo CD passes the same to `helm template`):
// its version, and every group/version and group/version/Kind from discovery.

import type { KubeClient } from "./client.ts";

export interface ClusterCapabilities {
  kubeVersion: string;
  /** `apps/v1` and `apps/v1/Deployment`, `v1` and `v1/ConfigMap`, sorted. */
  apiVersions: string[];
}

interface ResourceList {
  groupVersion: string;
  resources: Array<{ name: string; kind: string }>;
}

/** The API versions (and version/Kind pairs) in discovery lists; subresources are left out. */
export function apiVersionsOf(lists: ResourceList[]): string[] {
  const out = new Set<string>();
  for (const list of lists) {
    out.add(list.groupVersion);
    for (const r of list.resources) if (!r.name.includes("/")) out.add(`${list.groupVersion}/${r.kind}`);
  }
  return [...out].sort();
}

/** Reads the cluster's version and discovery (one request per group version). */
export async function clusterCapabilities(client: KubeClient): Promise<ClusterCapabilities> {
  const version = await client.request<{ gitVersion: string }>("GET", "/version");
  const core = await client.request<{ versions: string[] }>("GET", "/api");
  const groups = await client.request<{ groups: Array<{ versions: Array<{ groupVersion: string }> }> }>(
    "GET",
    "/apis",
  );
  const paths = [
    ...core.versions.map((v) => `/api/${v}`),
    ...groups.groups.flatMap((g) => g.versions.map((v) => `/apis/${v.groupVersion}`)),
  ];
  const lists = await Promise.all(
    paths.map(
      (path) => client.request<ResourceList>("GET", path).catch(() => undefined), // an aggregated API that is down
    ),
  );
  return {
    kubeVersion: version.gitVersion,
    apiVersions: apiVersionsOf(lists.filter((l): l is ResourceList => l !== undefined)),
  };
}
