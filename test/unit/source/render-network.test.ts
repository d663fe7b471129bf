// A render reaches no network: every field kustomize reads a path or URL from, with an
// http://127.0.0.1:PORT/ URL and a git URL, is refused before kustomize runs, and kustomize run
// past the pre-check still cannot reach a listener on loopback.
import assert from "node:assert/strict";
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SourceError } from "../../../src/source/errors.ts";
import { render } from "../../../src/source/render.ts";
import { namespaceFlags } from "../../../src/source/render-sandbox.ts";
import { run } from "../../../src/source/run.ts";
import { cleanup, FIXTURES, tempDir, writeTree } from "./helpers.ts";

const CORPUS = join(FIXTURES, "evil", "network");

/** A TCP listener on loopback that counts every connection (HTTP, git, anything). */
async function listener(): Promise<{ server: Server; port: number; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { server, port: address.port, connections: () => count };
}

/** The corpus with PORT replaced by the listener's port. */
function corpusTree(port: number): string {
  const tree = tempDir("syncward-evil-network-");
  cpSync(CORPUS, tree, { recursive: true });
  const fill = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) fill(path);
      else writeFileSync(path, readFileSync(path, "utf8").replaceAll("PORT", String(port)));
    }
  };
  fill(tree);
  return tree;
}

async function problemsOf(tree: string, path: string): Promise<string[]> {
  try {
    await render(tree, path);
  } catch (err) {
    assert.ok(err instanceof SourceError, String(err));
    return err.message.split("\n");
  }
  assert.fail(`${path} rendered`);
}

// field in the message, per corpus case (the file is always <case>/kustomization.yaml)
const CASES: Record<string, string[]> = {
  resources: ["resources", "resources"],
  bases: ["bases", "bases"],
  components: ["components", "components"],
  crds: ["crds", "crds"],
  configurations: ["configurations", "configurations"],
  generators: ["generators", "generators"],
  transformers: ["transformers", "transformers"],
  validators: ["validators", "validators"],
  patches: ["patches[0].path", "patches[1].path"],
  "patches-strategic-merge": ["patchesStrategicMerge[0]", "patchesStrategicMerge[1]"],
  "patches-json6902": ["patchesJson6902[0].path", "patchesJson6902[1].path"],
  replacements: ["replacements[0].path", "replacements[1].path"],
  openapi: ["openapi.path"],
  "openapi-git": ["openapi.path"],
  "configmap-files": ["configMapGenerator[0].files", "configMapGenerator[0].files"],
  "configmap-envs": ["configMapGenerator[0].envs", "configMapGenerator[0].envs"],
  "configmap-env": ["configMapGenerator[0].env", "configMapGenerator[1].env"],
  "secret-files": ["secretGenerator[0].files", "secretGenerator[0].files"],
  "secret-envs": ["secretGenerator[0].envs", "secretGenerator[0].envs"],
  "secret-env": ["secretGenerator[0].env", "secretGenerator[1].env"],
  "helm-values": ["helmCharts[0].valuesFile", "helmCharts[0].additionalValuesFiles"],
  "helm-chart-home": ["helmGlobals.chartHome", "helmGlobals.configHome"],
  "inline-transformer": ["path"],
};

