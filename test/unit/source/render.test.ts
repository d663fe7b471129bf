import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type KubeObject, keyOf, keyString } from "../../../src/kube/object.ts";
import { SourceError, type SourceProblem } from "../../../src/source/errors.ts";
import { checkoutTree } from "../../../src/source/git.ts";
import { type RenderedSource, render } from "../../../src/source/render.ts";
import { cleanup, FIXTURES, TestRepo, tempDir, writeTree } from "./helpers.ts";

const summary = (o: KubeObject) => `${keyString(keyOf(o))}`;

/** The problems a render fails with, as `file:line: message` lines. */
async function problemsOf(treeDir: string, path: string): Promise<string[]> {
  try {
    await render(treeDir, path);
  } catch (err) {
    assert.ok(err instanceof SourceError, `expected a SourceError, got ${String(err)}`);
    assert.equal(err.message, err.problems.map(format).join("\n"));
    return err.message.split("\n");
  }
  assert.fail(`render of ${path} should have failed`);
}

function format(p: SourceProblem): string {
  if (p.file === undefined) return p.message;
  return `${p.file}${p.line === undefined ? "" : `:${p.line}`}: ${p.message}`;
}

function where(result: RenderedSource): string[] {
  return result.objects.map((o) => {
    const key = keyString(keyOf(o));
    return `${key} ${result.files.get(key)}:${result.lines.get(key)}`;
  });
}

describe("render: plain directories", () => {
  it("reads .yaml, .yml and .json files recursively in path order, with multi-doc and List", async () => {
    const result = await render(FIXTURES, "plain");
    assert.equal(result.renderer, "directory");
    assert.deepEqual(where(result), [
      "/ConfigMap:/web-config plain/app/config.json:1",
      "apps/Deployment:/web plain/app/deploy.yaml:1",
      "/Service:/web plain/app/nested/multi.yaml:2",
      "/ServiceAccount:shop/web plain/app/nested/multi.yaml:13",
      "rbac.authorization.k8s.io/ClusterRole:/reader plain/lists/list.json:5",
      "/ConfigMap:/from-list-a plain/lists/list.yaml:4",
      "/ConfigMap:/from-list-b plain/lists/list.yaml:8",
    ]);
    const deploy = result.objects[1]!;
    assert.deepEqual((deploy.spec as { replicas: number }).replicas, 2);
    assert.equal(
      result.objects[0]?.data && (result.objects[0].data as Record<string, string>).enabled,
      "true",
    );
  });

  it("renders a sub-directory, and a comments-only file to nothing", async () => {
    assert.deepEqual((await render(FIXTURES, "plain/app/nested")).objects.map(summary), [
      "/Service:/web",
      "/ServiceAccount:shop/web",
    ]);
    const lists = await render(join(FIXTURES, "plain"), "lists/");
    assert.equal(lists.files.get("/ConfigMap:/from-list-a"), "lists/list.yaml");
    const empty = await render(FIXTURES, "plain/lists/empty.yaml");
    assert.deepEqual(empty.objects, []);
  });

  it("treats the tree root as '', '.' or './'", async () => {
    const tree = join(FIXTURES, "plain", "app", "nested");
    for (const path of ["", ".", "./"]) {
      assert.equal((await render(tree, path)).objects.length, 2, `path '${path}'`);
    }
  });

  describe("YAML features", () => {
    let tree: string;
    before(() => {
      tree = tempDir();
      writeTree(tree, {
        "bom.yaml": "\uFEFFapiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bom\n",
        "merge.yaml": [
          "apiVersion: v1",
          "kind: ConfigMap",
          "metadata:",
          "  name: merged",
          "  labels: &labels {app: web}",
          "  annotations:",
          "    <<: *labels",
          "    extra: x",
          "data:",
          "  switch: on", // YAML 1.2 core schema: the string "on", not true
          "  port: '8080'",
          "",
        ].join("\n"),
        "tabs.json": '{\n\t"apiVersion": "v1",\n\t"kind": "Secret",\n\t"metadata": {"name": "s"}\n}\n',
        "z-empty-list.yaml": "apiVersion: v1\nkind: List\nitems: []\n",
      });
    });
    after(() => cleanup(tree));

    it("strips a BOM, applies merge keys, keeps YAML 1.2 scalars, reads tab-indented JSON", async () => {
      const result = await render(tree, ".");
      assert.deepEqual(result.objects.map(summary), ["/ConfigMap:/bom", "/ConfigMap:/merged", "/Secret:/s"]);
      const merged = result.objects[1]!;
      assert.deepEqual(merged.metadata.annotations, { app: "web", extra: "x" });
      assert.deepEqual(merged.data, { switch: "on", port: "8080" });
    });
  });
});

