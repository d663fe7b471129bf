// Chart dependencies from a chart repository: served by this test on 127.0.0.1 (index.yaml and an
// archive made by `helm package`), fetched once per (chart, version) and cached, refused when the
// operator has not allowed the repository, with credentials from the operator's side only.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pino from "pino";
import type { KubeObject } from "../../src/kube/object.ts";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { SourceError } from "../../src/source/errors.ts";
import { ChartFetchError, type HelmRepositoryAccess } from "../../src/source/helm-repositories.ts";
import { render } from "../../src/source/render.ts";
import { StateStore } from "../../src/state/store.ts";
import { useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { ensureHelm, fixtureFiles } from "../support/helm.ts";

const FIXTURES = "test/fixtures/helm";
const USER = "deployer";
const PASSWORD = "s3cret-chart-pass";
const helm = ensureHelm();

/** A chart repository on 127.0.0.1: `/open/` for anyone, `/private/` with basic auth; requests counted. */
class ChartRepository {
  readonly requests: string[] = [];
  private server: Server | undefined;
  port = 0;
  private readonly dir = mkdtempSync(join(tmpdir(), "syncward-chart-repo-"));

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.requests.push(req.url ?? "");
      const [, area, file] = /^\/(open|private)\/([\w.-]+)$/.exec(req.url ?? "") ?? [];
      const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`;
      if (area === "private" && req.headers.authorization !== auth) {
        res.writeHead(401, { "WWW-Authenticate": 'Basic realm="charts"' }).end("unauthorized");
        return;
      }
      try {
        res.end(readFileSync(join(this.dir, area ?? "", file ?? "")));
      } catch {
        res.writeHead(404).end("not found");
      }
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.port = typeof address === "object" && address ? address.port : 0;
    for (const area of ["open", "private"]) {
      const out = join(this.dir, area);
      execFileSync(helm, ["package", `${FIXTURES}/cachelite`, "--destination", out], { stdio: "ignore" });
      execFileSync(helm, ["repo", "index", out, "--url", this.url(area)], { stdio: "ignore" });
    }
  }

  url(area: string): string {
    return `http://127.0.0.1:${this.port}/${area}`;
  }

  count(pattern: RegExp): number {
    return this.requests.filter((r) => pattern.test(r)).length;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const cluster = useCluster();

/** A controller of the storefront chart in `repo`, in a namespace of its own. */
async function chartController(name: string, repo: TestRepo, fields: Record<string, unknown> = {}) {
  const ns = await cluster.namespace(`helm-${name}`);
  const store = new StateStore(cluster.syncwardClient, await cluster.stateNamespace(`helm-${name}-state`));
  const controller = new EnvironmentController({
    app: "charts",
    env: envConfig(ns, { name, source: { path: "storefront" }, ...fields }),
    client: cluster.syncwardClient,
    store,
    source: new LocalGitSource(repo.dir, mkdtempSync(join(tmpdir(), "syncward-trees-"))),
    emit: () => undefined,
    log: pino({ level: "silent" }),
    pollIntervalMs: 0,
    watch: false,
  });
  return { ns, store, controller };
}

const charts = new ChartRepository();
before(() => charts.start());
after(() => charts.stop());

function chartRepo(repositoryUrl: string) {
  const files = fixtureFiles(`${FIXTURES}/with-dependency`, "storefront");
  files["storefront/Chart.yaml"] = (files["storefront/Chart.yaml"] ?? "").replace(
    "repository: REPOSITORY_URL",
    `repository: ${repositoryUrl}`,
  );
  return makeRepo(files);
}

function access(
  allowed: string[],
  credentials: HelmRepositoryAccess["credentials"] = [],
): HelmRepositoryAccess {
  return { allowed, credentials, cacheDir: mkdtempSync(join(tmpdir(), "syncward-helm-cache-")) };
}

const renderStorefront = (dir: string, repositories: HelmRepositoryAccess) =>
  render(dir, "storefront", {
    helmContext: { releaseName: "shop", namespace: "shop" },
    repositories,
  });

const dataOf = (objects: KubeObject[], name: string) =>
  (objects.find((o) => o.metadata.name === name) as (KubeObject & { data?: unknown }) | undefined)?.data;

describe("chart dependencies from a chart repository", () => {
  it("fetches a dependency once per (chart, version), then renders from the cache", async () => {
    const repo = chartRepo(charts.url("open"));
    const repositories = access([charts.url("open")]);
    const before = charts.requests.length;
    const first = await renderStorefront(repo.dir, repositories);
    assert.deepEqual(dataOf(first.objects, "shop-cachelite"), { size: "128mb" });
    assert.deepEqual(dataOf(first.objects, "shop-storefront"), { cache: "shop-cachelite" });
    assert.equal(charts.count(/^\/open\/index\.yaml$/), 1);
    assert.equal(charts.count(/^\/open\/cachelite-0\.2\.0\.tgz$/), 1);
    // A template of the fetched chart is not in the repository: it points at Chart.yaml.
    assert.equal([...first.files.values()].sort()[0], "storefront/Chart.yaml");

    repo.commit({ "storefront/values.yaml": "cachelite:\n  size: 512mb\n" });
    const second = await renderStorefront(repo.dir, repositories);
    assert.deepEqual(dataOf(second.objects, "shop-cachelite"), { size: "512mb" });
    assert.equal(charts.requests.length - before, 2, "the second render fetched nothing");
    assert.equal(repo.git("status", "--porcelain"), "", "nothing was written into the repository");
  });

  it("refuses a repository the operator has not allowed, naming it, without contacting it", async () => {
    const repo = chartRepo(charts.url("open"));
    const before = charts.requests.length;
    const error = await renderStorefront(repo.dir, access(["https://charts.example.com/stable"])).catch(
      (e) => e,
    );
    assert.ok(error instanceof SourceError);
    assert.equal(error.file, "storefront/Chart.yaml");
    assert.equal(error.line, 5);
    assert.match(
      error.message,
      new RegExp(`chart repository ${charts.url("open")} is not allowed .*SYNCWARD_HELM_REPOSITORIES`),
    );
    assert.equal(charts.requests.length, before);
    // A prefix allows only what is below it at a path boundary.
    const lookalike = await renderStorefront(repo.dir, access([`${charts.url("open")}x`])).catch((e) => e);
    assert.match(String(lookalike), /is not allowed/);
  });

  it("authenticates with the operator's credentials, and never shows the password", async () => {
    const repo = chartRepo(charts.url("private"));
    const without = await renderStorefront(repo.dir, access([charts.url("private")])).catch((e) => e);
    // Not the revision's fault (the repository may let us in later): retried, not held as stuck.
    assert.ok(without instanceof ChartFetchError, String(without));
    assert.match(
      without.message,
      /^storefront\/Chart\.yaml:5: dependency 'cachelite' 0\.2\.0 from .* could not be fetched: .*401/s,
    );
    const wrong = await renderStorefront(
      repo.dir,
      access(
        [charts.url("private")],
        [{ url: charts.url("private"), username: USER, password: "wrong-pass" }],
      ),
    ).catch((e) => e);
    assert.doesNotMatch(String(wrong), /wrong-pass/);
    const rendered = await renderStorefront(
      repo.dir,
      access(
        [charts.url("private")],
        [{ url: `http://127.0.0.1:${charts.port}`, username: USER, password: PASSWORD }],
      ),
    );
    assert.deepEqual(dataOf(rendered.objects, "shop-cachelite"), { size: "128mb" });
  });

  it("a repository that is down fails the sync as retryable and leaves the revision not stuck", async () => {
    const repo = chartRepo("http://127.0.0.1:9/down");
    const saved = { ...process.env };
    process.env.SYNCWARD_HELM_REPOSITORIES = "http://127.0.0.1:9/down";
    process.env.SYNCWARD_HELM_CACHE = mkdtempSync(join(tmpdir(), "syncward-helm-cache-"));
    const { store, controller } = await chartController("down", repo, {
      syncPolicy: { retry: { limit: 0 } },
    });
    try {
      const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
      assert.notEqual(outcome.phase, "Succeeded");
      assert.match(
        outcome.message,
        /dependency 'cachelite' 0\.2\.0 from http:\/\/127\.0\.0\.1:9\/down could not be fetched/,
      );
      assert.equal((await store.load(controller.instance)).stuck, undefined);
    } finally {
      await controller.stop();
      process.env = saved;
    }
  });

  it("deploys a chart whose dependency comes from the repository, configured by the operator's environment", async () => {
    const repo = chartRepo(charts.url("private"));
    const credentials = join(mkdtempSync(join(tmpdir(), "syncward-helm-creds-")), "credentials.yaml");
    writeFileSync(
      credentials,
      `- url: ${charts.url("private")}\n  username: ${USER}\n  password: ${PASSWORD}\n`,
    );
    const saved = { ...process.env };
    process.env.SYNCWARD_HELM_REPOSITORIES = `https://charts.example.com, ${charts.url("private")}`;
    process.env.SYNCWARD_HELM_CREDENTIALS_FILE = credentials;
    process.env.SYNCWARD_HELM_CACHE = mkdtempSync(join(tmpdir(), "syncward-helm-cache-"));
    const { ns, controller } = await chartController("shop", repo);
    try {
      const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
      assert.equal(outcome.phase, "Succeeded", outcome.message);
      const cm = (await cluster.client.get("v1", "ConfigMap", ns, "shop-cachelite")) as
        | (KubeObject & { data?: unknown })
        | undefined;
      assert.deepEqual(cm?.data, { size: "128mb" });
    } finally {
      await controller.stop();
      process.env = saved;
    }
  });
});

describe("a chart from a chart repository as the source", () => {
  const source = (url: string) => ({
    path: "env",
    chart: "cachelite",
    repoURL: url,
    targetRevision: "0.2.0",
    helm: { valueFiles: ["/env/cache.yaml"] },
  });

  it("deploys the fetched chart with this repository's value files; a value edit is a change", async () => {
    const repo = makeRepo({ "env/cache.yaml": "size: 1gb\n" });
    const saved = { ...process.env };
    process.env.SYNCWARD_HELM_REPOSITORIES = charts.url("open");
    process.env.SYNCWARD_HELM_CACHE = mkdtempSync(join(tmpdir(), "syncward-helm-cache-"));
    const { ns, controller } = await chartController("remote", repo, { source: source(charts.url("open")) });
    const size = async () =>
      (
        (await cluster.client.get("v1", "ConfigMap", ns, "remote-cachelite")) as KubeObject & {
          data?: { size?: string };
        }
      )?.data?.size;
    try {
      const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
      assert.equal(outcome.phase, "Succeeded", outcome.message);
      assert.equal(await size(), "1gb");
      assert.deepEqual((await controller.inspect()).rendered.chart, { name: "cachelite", version: "0.2.0" });
      repo.commit({ "env/cache.yaml": "size: 2gb\n" });
      assert.equal((await controller.sync({ trigger: "cli", actor: "alice" })).phase, "Succeeded");
      assert.equal(await size(), "2gb");
    } finally {
      await controller.stop();
      process.env = saved;
    }
  });

  it("refuses a chart repository the operator has not allowed, naming source.repoURL", async () => {
    const repo = makeRepo({ "env/cache.yaml": "size: 1gb\n" });
    const settings = envConfig("ns", { source: source(charts.url("open")) }).source;
    const error = await render(repo.dir, "env", {
      helmContext: {
        releaseName: "r",
        namespace: "ns",
        settings: settings.helm,
        remote: { chart: "cachelite", repoURL: charts.url("open"), version: "0.2.0" },
      },
      repositories: access([]),
    }).catch((e) => e);
    assert.ok(error instanceof SourceError);
    assert.match(
      error.message,
      new RegExp(`^source.repoURL: chart repository ${charts.url("open")} is not allowed`),
    );
  });
});

describe("kustomize helmCharts", () => {
  it("renders a chart vendored under charts/ offline, with the same helm", async () => {
    const rendered = await render(FIXTURES, "kustomize-helm", { repositories: access([]) });
    assert.equal(rendered.renderer, "kustomize");
    assert.deepEqual(
      rendered.objects.map((o) => [o.kind, o.metadata.name, (o as KubeObject & { data?: unknown }).data]),
      [["ConfigMap", "k-edge-cachelite", { size: "256mb" }]],
    );
  });

  it("pulls a chart that is not vendored from an allowed repository, leaving the repository as it was", async () => {
    const repo = makeRepo({
      "k/kustomization.yaml": `helmCharts:\n  - name: cachelite\n    version: 0.2.0\n    releaseName: pulled\n    repo: ${charts.url("open")}\n`,
    });
    const rendered = await render(repo.dir, "k", { repositories: access([charts.url("open")]) });
    assert.deepEqual(
      rendered.objects.map((o) => o.metadata.name),
      ["pulled-cachelite"],
    );
    assert.equal(
      repo.git("status", "--porcelain", "--ignored"),
      "",
      "nothing was written into the repository",
    );
  });

  it("refuses a chart that is not vendored from a repository not allowed, naming it", async () => {
    const repo = makeRepo({
      "k/kustomization.yaml": `helmCharts:\n  - name: cachelite\n    version: 0.2.0\n    repo: ${charts.url("open")}\n`,
    });
    const before = charts.requests.length;
    const error = await render(repo.dir, "k", { repositories: access([]) }).catch((e) => e);
    assert.ok(error instanceof SourceError);
    assert.match(
      error.message,
      new RegExp(
        `k/kustomization.yaml:2: helmCharts\\[0\\] 'cachelite': chart repository ${charts.url("open")} is not allowed`,
      ),
    );
    assert.equal(charts.requests.length, before);
  });
});
