// Fields whose change decides what runs, with what rights, on which node and as whom: containers
// (every field but their resource and termination settings), a pod's volumes, securityContext,
// host namespaces, ServiceAccount and token mounting, RBAC rules and subjects, admission webhook
// configurations, a CRD's conversion webhook. No field manager's name makes a change to them trusted: Kubernetes does not
// authenticate manager names, so `--field-manager=kube-controller-manager` proves nothing. Only an
// explicit ignoreDifferences jsonPointers / jqPathExpressions entry (a path a reviewer read) leaves
// one alone. Fail closed: inside a container only the listed harmless fields are exempt.
import type { Path } from "./types.ts";

export const CONTAINER_LISTS: ReadonlySet<string> = new Set([
  "containers",
  "initContainers",
  "ephemeralContainers",
]);
export const HOST_NAMESPACES: ReadonlySet<string> = new Set([
  "hostNetwork",
  "hostPID",
  "hostIPC",
  "hostUsers",
]);
export const SERVICE_ACCOUNT: ReadonlySet<string> = new Set([
  "serviceAccountName",
  "serviceAccount",
  "automountServiceAccountToken",
]);

/** A container's fields that change neither code, rights nor identity (resources an autoscaler tunes). */
const HARMLESS_IN_CONTAINER = new Set([
  "resources",
  "resizePolicy",
  "imagePullPolicy",
  "terminationMessagePath",
  "terminationMessagePolicy",
]);

/** Pod spec fields (under a `spec`) that are security-relevant as a whole. */
const POD_FIELDS = new Set([
  ...HOST_NAMESPACES,
  ...SERVICE_ACCOUNT,
  "volumes",
  "securityContext",
  "shareProcessNamespace",
  "runtimeClassName",
  "imagePullSecrets",
  "hostAliases",
]);

const RBAC_RULES = new Set(["Role", "ClusterRole"]);
const RBAC_BINDINGS = new Set(["RoleBinding", "ClusterRoleBinding"]);
const WEBHOOKS = new Set([
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "MutatingAdmissionPolicy",
  "MutatingAdmissionPolicyBinding",
]);

/** Whether a change at `path` of an object of `kind` is security-relevant (see the file comment). */
export function isSecurityField(path: Path, kind: string): boolean {
  const top = path[0];
  if (top === "status" || top === "metadata") return false;
  if (RBAC_RULES.has(kind)) return top === "rules" || top === "aggregationRule";
  if (RBAC_BINDINGS.has(kind)) return top === "subjects" || top === "roleRef";
  if (WEBHOOKS.has(kind)) return true;
  // A CRD's spec is a schema: its `containers` and `volumes` are property names, not a pod's. What
  // decides who sees the resources is the conversion webhook the API server sends them to.
  if (kind === "CustomResourceDefinition") return top === "spec" && path[1] === "conversion";
  if (kind === "ServiceAccount")
    return top === "automountServiceAccountToken" || top === "secrets" || top === "imagePullSecrets";
  for (let i = 0; i < path.length; i++) {
    const token = path[i];
    if (typeof token !== "string") continue;
    if (CONTAINER_LISTS.has(token)) {
      // The list, an item, or an item's field other than the harmless ones.
      const field = path[i + 2];
      return typeof field !== "string" || !HARMLESS_IN_CONTAINER.has(field);
    }
    if (path[i - 1] === "spec" && POD_FIELDS.has(token)) return true;
  }
  return false;
}

/**
 * Whether some field at or below `prefix` could be security-relevant for `kind`: false only where
 * isSecurityField is false for every path that starts with it (a CRD's schema, a Role's metadata),
 * so that a walk looking for such fields may skip the subtree. Fail closed: true for what it does
 * not know.
 */
export function mayHoldSecurityField(prefix: Path, kind: string): boolean {
  const top = prefix[0];
  if (top === undefined) return true;
  if (top === "status" || top === "metadata") return false;
  if (RBAC_RULES.has(kind)) return top === "rules" || top === "aggregationRule";
  if (RBAC_BINDINGS.has(kind)) return top === "subjects" || top === "roleRef";
  if (kind === "CustomResourceDefinition")
    return top === "spec" && (prefix.length === 1 || prefix[1] === "conversion");
  if (kind === "ServiceAccount")
    return top === "automountServiceAccountToken" || top === "secrets" || top === "imagePullSecrets";
  return true;
}
