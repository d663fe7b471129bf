// The attacks a person with kubectl write access to a namespace makes on a Deployment, shared by
// the self-heal tests (controller running) and the CLI tests (selfHeal off, manual sync).
import type { KubeObject } from "../../src/kube/object.ts";
import { kubectl } from "./cluster.ts";

/** What Git declares: one container, no securityContext, no ServiceAccount, no volumes. */
export const WEB_YAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          env:
            - {name: LOG_LEVEL, value: info}
`;

export type Live = KubeObject & { spec: { replicas: number; template: { spec: PodSpec } } };
interface PodSpec {
  containers: Array<{
    name: string;
    image: string;
    securityContext?: unknown;
    env?: Array<{ value?: string }>;
  }>;
  volumes?: unknown[];
  serviceAccountName?: string;
}

export interface Attack {
  name: string;
  run(ns: string): void;
  /** The reverted path the history names. */
  path: RegExp;
  manager: string;
  security?: RegExp;
  /** The attack's own change is gone from `live`. */
  reverted(live: Live): boolean;
}

const spec = (live: Live) => live.spec.template.spec;

/** `kubectl get -o json`, change it, `kubectl replace`: what `kubectl edit` does, without an editor. */
function editStyle(ns: string, change: (obj: Live) => void): void {
  for (let attempt = 1; ; attempt++) {
    const obj = JSON.parse(kubectl(["-n", ns, "get", "deployment/web", "-o", "json"])) as Live;
    change(obj);
    try {
      kubectl(["-n", ns, "replace", "-f", "-"], JSON.stringify(obj));
      return;
    } catch (err) {
      // The Deployment controller (or syncward reverting an earlier attack) wrote in between: as an
      // intruder would, try again. On a loaded machine each try is slow enough for several writes.
      if (attempt >= 20 || !String(err).includes("the object has been modified")) throw err;
    }
  }
}

export const ATTACKS: Attack[] = [
  {
    name: "image swap (kubectl set image)",
    run: (ns) => kubectl(["-n", ns, "set", "image", "deployment/web", "web=evil:1"]),
    path: /^\/spec\/template\/spec\/containers\/0\/image$/,
    manager: "kubectl-set",
    security: /image changed/,
    reverted: (live) => spec(live).containers[0]?.image === "nginx:1.27",
  },
  {
    name: "added sidecar (kubectl patch)",
    run: (ns) =>
      kubectl([
        "-n",
        ns,
        "patch",
        "deployment/web",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"miner","image":"evil:1"}]}}}}',
      ]),
    path: /^\/spec\/template\/spec\/containers\/\d$/,
    manager: "kubectl-patch",
    security: /new container, image evil:1/,
    reverted: (live) => spec(live).containers.length === 1,
  },
  {
    name: "privileged: true on the declared container (kubectl patch --type=json)",
    run: (ns) =>
      kubectl([
        "-n",
        ns,
        "patch",
        "deployment/web",
        "--type=json",
        "-p",
        '[{"op":"add","path":"/spec/template/spec/containers/0/securityContext","value":{"privileged":true}}]',
      ]),
    path: /^\/spec\/template\/spec\/containers\/0\/securityContext$/,
    manager: "kubectl-patch",
    security: /privileged/,
    reverted: (live) => spec(live).containers[0]?.securityContext === undefined,
  },
  {
    name: "hostPath volume (edit-style kubectl replace)",
    run: (ns) =>
      editStyle(ns, (obj) => {
        spec(obj).volumes = [{ name: "host", hostPath: { path: "/" } }];
      }),
    path: /^\/spec\/template\/spec\/volumes$/,
    manager: "kubectl-replace",
    security: /hostPath volume/,
    reverted: (live) => spec(live).volumes === undefined,
  },
  {
    name: "replicas (kubectl scale)",
    run: (ns) => kubectl(["-n", ns, "scale", "deployment/web", "--replicas=10"]),
    path: /^\/spec\/replicas$/,
    manager: "kubectl",
    reverted: (live) => live.spec.replicas === 2,
  },
  {
    name: "env var hand-patched (kubectl set env)",
    run: (ns) => kubectl(["-n", ns, "set", "env", "deployment/web", "LOG_LEVEL=debug-leak"]),
    path: /^\/spec\/template\/spec\/containers\/0\/env\/0\/value$/,
    manager: "kubectl-set",
    reverted: (live) => spec(live).containers[0]?.env?.[0]?.value === "info",
  },
  {
    name: "serviceAccountName (kubectl patch)",
    run: (ns) =>
      kubectl([
        "-n",
        ns,
        "patch",
        "deployment/web",
        "-p",
        '{"spec":{"template":{"spec":{"serviceAccountName":"admin"}}}}',
      ]),
    path: /^\/spec\/template\/spec\/serviceAccountName$/,
    manager: "kubectl-patch",
    security: /ServiceAccount changed/,
    reverted: (live) => spec(live).serviceAccountName === undefined,
  },
];
