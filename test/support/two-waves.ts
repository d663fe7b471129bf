// A two-wave app that stays in the middle of its sync until the test lets it go on: wave 0 is a
// LoadBalancer Service, Progressing until it has an address, which nothing in the test plane gives
// it (no cloud controller) until frontReady; wave 1 waits for it. For tests that stop a process
// mid-sync.
import type { KubeClient } from "../../src/kube/client.ts";

export const TWO_WAVES = `apiVersion: v1
kind: Service
metadata:
  name: front
  annotations: {argocd.argoproj.io/sync-wave: "0"}
spec:
  type: LoadBalancer
  selector: {app: front}
  ports: [{port: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: after-front
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {v: "1"}
`;

/** Gives the Service of wave 0 an address, as a cloud controller would: it becomes Healthy. */
export async function frontReady(client: KubeClient, namespace: string): Promise<void> {
  await client.request("PATCH", `/api/v1/namespaces/${namespace}/services/front/status`, {
    body: { status: { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } } },
    contentType: "application/merge-patch+json",
  });
}
