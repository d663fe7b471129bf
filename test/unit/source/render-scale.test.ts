import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { render } from "../../../src/source/render.ts";
import { cleanup, tempDir, writeTree } from "./helpers.ts";

const FILES = 100;
const PER_FILE = 10;

function deployment(file: number, doc: number): string {
  const name = `app-${file}-${doc}`;
  return [
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata:",
    `  name: ${name}`,
    "  labels:",
    `    app: ${name}`,
    "spec:",
    "  replicas: 2",
    "  selector:",
    "    matchLabels:",
    `      app: ${name}`,
    "  template:",
    "    metadata:",
    "      labels:",
    `        app: ${name}`,
    "    spec:",
    "      containers:",
    "        - name: app",
    "          image: registry.example.com/app:1.0.0",
    "          ports:",
    "            - containerPort: 8080",
    "          env:",
    "            - name: MODE",
    '              value: "production"',
  ].join("\n");
}

describe("render: 1,000 objects", () => {
  let tree: string;
  before(() => {
    tree = tempDir();
    const files: Record<string, string> = {};
    const names: string[] = [];
    for (let f = 0; f < FILES; f++) {
      const name = `f${String(f).padStart(3, "0")}.yaml`;
      names.push(name);
      const docs = Array.from({ length: PER_FILE }, (_, d) => deployment(f, d)).join("\n---\n");
      files[`plain/${name}`] = `${docs}\n`;
      files[`kustomized/${name}`] = `${docs}\n`;
    }
    files["kustomized/kustomization.yaml"] = `resources:\n${names.map((n) => `  - ${n}`).join("\n")}\n`;
    writeTree(tree, files);
  });
  after(() => cleanup(tree));

  for (const [path, renderer] of [
    ["plain", "directory"],
    ["kustomized", "kustomize"],
  ] as const) {
    it(`renders a ${renderer} source of ${FILES * PER_FILE} objects`, async () => {
      // Time is measured by `npm run bench`, not asserted here: this checks that nothing is lost.
      const result = await render(tree, path);
      assert.equal(result.renderer, renderer);
      assert.equal(result.objects.length, FILES * PER_FILE);
      assert.equal(result.files.get("apps/Deployment:/app-42-7"), `${path}/f042.yaml`);
      assert.equal(result.lines.get("apps/Deployment:/app-42-7"), 7 * 25 + 1);
    });
  }
});
