// Which field managers' changes are not drift. Kubernetes' own control loops are trusted by
// default: they write what keeps a workload running (a Deployment's revision annotation, an HPA's
// replica count through the scale subresource, a Service's cluster IP), and undoing it would
// fight the cluster. Everything else (kubectl, a person's script, an unknown controller) is not.
import { globMatch } from "./glob.ts";
import type { Path } from "./types.ts";

/** syncward's own field manager: what it applied, and what admission added to its requests. */
export const OWN_MANAGER = "syncward";

/**
 * Managers trusted without configuration, exactly as they appear in `metadata.managedFields`:
 * the controller manager (every built-in controller, the HPA included, reports under this name),
 * the scheduler, the kubelet and the API server itself.
 */
export const DEFAULT_TRUSTED_MANAGERS: readonly string[] = [
  "kube-controller-manager",
  "kube-scheduler",
  "kubelet",
  "kube-apiserver",
];

/** `kubectl rollout restart` writes this into the pod template: reverting it would restart again and undo a deliberate restart. */
export const RESTARTED_AT = "kubectl.kubernetes.io/restartedAt";

export function isTrustedManager(manager: string, trusted: readonly string[] = []): boolean {
  return (
    manager === OWN_MANAGER ||
    DEFAULT_TRUSTED_MANAGERS.includes(manager) ||
    trusted.some((pattern) => globMatch(pattern, manager))
  );
}

/** Fields that are never drift, whoever set them. */
export function isTrustedPath(path: Path): boolean {
  const n = path.length;
  return n >= 2 && path[n - 1] === RESTARTED_AT && path[n - 2] === "annotations" && path[0] === "spec";
}