describe("render: validation names file and line, and collects every problem", () => {
  const cases: Array<{ name: string; tree: string; path: string; problems: string[] }> = [
    {
      name: "unparsable YAML",
      tree: "invalid/unparsable",
      path: "overlays/dev",
      problems: [
        "overlays/dev/deploy.yaml:7: invalid YAML: Nested mappings are not allowed in compact mappings (column 13)",
      ],
    },
    {
      name: "missing apiVersion, kind, metadata.name",
      tree: "invalid",
      path: "missing",
      problems: [
        "missing/objects.yaml:7: document is missing kind",
        "missing/objects.yaml:11: document is missing apiVersion",
        "missing/objects.yaml:15: document is missing metadata.name",
      ],
    },
    {
      name: "duplicate objects across files",
      tree: "invalid/duplicate",
      path: ".",
      problems: ["b.yaml:6: duplicate object apps/Deployment:shop/web: also defined at a.yaml:1"],
    },
    {
      name: "several problems in several files",
      tree: "invalid/all",
      path: "",
      problems: [
        "1-broken.yaml:5: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] (column 26)",
        "2-nameless.yaml:1: document is missing metadata.name",
        "3-scalar.yaml:1: document is not a Kubernetes object: expected a mapping, found a string",
        "4-twice.json:3: duplicate object /ConfigMap:/twice: also defined at 4-twice.json:2",
        "4-twice.json:4: List item 3 is not a Kubernetes object: expected a mapping, found a string",
      ],
    },
    {
      name: "evil YAML: alias bomb and unknown tags",
      tree: "evil",
      path: "plain",
      problems: [
        'plain/alias-bomb.yaml:2: refused: the document expands too many YAML aliases (more than 100), as in a "billion laughs" attack',
        "plain/unknown-tags.yaml:6: refused YAML tag !vault: only plain YAML is accepted (no custom or language-specific tags)",
        "plain/unknown-tags.yaml:7: refused YAML tag !!python/object/apply:os.system: only plain YAML is accepted (no custom or language-specific tags)",
        "plain/unknown-tags.yaml:8: refused YAML tag !!js/function: only plain YAML is accepted (no custom or language-specific tags)",
        "plain/unknown-tags.yaml:9: refused YAML tag !!binary: only plain YAML is accepted (no custom or language-specific tags)",
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      assert.deepEqual(await problemsOf(join(FIXTURES, c.tree), c.path), c.problems);
    });
  }

  it("puts the first problem's file and line on the error", async () => {
    await assert.rejects(render(join(FIXTURES, "invalid/unparsable"), "overlays/dev"), (err: unknown) => {
      assert.ok(err instanceof SourceError);
      assert.equal(err.file, "overlays/dev/deploy.yaml");
      assert.equal(err.line, 7);
      assert.equal(err.problems.length, 1);
      return true;
    });
  });

  it("refuses a kustomization met inside a plain directory", async () => {
    assert.deepEqual(await problemsOf(FIXTURES, "kustomize/overlays"), [
      "kustomize/overlays/broken/kustomization.yaml: a kustomization inside a plain directory is not applied as a manifest; point the environment's path at its directory to render it with kustomize",
      "kustomize/overlays/dev/kustomization.yaml: a kustomization inside a plain directory is not applied as a manifest; point the environment's path at its directory to render it with kustomize",
    ]);
  });
});

describe("render: paths and symlinks stay inside the repository", () => {
  let root: string;
  let tree: string;
  let outside: string;

  before(() => {
    root = tempDir();
    tree = join(root, "repo");
    outside = join(root, "outside");
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
    writeTree(root, {
      "outside/secret.yaml": cm("stolen"),
      "repo/shared/cm.yaml": cm("shared"),
      "repo/more/extra.yaml": cm("extra"),
      "repo/good/own.yaml": cm("own"),
      "repo/good/linked.yaml": { symlink: "../shared/cm.yaml" },
      "repo/good/more": { symlink: "../more" },
      "repo/good/loop": { symlink: "." },
      "repo/bad/own.yaml": cm("own"),
      "repo/bad/leak.yaml": { symlink: "../../outside/secret.yaml" },
      "repo/bad/ext": { symlink: join(root, "outside") },
      "repo/bad/broken.yaml": { symlink: "nowhere.yaml" },
      "repo/escape": { symlink: "../outside" },
    });
  });
  after(() => cleanup(root));

  it("follows symlinks inside the tree, once per directory, naming the files they lead to", async () => {
    const result = await render(tree, "good");
    assert.deepEqual(where(result), [
      "/ConfigMap:/shared shared/cm.yaml:1",
      "/ConfigMap:/extra more/extra.yaml:1",
      "/ConfigMap:/own good/own.yaml:1",
    ]);
  });

  it("refuses symlinks (files and directories) that point outside, and names broken ones", async () => {
    assert.deepEqual(await problemsOf(tree, "bad"), [
      "bad/broken.yaml: broken symlink (-> nowhere.yaml)",
      `bad/ext: symlink points outside the repository (-> ${outside}); refused`,
      "bad/leak.yaml: symlink points outside the repository (-> ../../outside/secret.yaml); refused",
    ]);
  });

  const paths: Array<{ path: string; message: string }> = [
    { path: "../outside", message: "path '../outside' points outside the repository; refused" },
    {
      path: "good/../../outside",
      message: "path 'good/../../outside' points outside the repository; refused",
    },
    { path: "..", message: "path '..' points outside the repository; refused" },
    { path: "/etc", message: "path '/etc' is absolute: paths are relative to the repository root; refused" },
    { path: "escape", message: "path 'escape' leads outside the repository through a symlink; refused" },
    { path: "nope/dev", message: "path 'nope/dev' does not exist in the repository" },
    { path: "good/../nope", message: "path 'nope' does not exist in the repository" },
  ];
  for (const { path, message } of paths) {
    it(`refuses path '${path}'`, async () => {
      await assert.rejects(render(tree, path), { name: "SourceError", message });
    });
  }

  it("names a tree directory that does not exist", async () => {
    await assert.rejects(render(join(root, "gone"), "."), /the source tree .*gone does not exist/);
  });
});

