// The shape every layer shares for a Kubernetes object, and how objects are identified.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  generation?: number;
  resourceVersion?: string;
  uid?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  ownerReferences?: Array<{
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
  }>;
  managedFields?: ManagedFieldsEntry[];
  [key: string]: unknown;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** Identity of an object: what Argo CD calls a ResourceKey. `namespace` is "" for cluster-scoped objects. */
export interface ResourceKey {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

export function keyOf(obj: KubeObject): ResourceKey {
  return {
    group: groupOf(obj.apiVersion),
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? "",
    name: obj.metadata.name,
  };
}

/** `apps/Deployment:shop/web`, the form used in tracking annotations, logs and maps. */
export function keyString(key: ResourceKey): string {
  return `${key.group}/${key.kind}:${key.namespace}/${key.name}`;
}

export function parseKeyString(text: string): ResourceKey | undefined {
  const m = /^([^/]*)\/([^:]+):([^/]*)\/(.+)$/.exec(text);
  if (!m) return undefined;
  return { group: m[1] ?? "", kind: m[2] ?? "", namespace: m[3] ?? "", name: m[4] ?? "" };
}

/** kubectl's way of naming an object in messages: `deployment.apps/web`, `service/web`. */
export function kubectlName(key: Pick<ResourceKey, "group" | "kind" | "name">): string {
  const kind = key.kind.toLowerCase();
  return key.group ? `${kind}.${key.group}/${key.name}` : `${kind}/${key.name}`;
}

export function sameKey(a: ResourceKey, b: ResourceKey): boolean {
  return a.group === b.group && a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}
