// A chart dependency from an OCI registry, through helm's own client: the CNCF distribution registry
// (built from Go modules by tools/cluster/build.sh registry) on 127.0.0.1 with htpasswd auth; the
// chart is pushed with `helm push`, fetched once at render time with the operator's credentials,
// then rendered from the cache even with the registry gone.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { KubeObject } from "../../src/kube/object.ts";
import { ChartFetchError, type HelmRepositoryAccess } from "../../src/source/helm-repositories.ts";
import { render } from "../../src/source/render.ts";
import { makeRepo } from "../support/git-repo.ts";
import { ensureHelm, ensureRegistry, fixtureFiles } from "../support/helm.ts";

const FIXTURES = "test/fixtures/helm";
const USER = "deployer";
const PASSWORD = "s3cret-chart-pass"; // test/fixtures/helm/registry.htpasswd holds its bcrypt hash
const helm = ensureHelm();
const registryBin = ensureRegistry();

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

let registry: ChildProcess | undefined;
let port = 0;
const work = mkdtempSync(join(tmpdir(), "syncward-oci-"));

before(async () => {
  port = await freePort();
  const config = join(work, "config.yml");
  writeFileSync(
    config,
    `version: 0.1\nlog: {level: error}\nstorage: {inmemory: {}}\nhttp: {addr: "127.0.0.1:${port}"}\nauth:\n  htpasswd: {realm: charts, path: ${resolve(FIXTURES, "registry.htpasswd")}}\n`,
  );
  registry = spawn(registryBin, ["serve", config], { stdio: "ignore" });
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/v2/`).then(
      (r) => r.status === 401,
      () => false,
    );
    if (up) break;
    await sleep(100);
  }
  // helm push, as a chart's publisher would; its login is a registry config of its own.
  const env = { ...process.env, HELM_REGISTRY_CONFIG: join(work, "push-registry.json") };
  writeFileSync(
    env.HELM_REGISTRY_CONFIG,
    JSON.stringify({
      auths: { [`127.0.0.1:${port}`]: { auth: Buffer.from(`${USER}:${PASSWORD}`).toString("base64") } },
    }),
  );
  execFileSync(helm, ["package", `${FIXTURES}/cachelite`, "--destination", work], { stdio: "ignore", env });
  execFileSync(
    helm,
    ["push", join(work, "cachelite-0.2.0.tgz"), `oci://127.0.0.1:${port}/charts`, "--plain-http"],
    {
      stdio: "ignore",
      env,
    },
  );
});

after(() => {
  registry?.kill("SIGKILL");
});

const url = () => `oci://127.0.0.1:${port}/charts`;

function chartRepo() {
  const files = fixtureFiles(`${FIXTURES}/with-dependency`, "storefront");
  files["storefront/Chart.yaml"] = (files["storefront/Chart.yaml"] ?? "").replace(
    "repository: REPOSITORY_URL",
    `repository: ${url()}`,
  );
  return makeRepo(files);
}

const renderWith = (dir: string, repositories: HelmRepositoryAccess) =>
  render(dir, "storefront", { helmContext: { releaseName: "shop", namespace: "shop" }, repositories });

describe("chart dependencies from an OCI registry", () => {
  it("pulls with the operator's credentials once, then renders from the cache with the registry gone", async () => {
    const repo = chartRepo();
    const cacheDir = mkdtempSync(join(tmpdir(), "syncward-helm-cache-"));
    const access = (credentials: HelmRepositoryAccess["credentials"]): HelmRepositoryAccess => ({
      allowed: [url()],
      plainHttp: [url()],
      credentials,
      cacheDir,
    });

    const anonymous = await renderWith(repo.dir, access([])).catch((e) => e);
    assert.ok(anonymous instanceof ChartFetchError, String(anonymous));
    assert.match(
      anonymous.message,
      /dependency 'cachelite' 0\.2\.0 from oci:\/\/127\.0\.0\.1:\d+\/charts could not be fetched: .*(401|unauthorized|credential)/is,
    );

    const rendered = await renderWith(
      repo.dir,
      access([{ url: `oci://127.0.0.1:${port}`, username: USER, password: PASSWORD }]),
    );
    const cm = rendered.objects.find((o) => o.metadata.name === "shop-cachelite") as
      | (KubeObject & { data?: unknown })
      | undefined;
    assert.deepEqual(cm?.data, { size: "128mb" });

    registry?.kill("SIGKILL");
    await sleep(200);
    const again = await renderWith(repo.dir, access([]));
    assert.equal(again.objects.length, 2, "rendered from the cache: no registry, no credentials");
  });
});
