// A Secret's values never leave the cluster through syncward: not in check runs, comments,
// deployments (every GitHub request body, recorded), logs (pino at trace, to a buffer), metrics,
// the history ConfigMaps, or the CLI's output (stdout and stderr, text and JSON). The Secret is
// synced through the GitHub App, drifted out of band to a third value, diffed, healed and listed;
// then every channel is scanned for each value in plain text and in base64 at any alignment.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { Probot } from "probot";
import { type SyncwardApp, syncwardApp } from "../../src/github/app.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { ensureBuilt } from "../support/built.ts";
import { eventually, kubectl, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { type GitHubMock, mockGitHub, TestOctokit, takeOpenApiViolations } from "../support/github.ts";
import { answerEverything } from "../support/permissive-github.ts";
import { issueCommentEvent, pushEvent, repoIdOf } from "../support/webhooks.ts";

const cluster = useCluster();
const ROOT = join(import.meta.dirname, "../..");
const GITHUB_TOKEN = "ghs_leakcanary0123456789abcdefghijklmn";

// Distinctive values: in `stringData`, in `data` (base64 in the manifest), and the drifted one.
const IN_STRING_DATA = "sw-leak-STRINGDATA-7Qm2vX";
const IN_DATA = "sw-leak-DATA-Kx93pL";
const DRIFTED = "sw-leak-DRIFT-Zp41wN";
const b64 = (s: string) => Buffer.from(s).toString("base64");

/**
 * The forms a value can take in text: itself, and its base64 at each of the three alignments it can
 * have inside a longer encoded string (the characters that do not depend on the neighbours).
 */
function forms(value: string): string[] {
  const out = [value];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.from(`${"\0".repeat(shift)}${value}`).toString("base64");
    // Character j holds bits [6j, 6j+6): it depends on the value alone when they lie in its bytes.
    const start = Math.ceil((shift * 4) / 3);
    const end = Math.floor(((shift + value.length) * 4) / 3);
    out.push(encoded.slice(start, end));
  }
  return out;
}

const FORMS = [IN_STRING_DATA, IN_DATA, DRIFTED].flatMap((v) => forms(v).map((f) => ({ value: v, form: f })));

/** Every form of every secret value found in `text`, as `value (form)`. */
function leaks(text: string): string[] {
  return FORMS.filter(({ form }) => text.includes(form)).map(({ value, form }) => `${value} (${form})`);
}

const manifests = `apiVersion: v1
kind: Secret
metadata: {name: api-credentials}
type: Opaque
stringData: {password: "${IN_STRING_DATA}"}
data: {token: "${b64(IN_DATA)}"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: "production"}
`;

