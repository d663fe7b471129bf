import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { KubeClient } from "../../../src/kube/client.ts";
import { KubeApiError } from "../../../src/kube/errors.ts";
import { impersonationHint } from "../../../src/kube/impersonation.ts";

// A tiny API server that records who each request claimed to be, and forbids every write of
// the ServiceAccount `team-a:deployer` (what RBAC would answer).
const seen: Array<{ method: string; path: string; as?: string }> = [];
const server = createServer((req, res) => {
  const as = (req.headers as IncomingHttpHeaders)["impersonate-user"] as string | undefined;
  seen.push({ method: req.method ?? "", path: (req.url ?? "").split("?")[0] ?? "", as });
  req.resume();
  req.on("end", () => {
    res.setHeader("Content-Type", "application/json");
    if (req.url === "/api/v1")
      return res.end(
        JSON.stringify({
          resources: [{ name: "configmaps", kind: "ConfigMap", namespaced: true, verbs: [] }],
        }),
      );
    if (req.method !== "GET" && as === "system:serviceaccount:team-a:deployer") {
      res.statusCode = 403;
      return res.end(
        JSON.stringify({
          kind: "Status",
          reason: "Forbidden",
          message: `configmaps "c" is forbidden: User "${as}" cannot patch resource "configmaps" in API group "" in the namespace "team-a"`,
        }),
      );
    }
    res.end(
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "team-a" } }),
    );
  });
});
let client: KubeClient;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const file = join(mkdtempSync(join(tmpdir(), "kc-")), "kubeconfig");
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
  );
  client = KubeClient.fromKubeconfig({ kubeconfig: file });
});
after(() => {
  client.close();
  server.close();
});

const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "team-a" } };

describe("KubeClient.writingAs", () => {
  it("impersonates on writes only: reads and discovery keep syncward's identity", async () => {
    seen.length = 0;
    const writer = client.writingAs("system:serviceaccount:team-a:other");
    await writer.get("v1", "ConfigMap", "team-a", "c");
    await writer.apply(cm, { dryRun: true });
    await writer.apply(cm);
    await writer.delete({ group: "", kind: "ConfigMap", namespace: "team-a", name: "c", apiVersion: "v1" });
    await writer.create(cm); // how hooks are created
    await writer.replace(cm); // Replace=true
    await client.apply(cm);
    assert.deepEqual(
      seen.map((r) => `${r.method} ${r.as ?? "-"}`),
      [
        "GET -", // discovery
        "GET -",
        "PATCH system:serviceaccount:team-a:other",
        "PATCH system:serviceaccount:team-a:other",
        "DELETE system:serviceaccount:team-a:other",
        "POST system:serviceaccount:team-a:other",
        "PUT system:serviceaccount:team-a:other",
        "PATCH -",
      ],
    );
    assert.equal(client.counts.writes, writer.counts.writes, "one set of counts");
  });

  it("a forbidden write keeps the API server's words and says what to grant", async () => {
    const writer = client.writingAs("system:serviceaccount:team-a:deployer");
    await assert.rejects(writer.apply(cm), (err: unknown) => {
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.impersonatedAs, "system:serviceaccount:team-a:deployer");
      assert.equal(
        err.message,
        'configmaps "c" is forbidden: User "system:serviceaccount:team-a:deployer" cannot patch resource "configmaps" in API group "" in the namespace "team-a"; syncward wrote as system:serviceaccount:team-a:deployer, the project\'s serviceAccount for this destination: grant ServiceAccount team-a/deployer "patch" on configmaps in namespace team-a with a Role and RoleBinding (create the ServiceAccount first if it does not exist)',
      );
      return true;
    });
  });
});

describe("impersonationHint", () => {
  const user = "system:serviceaccount:team-a:deployer";
  const table: Array<[string, string, string]> = [
    [
      "syncward may not impersonate",
      `serviceaccounts "deployer" is forbidden: User "system:serviceaccount:syncward:syncward" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"`,
      `syncward's own ServiceAccount may not impersonate ${user}: grant it "impersonate" on serviceaccounts "deployer" in namespace team-a (see deploy/components/impersonation)`,
    ],
    [
      "a cluster-scoped kind",
      `clusterroles.rbac.authorization.k8s.io "x" is forbidden: User "${user}" cannot patch resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`,
      `syncward wrote as ${user}, the project's serviceAccount for this destination: grant ServiceAccount team-a/deployer "patch" on clusterroles.rbac.authorization.k8s.io with a ClusterRole and ClusterRoleBinding (create the ServiceAccount first if it does not exist)`,
    ],
    [
      "a refusal that is not RBAC's (admission)",
      'pods "p" is forbidden: violates PodSecurity',
      `syncward wrote as ${user} (the project's serviceAccount for this destination)`,
    ],
  ];
  for (const [name, message, expected] of table)
    it(name, () => assert.equal(impersonationHint(message, user), expected));
});