describe("render: real-world manifests (kubernetes/examples)", () => {
  const examples = join(FIXTURES, "kubernetes-examples");

  it("renders the Cassandra service, stateful set and its storage class", async () => {
    const result = await render(examples, "databases/cassandra");
    assert.deepEqual(where(result), [
      "/Service:/cassandra databases/cassandra/cassandra-service.yaml:1",
      "apps/StatefulSet:/cassandra databases/cassandra/cassandra-statefulset.yaml:1",
      "storage.k8s.io/StorageClass:/fast databases/cassandra/cassandra-statefulset.yaml:109",
    ]);
    const sts = result.objects[1]!;
    assert.equal(sts.apiVersion, "apps/v1");
    const spec = sts.spec as {
      replicas: number;
      template: { spec: { containers: Array<{ image: string }> } };
    };
    assert.equal(spec.replicas, 3);
    assert.equal(spec.template.spec.containers[0]?.image, "gcr.io/google-samples/cassandra:v14");
  });

  it("renders the guestbook all-in-one file: three services and three deployments", async () => {
    const result = await render(examples, "web/guestbook/all-in-one/guestbook-all-in-one.yaml");
    const file = "web/guestbook/all-in-one/guestbook-all-in-one.yaml";
    assert.deepEqual(where(result), [
      `/Service:/redis-master ${file}:1`,
      `apps/Deployment:/redis-master ${file}:18`,
      `/Service:/redis-replica ${file}:46`,
      `apps/Deployment:/redis-replica ${file}:62`,
      `/Service:/frontend ${file}:98`,
      `apps/Deployment:/frontend ${file}:117`,
    ]);
  });

  it("refuses the whole guestbook directory: the all-in-one copies duplicate the single files", async () => {
    const problems = await problemsOf(examples, "web/guestbook");
    assert.equal(problems.length, 10);
    assert.ok(
      problems.includes(
        "web/guestbook/frontend-deployment.yaml:1: duplicate object apps/Deployment:/frontend: also defined at web/guestbook/all-in-one/frontend.yaml:20",
      ),
      problems.join("\n"),
    );
    assert.ok(
      problems.includes(
        "web/guestbook/all-in-one/guestbook-all-in-one.yaml:98: duplicate object /Service:/frontend: also defined at web/guestbook/all-in-one/frontend.yaml:1",
      ),
    );
  });
});

describe("render: a tree checked out from git", () => {
  let repo: TestRepo;
  let cache: string;
  before(() => {
    repo = new TestRepo();
    cache = tempDir("syncward-cache-");
  });
  after(() => cleanup(repo.dir, cache));

  it("renders the tree at each SHA, and refuses a committed symlink that points outside", async () => {
    const good = repo.commitFixture("examples", "kubernetes-examples/databases", "databases");
    const bad = repo.commit("symlink out", { "databases/cassandra/passwd.yaml": { symlink: "/etc/passwd" } });
    const goodTree = await checkoutTree(repo.dir, good, cache);
    assert.deepEqual((await render(goodTree, "databases/cassandra")).objects.map(summary), [
      "/Service:/cassandra",
      "apps/StatefulSet:/cassandra",
      "storage.k8s.io/StorageClass:/fast",
    ]);
    const badTree = await checkoutTree(repo.dir, bad, cache);
    assert.deepEqual(await problemsOf(badTree, "databases"), [
      "databases/cassandra/passwd.yaml: symlink points outside the repository (-> /etc/passwd); refused",
    ]);
  });
});