describe("a Secret's values never leave the cluster", () => {
  let ns: string;
  let stateNs: string;
  let repoDir: string;
  let mock: GitHubMock;
  let probot: Probot;
  let parts: SyncwardApp | undefined;
  let logs = "";
  const metrics = createMetrics({ defaultMetrics: false });
  const cli: string[] = [];
  const replies: string[] = [];

  before(async () => {
    ensureBuilt();
    ns = await cluster.namespace("leak");
    stateNs = await cluster.stateNamespace("leak-state");
    const config = `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
`;
    const repo = makeRepo({ ".github/syncward.yml": config, "app/secret.yaml": manifests });
    repoDir = repo.dir;
    const sha = repo.head();
    mock = mockGitHub();
    answerEverything(mock, config, repo.dir, sha);
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logs += chunk.toString();
        done();
      },
    });
    // The production logger (redaction, err serializer, child loggers per environment).
    const log = createLogger({ level: "trace", destination: sink });
    probot = new Probot({ githubToken: GITHUB_TOKEN, Octokit: TestOctokit, log });
    await probot.load(
      syncwardApp(
        {
          client: cluster.syncwardClient,
          stateNamespace: stateNs,
          cacheDir: join(repo.dir, ".trees"),
          identity: "leak-test",
          leases: false,
          watch: false,
          pollIntervalMs: 0,
          autoStart: false,
          log,
          metrics,
          onEvent: (e) => metrics.recordEvent(e),
        },
        (p) => {
          parts = p;
        },
      ),
    );
    await probot.receive(pushEvent({ after: sha, before: "0".repeat(40), modified: ["app/secret.yaml"] }));
    await settle();
  });

  after(async () => {
    await Promise.all(parts?.runtimes.all().map((r) => r.stop()) ?? []);
    mock.reset();
  });

  async function settle(): Promise<void> {
    for (let i = 0; i < 3; i++) {
      for (const rt of parts?.runtimes.all() ?? []) {
        await Promise.all(rt.reconciler.environments.map((c) => c.idle()));
        await rt.reporter.idle();
      }
    }
  }

  async function comment(body: string, commentId: number): Promise<void> {
    const before = mock.requests.length;
    await probot.receive(issueCommentEvent({ body, sender: { login: "alice" }, commentId }));
    await settle();
    for (const r of mock.requests.slice(before)) {
      const b = r.body as { body?: string } | undefined;
      if (r.method === "POST" && /\/issues\/7\/comments$/.test(r.url) && b?.body) replies.push(b.body);
    }
  }

  async function syncward(...args: string[]): Promise<string> {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, "bin/syncward.js"),
        ...args,
        "--repo",
        repoDir,
        "--kubeconfig",
        cluster.syncwardKubeconfig,
        "--app",
        `gh_${repoIdOf("acme/shop")}`, // the installed repository's app, as the GitHub App names it
        "--state-namespace",
        stateNs,
      ],
      { cwd: ROOT },
    ).catch((err: { stdout: string; stderr: string; code: number }) => {
      // `app diff` exits 1 when there is a difference: its output is what matters here.
      if (err.code !== 1) throw err;
      return err;
    });
    const out = `$ syncward ${args.join(" ")}\n${stdout}\n${stderr}`;
    cli.push(out);
    return out;
  }

  const liveValue = () =>
    Buffer.from(
      kubectl(["get", "secret", "api-credentials", "-n", ns, "-o", "jsonpath={.data.password}"]),
      "base64",
    ).toString();

  it("syncs the Secret through the app: the cluster holds both values (the scan would see them)", () => {
    assert.equal(liveValue(), IN_STRING_DATA);
    const live = kubectl(["get", "secret", "api-credentials", "-n", ns, "-o", "json"]);
    assert.ok(leaks(live).length >= 2, "the forms scanned for are the forms the cluster holds");
  });

  it("drift on the Secret is diffed (masked) by the CLI, not compared by /diff, then healed", async () => {
    kubectl([
      "patch",
      "secret",
      "api-credentials",
      "-n",
      ns,
      "--type=merge",
      "-p",
      JSON.stringify({ data: { password: b64(DRIFTED) } }),
    ]);
    assert.equal(liveValue(), DRIFTED);

    // Everyone who can read the pull request reads /diff: it never compares Secret values
    // (docs/semantics.md, "Pull-request previews"); the CLI, for people with cluster access, masks them.
    await comment("/diff dev", 2001);
    assert.match(replies.at(-1) ?? "", /Secret values are not compared/);
    const diff = await syncward("app", "diff", "dev");
    assert.match(diff, /\+\+\+\+\+\+\+\+/);
    await syncward("app", "diff", "dev", "-o", "json");

    const dev = parts?.runtimes.all()[0]?.reconciler.controller("dev");
    dev?.nudge("poll", "leak-test");
    await eventually("the self-heal", async () => liveValue() === IN_STRING_DATA);
    await settle();
  });

  it("/history, and the CLI's get and history in text and JSON, run", async () => {
    await comment("/history dev", 2002);
    assert.match(replies.at(-1) ?? "", /history:/);
    await syncward("app", "get", "dev");
    await syncward("app", "get", "dev", "-o", "json");
    await syncward("app", "history", "dev");
    const history = await syncward("app", "history", "dev", "-o", "json");
    assert.match(history, /"trigger"/);
  });

  it("no channel holds any secret value, plain or base64", async () => {
    const github = mock.requests.map((r) => `${r.method} ${r.url}\n${JSON.stringify(r.body ?? "")}`);
    // Every request was answered and valid, so no report was lost before it could be scanned.
    assert.deepEqual(
      github.filter((r) => r.includes("(no match)")),
      [],
    );
    assert.deepEqual(
      takeOpenApiViolations().map((v) => v.message),
      [],
    );
    assert.ok(
      github.some((r) => /check-runs/.test(r)),
      "check runs were reported (the channel is not empty)",
    );
    const stateObjects = kubectl(["get", "configmaps,leases", "-n", stateNs, "-o", "json"]);
    assert.match(stateObjects, /history/i, "the history ConfigMaps were read");
    const channels: Record<string, string> = {
      "GitHub requests (check runs, comments, deployments)": github.join("\n"),
      "comment replies": replies.join("\n"),
      logs,
      metrics: await metrics.registry.metrics(),
      "history ConfigMaps": stateObjects,
      "CLI output": cli.join("\n"),
    };
    assert.ok(logs.length > 0, "logs were captured");
    assert.match(logs, /"environment":"dev"/, "an environment's lines carry it");
    for (const [name, text] of Object.entries(channels))
      assert.equal(text.includes(GITHUB_TOKEN), false, `the GitHub token is in ${name}`);
    const found = Object.entries(channels).flatMap(([name, text]) => leaks(text).map((l) => `${name}: ${l}`));
    assert.deepEqual(found, []);
  });
});