describe("a render reaches no network", () => {
  let loop: Awaited<ReturnType<typeof listener>>;
  let tree: string;
  before(async () => {
    loop = await listener();
    tree = corpusTree(loop.port);
  });
  after(() => {
    loop.server.close();
    cleanup(tree);
  });

  for (const [name, fields] of Object.entries(CASES)) {
    it(`refuses a URL and a git URL in ${name}, naming the file, the field and the value`, async () => {
      const problems = await problemsOf(tree, name);
      const file = `${name}/kustomization.yaml`;
      for (const field of fields)
        assert.ok(
          problems.some(
            (p) =>
              p.startsWith(`${file}:`) && p.includes(`${field}: '`) && p.includes(`127.0.0.1:${loop.port}`),
          ),
          `${field} in ${JSON.stringify(problems)}`,
        );
      assert.ok(
        problems.every((p) => /refused/.test(p)),
        JSON.stringify(problems),
      );
    });
  }

  it("follows plugin config files, components and nested bases", async () => {
    assert.deepEqual(await problemsOf(tree, "transformer-file"), [
      `transformer-file/patch.yaml:5: path: 'http://127.0.0.1:${loop.port}/meta' is a URL or remote address; refused: render only what the repository holds at this revision (vendor it into the repository)`,
    ]);
    assert.deepEqual(await problemsOf(tree, "nested/overlay"), [
      `nested/component/kustomization.yaml:6: configMapGenerator[0].files: 'http://127.0.0.1:${loop.port}/meta' is a URL or remote address; refused: render only what the repository holds at this revision (vendor it into the repository)`,
    ]);
  });

  it("refuses absolute paths and paths that climb out in a file field", async () => {
    const t = tempDir();
    writeTree(t, {
      "app/kustomization.yaml":
        "configMapGenerator:\n- name: x\n  files: [/etc/passwd, pw=../../../etc/shadow]\n",
    });
    try {
      assert.deepEqual(await problemsOf(t, "app"), [
        "app/kustomization.yaml:3: configMapGenerator[0].files: '/etc/passwd' is an absolute path; refused: paths are relative to the kustomization (vendor it into the repository)",
        "app/kustomization.yaml:3: configMapGenerator[0].files: '../../../etc/shadow' points outside the repository; refused",
      ]);
    } finally {
      cleanup(t);
    }
  });

  it("an honest repository renders meanwhile, and the listener saw nothing", async () => {
    const honest = tempDir();
    writeTree(honest, {
      "app/kustomization.yaml":
        "resources: [cm.yaml]\nconfigMapGenerator:\n- name: conf\n  literals: [a=b]\n",
      "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
    });
    try {
      const [rendered] = await Promise.all([
        render(honest, "app"),
        ...Object.keys(CASES).map((c) => render(tree, c).catch(() => undefined)),
      ]);
      assert.equal(rendered.objects.length, 2);
    } finally {
      cleanup(honest);
    }
    assert.equal(loop.connections(), 0);
  });
});

describe("kustomize past the pre-check", () => {
  it("cannot reach loopback inside the render sandbox (and does without it)", async (t) => {
    if (!(await namespaceFlags())) {
      t.diagnostic(
        "no network namespaces on this machine: the sandbox falls back (docs/operating/installation.md, Settings)",
      );
    }
    const loop = await listener();
    const dir = tempDir();
    writeTree(dir, {
      "kustomization.yaml": `configMapGenerator:\n- name: leak\n  files: [meta=http://127.0.0.1:${loop.port}/meta]\n`,
    });
    try {
      const isolated = await run({
        file: "kubectl",
        args: ["kustomize", dir],
        isolate: true,
        timeoutMs: 30_000,
      });
      assert.equal(isolated.ok, false, isolated.stdout);
      assert.equal(loop.connections(), 0);
      if (await namespaceFlags()) {
        // The same build outside the sandbox does reach the listener: the assertion above can fail.
        await run({ file: "kubectl", args: ["kustomize", dir], timeoutMs: 30_000 });
        assert.ok(loop.connections() > 0);
      }
    } finally {
      loop.server.close();
      cleanup(dir);
    }
  });

  it("runs with none of syncward's secrets in its environment", async () => {
    const saved = { PRIVATE_KEY: process.env.PRIVATE_KEY, WEBHOOK_SECRET: process.env.WEBHOOK_SECRET };
    process.env.PRIVATE_KEY = "sw-private-key-in-env";
    process.env.WEBHOOK_SECRET = "sw-webhook-secret-in-env";
    try {
      const result = await run({ file: "env", args: [], isolate: true });
      assert.ok(result.ok, result.stderr);
      assert.doesNotMatch(
        result.stdout,
        /sw-private-key-in-env|sw-webhook-secret-in-env|PRIVATE_KEY|WEBHOOK_SECRET/,
      );
      assert.match(result.stdout, /GIT_ALLOW_PROTOCOL=syncward-none/);
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
});
