// The top-lines scan the kustomize source uses to say which file and line an object came from:
// whenever it answers, it answers what the parser does (every fixture, the real manifests of
// test/fixtures/source/kubernetes-examples and the hostile ones included); whatever it cannot
// vouch for, it leaves to the parser.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type ManifestHead, manifestHeads } from "../../../src/source/manifest-heads.ts";
import { parseManifests } from "../../../src/source/parse-manifests.ts";

const ROOTS = [join(import.meta.dirname, "../../fixtures"), join(import.meta.dirname, "../../../examples")];

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ya?ml|json)$/i.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

function parsedHeads(text: string): ManifestHead[] {
  return parseManifests(text, "f.yaml").objects.map(({ object, line }) => ({
    apiVersion: object.apiVersion,
    kind: object.kind,
    ...(object.metadata.name === undefined ? {} : { name: object.metadata.name }),
    line,
  }));
}

describe("manifest heads", () => {
  // Invalid YAML is out of scope: kustomize refuses it before any object needs a line.
  it("agree with the parser on every valid fixture and example they read", () => {
    let read = 0;
    const files = ROOTS.flatMap(yamlFiles).filter(
      (f) => parseManifests(readFileSync(f, "utf8"), f).problems.length === 0,
    );
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const heads = manifestHeads(text);
      if (heads === undefined) continue;
      read++;
      assert.deepEqual(heads, parsedHeads(text), file);
    }
    assert.ok(files.length > 150 && read > files.length * 0.75, `read ${read} of ${files.length}`);
  });

  const read: Array<[string, string, ManifestHead[]]> = [
    [
      "comments, a separator and a second document",
      "# the web tier\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n---\n\napiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    name: not-this\n  name: web\n",
      [
        { apiVersion: "apps/v1", kind: "Deployment", name: "web", line: 2 },
        { apiVersion: "v1", kind: "Service", name: "web", line: 8 },
      ],
    ],
    [
      "quoted values, a comment after one, CRLF line ends",
      'apiVersion: "v1"\r\nkind: \'ConfigMap\' # settings\r\nmetadata:\r\n    name: "app-settings"\r\n',
      [{ apiVersion: "v1", kind: "ConfigMap", name: "app-settings", line: 1 }],
    ],
    [
      "a block scalar whose text looks like keys",
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  script: |\n    kind: Secret\n    metadata:\n      name: other\n",
      [{ apiVersion: "v1", kind: "ConfigMap", name: "c", line: 1 }],
    ],
    [
      "a server-named hook",
      "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\n",
      [{ apiVersion: "batch/v1", kind: "Job", line: 1 }],
    ],
    ["only comments", "# nothing here\n---\n# nor here\n", []],
  ];
  for (const [name, text, heads] of read)
    it(`reads ${name}, as the parser does`, () => {
      assert.deepEqual(manifestHeads(text), heads);
      assert.deepEqual(parsedHeads(text), heads);
    });

  const left: Array<[string, string]> = [
    ["JSON", '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}'],
    ["flow-style metadata", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"],
    [
      "a List",
      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n",
    ],
    ["an alias for the name", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: *n\n"],
    ["a tagged kind", "apiVersion: v1\nkind: !!str ConfigMap\nmetadata:\n  name: c\n"],
    [
      "a second kind (the last wins)",
      "apiVersion: v1\nkind: Secret\nkind: ConfigMap\nmetadata:\n  name: c\n",
    ],
    [
      "a quoted value running over lines",
      'apiVersion: v1\nkind: ConfigMap\nnote: "a\nkind: Secret"\nmetadata:\n  name: c\n',
    ],
    ["a directive", "%YAML 1.2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"],
    ["a document end marker", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n...\n"],
    ["a tab-indented line", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: c\n"],
    ["a quoted key", 'apiVersion: v1\n"kind": ConfigMap\nmetadata:\n  name: c\n'],
    ["a complex key", "? kind\n: ConfigMap\n"],
    ["a name written as a block scalar", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: |\n    c\n"],
    ["a byte-order mark", "\uFEFFapiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"],
  ];
  for (const [name, text] of left)
    it(`leaves ${name} to the parser`, () => assert.equal(manifestHeads(text), undefined));
});
