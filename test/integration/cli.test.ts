// The argocd-style CLI on a real repository and the real cluster: what a person sees, the exit
// codes scripts rely on, and one clear line for every bad input (with nothing changed).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkoutApp } from "../../src/cli/app-identity.ts";
import type { CliIO } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { instanceName } from "../../src/state/identity.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { unreachableKubeconfig } from "../support/kubeconfig.ts";

const cluster = useCluster();
const ESC = "\u001b";

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`), isTTY: false };
  const code = await main(args, io);
  return { code, out, err };
}

const deployment = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: "${image}"}]}
`;
const secret =
  'apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: "hunter2-very-secret"}\n';

async function project() {
  const ns = await cluster.namespace("cli");
  const stateNs = await cluster.stateNamespace("cli-state");
  const repo = makeRepo({
    ".github/syncward.yml": `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n    syncPolicy: {automated: {prune: true, selfHeal: true}}\n`,
    "app/deploy.yaml": deployment("nginx:1.27"),
    "app/secret.yaml": secret,
  });
  const common = [
    "--repo",
    repo.dir,
    "--kubeconfig",
    cluster.syncwardKubeconfig,
    "--app",
    "shop",
    "--state-namespace",
    stateNs,
  ];
  return { ns, repo, common };
}

describe("syncward app", () => {
  it("diff, sync, get, history: output that reads like argocd and exit codes scripts can trust", async () => {
    const { ns, repo, common } = await project();
    const diff = await run(["app", "diff", "dev", ...common]);
    assert.equal(diff.code, 1, "a diff exists");
    assert.match(diff.out, /\+\+\+ desired\/apps\/Deployment:.*\/api/);
    assert.doesNotMatch(diff.out, /hunter2/, "secret values never printed");
    assert.doesNotMatch(diff.out, new RegExp(Buffer.from("hunter2-very-secret").toString("base64")));

    const sync = await run(["app", "sync", "dev", ...common]);
    assert.equal(sync.code, 0, sync.err);
    assert.match(sync.out, /^GROUP\s+KIND\s+NAMESPACE\s+NAME\s+STATUS\s+HEALTH\s+MESSAGE$/m);
    assert.match(sync.out, /deployment\.apps\/api created/);
    assert.match(sync.out, /Operation: Succeeded at [0-9a-f]{7}: 2 created/);

    const noDiff = await run(["app", "diff", "dev", ...common]);
    assert.equal(noDiff.code, 0);
    assert.equal(noDiff.out, "");

    const get = await run(["app", "get", "dev", ...common]);
    assert.equal(get.code, 0);
    assert.match(get.out, /^Name:\s+shop\.dev$/m);
    assert.match(get.out, /^Sync Policy:\s+Automated \(Prune, SelfHeal\)$/m);
    assert.match(
      get.out,
      new RegExp(`^Sync Status:\\s+Synced to main \\(${repo.head().slice(0, 7)}\\)$`, "m"),
    );
    assert.match(get.out, /^apps\s+Deployment\s+\S+\s+api\s+Synced/m);

    const json = JSON.parse((await run(["app", "get", "dev", "-o", "json", ...common])).out);
    assert.equal(json.syncStatus, "Synced");
    assert.equal(json.revision, repo.head());
    assert.equal(json.resources.length, 2);

    const yaml = await run(["app", "get", "dev", "-o", "yaml", ...common]);
    assert.equal(yaml.code, 0);
    assert.match(yaml.out, /^syncStatus: Synced$/m);
    assert.match(yaml.out, new RegExp(`^revision: ${repo.head()}$`, "m"));
    const wide = await run(["app", "list", "-o", "wide", ...common]);
    assert.match(
      wide.out,
      /^NAME\s+NAMESPACE\s+TARGET\s+PATH\s+SYNCPOLICY\s+STATUS\s+REVISION\s+INSTANCE\s+LAST SYNC\s+RESULT$/m,
    );
    // The instance is named by the app's identity (`--app shop` → local_<hash>), not its display name.
    const instance = instanceName(checkoutApp(repo.dir, "shop").id, "dev").replace(/[.]/g, "\\.");
    assert.match(wide.out, new RegExp(`^dev\\s.*\\s${instance}\\s+\\S+Z\\s+Succeeded$`, "m"));
    const waited = await run(["app", "wait", "dev", "--timeout", "30s", ...common]);
    assert.equal(waited.code, 0, waited.err);
    assert.match(waited.out, /^dev: Synced, Healthy at [0-9a-f]{7}$/m);

    const history = await run(["app", "history", "dev", ...common]);
    assert.match(history.out, /^ID\s+DATE\s+REVISION\s+TRIGGER\s+ACTOR\s+RESULT\s+TITLE$/m);
    // The commit's title, recorded at sync time, beside its SHA.
    assert.match(
      history.out,
      new RegExp(`^1\\s+\\S+Z\\s+${repo.head().slice(0, 7)}\\s+cli\\s+\\S+\\s+Succeeded\\s+initial$`, "m"),
    );

    repo.commit({ "app/deploy.yaml": deployment("nginx:1.28") });
    const get2 = await run(["app", "get", "dev", ...common]);
    assert.match(get2.out, /^Sync Status:\s+OutOfSync from main/m);
    const timedOut = await run(["app", "wait", "dev", "--sync", "--timeout", "1s", ...common]);
    assert.equal(timedOut.code, 1, "still OutOfSync when the timeout passes");
    assert.match(timedOut.out, /^dev: OutOfSync, \w+ at [0-9a-f]{7}: timed out waiting for Synced$/m);
    process.env.FORCE_COLOR = "1";
    try {
      const colored = await run(["app", "diff", "dev", ...common]);
      assert.match(colored.out, new RegExp(`${ESC}\\[31m-.*nginx:1\\.27`));
      assert.match(colored.out, new RegExp(`${ESC}\\[32m\\+.*nginx:1\\.28`));
      process.env.NO_COLOR = "1";
      assert.equal((await run(["app", "diff", "dev", ...common])).out.includes(ESC), false, "NO_COLOR wins");
    } finally {
      delete process.env.FORCE_COLOR;
      delete process.env.NO_COLOR;
    }
    assert.equal((await run(["app", "diff", "dev", ...common])).out.includes(ESC), false, "not a terminal");
    const dry = await run(["app", "sync", "dev", "--dry-run", ...common]);
    assert.equal(dry.code, 0);
    assert.match(dry.out, /Dry run: Succeeded/);
    const live = (await cluster.client.get("apps/v1", "Deployment", ns, "api")) as unknown as {
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
    };
    assert.equal(live.spec.template.spec.containers[0]?.image, "nginx:1.27", "a dry run changes nothing");
  });

  it("set, freeze and unfreeze change the effective policy and say where it came from", async () => {
    const { common } = await project();
    const set = await run(["app", "set", "dev", "--sync-policy", "none", ...common]);
    assert.equal(set.code, 0);
    assert.match(set.out, /Sync Policy: <none> \(set by \S+ at /);
    const frozen = await run(["app", "freeze", "dev", "--reason", "release night", ...common]);
    assert.match(frozen.out, /Sync Policy: Frozen by \S+ since \S+ \(release night\)/);
    const refused = await run(["app", "sync", "dev", ...common]);
    assert.equal(refused.code, 1);
    assert.match(refused.out, /Refused .*frozen by .*release night/);
    const list = await run(["app", "list", ...common]);
    assert.match(list.out, /^dev\s+\S+\s+main\s+app\s+Frozen by/m);
    await run(["app", "unfreeze", "dev", ...common]);
    const restored = await run(["app", "set", "dev", "--sync-policy", "config", ...common]);
    assert.match(restored.out, /Sync Policy: Automated \(Prune, SelfHeal\)$/m);
  });

  it("gives one clear line and exit code 2 for bad input, changing nothing", async () => {
    const { ns, repo, common } = await project();
    const unknown = await run(["app", "sync", "dve", ...common]);
    assert.equal(unknown.code, 2);
    assert.equal(
      unknown.err.trim(),
      'syncward: unknown environment "dve" (did you mean "dev"?); environments: dev',
    );

    const missing = await run([
      "app",
      "get",
      "dev",
      "--repo",
      repo.dir,
      "--config",
      "/nonexistent/syncward.yml",
      "--kubeconfig",
      cluster.syncwardKubeconfig,
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /^syncward: no syncward config at \/nonexistent\/syncward.yml/);
    assert.equal(missing.err.trim().split("\n").length, 1);

    const badRevision = await run(["app", "sync", "dev", "--revision", "no-such-ref", ...common]);
    assert.equal(badRevision.code, 2);
    assert.match(badRevision.err, /revision 'no-such-ref' not found/);

    const unreachable = await run([
      "app",
      "sync",
      "dev",
      ...common.filter((_, i, a) => a[i - 1] !== "--kubeconfig" && a[i] !== "--kubeconfig"),
      "--kubeconfig",
      unreachableKubeconfig(),
    ]);
    assert.equal(unreachable.code, 2);
    assert.match(
      unreachable.err,
      /^syncward: cannot reach the API server at https:\/\/127\.0\.0\.1:9: .* \(check --kubeconfig and --context\)$/m,
    );

    process.env.SYNCWARD_MAX_OBJECTS = "lots";
    try {
      const badLimit = await run(["app", "sync", "dev", ...common]);
      assert.equal(badLimit.code, 2);
      assert.equal(
        badLimit.err.trim(),
        'syncward: SYNCWARD_MAX_OBJECTS="lots": expected a whole number greater than 0',
      );
    } finally {
      delete process.env.SYNCWARD_MAX_OBJECTS;
    }

    assert.equal(
      (await cluster.client.list("apps/v1", "Deployment", { namespace: ns })).items.length,
      0,
      "nothing changed",
    );
  });
});
