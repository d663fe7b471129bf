// A pull request that slips a ClusterRoleBinding to cluster-admin (and a RoleBinding into
// kube-system) into an environment whose policy allows no cluster-scoped kinds and only its own
// namespace: the preview check run flags both as policy violations, and neither
// the merge (automated sync) nor a `/sync` applies anything. Checked on the real cluster.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startApp, type TestApp } from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { answerEverything } from "../support/permissive-github.ts";
import { issueCommentEvent, pullRequestEvent, pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();

const configMap = (release: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {release: "${release}"}\n`;

const sneakyBinding = (ns: string, name: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${name}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: default, namespace: ${ns}}]
`;

/** A namespaced object aimed at a namespace the environment may not use. */
const foreignRoleBinding = (ns: string, name: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ${name}, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
subjects: [{kind: ServiceAccount, name: default, namespace: ${ns}}]
`;

interface CheckRun {
  name: string;
  head_sha: string;
  conclusion?: string;
  output?: { title: string; summary: string; text?: string };
}

describe("a ClusterRoleBinding to cluster-admin (and a RoleBinding in kube-system) slipped into a pull request", () => {
  let app: TestApp;
  let repo: TestRepo;
  let ns: string;
  let base: string;
  let head: string;
  const bindingName = `sneaky-admin-${Date.now().toString(36)}`;

  const checksFor = (sha: string) =>
    app.mock.requests
      .filter((r) => r.method === "POST" && /\/check-runs$/.test(r.url))
      .map((r) => r.body as CheckRun)
      .filter((c) => c.head_sha === sha);
  const binding = () =>
    cluster.client.get("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", bindingName);
  const foreign = () =>
    cluster.client.get("rbac.authorization.k8s.io/v1", "RoleBinding", "kube-system", bindingName);
  const release = async () =>
    ((await cluster.client.get("v1", "ConfigMap", ns, "settings")) as { data?: { release?: string } })?.data
      ?.release;

  before(async () => {
    ns = await cluster.namespace("policy");
    const stateNs = await cluster.stateNamespace("policy-state");
    const config = `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
`;
    repo = makeRepo({ "app/settings.yaml": configMap("1") });
    base = repo.head();
    head = repo.commit(
      {
        "app/settings.yaml": configMap("2"),
        "app/rbac.yaml": sneakyBinding(ns, bindingName),
        "app/rolebinding.yaml": foreignRoleBinding(ns, bindingName),
      },
      "tidy up settings",
    );
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    answerEverything(app.mock, config, repo.dir, head);
    await app.probot.receive(
      pushEvent({ after: base, before: "0".repeat(40), modified: ["app/settings.yaml"] }),
    );
    await app.settle();
    assert.equal(await release(), "1", "the base commit is deployed");
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
    await cluster.client
      .delete(
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          namespace: "",
          name: bindingName,
          group: "rbac.authorization.k8s.io",
        },
        "background",
      )
      .catch(() => undefined);
  });

  it("the preview check run fails as a policy violation naming the binding and the fix", async () => {
    await app.probot.receive(
      pullRequestEvent("opened", { number: 7, headSha: head, sender: { login: "mallory" } }),
    );
    await app.settle();
    const preview = checksFor(head).find((c) => c.name === "syncward preview / dev");
    assert.equal(preview?.conclusion, "failure");
    assert.equal(preview?.output?.title, "Policy violations");
    assert.match(
      preview?.output?.summary ?? "",
      new RegExp(
        `clusterrolebinding\\.rbac\\.authorization\\.k8s\\.io/${bindingName}: cluster-scoped kind ClusterRoleBinding is not allowed for environment dev \\(add \\{group: "rbac\\.authorization\\.k8s\\.io", kind: ClusterRoleBinding\\} to policy\\.clusterResources\\)`,
      ),
    );
    assert.match(
      preview?.output?.summary ?? "",
      new RegExp(
        `rolebinding\\.rbac\\.authorization\\.k8s\\.io/${bindingName}: namespace "kube-system" is not allowed for environment dev \\(policy\\.namespaces: ${ns}\\)`,
      ),
    );
    assert.equal(await binding(), undefined, "a preview applies nothing");
  });

  it("merging it refuses the automated sync: nothing applied, not even the harmless change", async () => {
    const previews = checksFor(head).length;
    await app.probot.receive(
      pushEvent({ after: head, before: base, modified: ["app/settings.yaml"], added: ["app/rbac.yaml"] }),
    );
    await app.settle();
    assert.ok(checksFor(head).length > previews, "the sync reported a check run of its own");
    const check = checksFor(head)
      .filter((c) => c.name === "syncward / dev")
      .at(-1);
    assert.equal(check?.conclusion, "failure");
    assert.match(JSON.stringify(check?.output), /cluster-scoped kind ClusterRoleBinding is not allowed/);
    assert.equal(await binding(), undefined, "the ClusterRoleBinding does not exist");
    assert.equal(await foreign(), undefined, "nor the RoleBinding in kube-system");
    assert.equal(await release(), "1", "the ConfigMap of the same commit was not applied either");
  });

  it("/sync dev by a writer is refused the same way", async () => {
    await app.probot.receive(
      issueCommentEvent({ body: "/sync dev", sender: { login: "alice" }, commentId: 3001 }),
    );
    await app.settle();
    const reply = app.mock.requests
      .filter((r) => r.method === "POST" && /\/issues\/7\/comments$/.test(r.url))
      .map((r) => (r.body as { body: string }).body)
      .at(-1);
    assert.match(reply ?? "", /ClusterRoleBinding is not allowed/);
    assert.equal(await binding(), undefined);
    assert.equal(await release(), "1");
  });
});
