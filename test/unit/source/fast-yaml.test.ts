import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { writeManifests } from "../../../bench/manifests.ts";
import { aliasCount, fastParseDocuments, hasEmptyKey } from "../../../src/source/fast-yaml.ts";
import { parseManifests, parseManifestsPrecisely } from "../../../src/source/parse-manifests.ts";
import { cleanup } from "./helpers.ts";

const FIXTURES = join(import.meta.dirname, "../../fixtures");

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ya?ml|json)$/i.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

const configMap = (data: string) =>
  ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: c}", "data:", data].join("\n");

describe("the fast YAML path", () => {
  // What a plain scalar means must not depend on which parser read it: YAML 1.2's core schema,
  // as the precise parser has always read manifests (YAML 1.1's `on`, `yes`, `0755` octal and
  // sexagesimal numbers are not what Kubernetes' own parser makes of them either).
  const scalars: Array<{ yaml: string; value: unknown; fast: boolean }> = [
    { yaml: "on", value: "on", fast: true },
    { yaml: "off", value: "off", fast: true },
    { yaml: "yes", value: "yes", fast: true },
    { yaml: "no", value: "no", fast: true },
    { yaml: "y", value: "y", fast: true },
    { yaml: "True", value: true, fast: true },
    { yaml: "FALSE", value: false, fast: true },
    { yaml: "tRue", value: "tRue", fast: true },
    { yaml: "0755", value: 755, fast: true },
    { yaml: "0o755", value: 0o755, fast: true },
    { yaml: "0x1F", value: 31, fast: true },
    { yaml: "+12", value: 12, fast: true },
    { yaml: "1_000", value: "1_000", fast: true },
    { yaml: "1:20", value: "1:20", fast: true },
    { yaml: "1e3", value: 1000, fast: true },
    { yaml: ".5", value: 0.5, fast: true },
    { yaml: "1.50", value: 1.5, fast: true },
    { yaml: "-.inf", value: Number.NEGATIVE_INFINITY, fast: true },
    { yaml: ".NaN", value: Number.NaN, fast: true },
    { yaml: "~", value: null, fast: true },
    { yaml: "Null", value: null, fast: true },
    { yaml: "", value: null, fast: true },
    { yaml: "2024-01-31", value: "2024-01-31", fast: true },
    { yaml: "'0755'", value: "0755", fast: true },
    { yaml: '"on"', value: "on", fast: true },
    { yaml: "!!str 0755", value: "0755", fast: false },
    { yaml: '"*/5 * * * *"', value: "*/5 * * * *", fast: true },
  ];
  for (const c of scalars) {
    it(`reads \`v: ${c.yaml}\` as ${JSON.stringify(c.value) ?? String(c.value)} (${c.fast ? "fast" : "precise"} path)`, () => {
      const text = ["apiVersion: v1", "kind: X", "metadata: {name: x}", `v: ${c.yaml}`].join("\n");
      assert.equal(fastParseDocuments(text) !== undefined, c.fast);
      const got = parseManifests(text, "x.yaml");
      assert.deepEqual(got, parseManifestsPrecisely(text, "x.yaml"));
      assert.deepEqual(got.objects[0]?.object.v, c.value);
    });
  }

  const documents: Array<{ name: string; yaml: string; data: unknown; fast: boolean }> = [
    {
      name: "merge keys, as kubectl merges them",
      yaml: "  x: &base {a: '1', b: '2'}\n  y:\n    <<: *base\n    b: '3'",
      data: { x: { a: "1", b: "2" }, y: { a: "1", b: "3" } },
      fast: false,
    },
    {
      name: "a merge of an inline mapping",
      yaml: "  <<: {a: '1'}\n  b: '2'",
      data: { a: "1", b: "2" },
      fast: false,
    },
    {
      name: "a few aliases of one anchor",
      yaml: "  a: &v hello\n  b: *v\n  c: *v",
      data: { a: "hello", b: "hello", c: "hello" },
      fast: true,
    },
    {
      name: 'a null key (the key "", as before)',
      yaml: "  ~: a",
      data: { "": "a" },
      fast: false,
    },
    {
      name: "a CRD's quantity pattern, whose `]*` are no aliases, repeated past the alias bound",
      yaml: `  patterns: |\n${"    ^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))$\n".repeat(13)}`.trimEnd(),
      data: { patterns: "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))$\n".repeat(13) },
      fast: true,
    },
    {
      name: "more aliases in flow sequences than the fast path's bound",
      yaml: `  a: &v x\n  b: [${Array(13).fill("*v").join(",")}]`,
      data: { a: "x", b: Array(13).fill("x") },
      fast: false,
    },
    {
      name: "an empty key below deep indentation",
      yaml: `  deep:\n${"  ".repeat(20)}: v`,
      data: { deep: { "": "v" } },
      fast: false,
    },
    {
      name: "a null-like key spelled NULL",
      yaml: "  NULL: a",
      data: { "": "a" },
      fast: false,
    },
    {
      name: "a shell script with a here-document and a tag-like `!`",
      yaml: "  run.sh: |\n    cat <<EOF\n    [ ! -f x ] && echo hi\n    EOF",
      data: { "run.sh": "cat <<EOF\n[ ! -f x ] && echo hi\nEOF\n" },
      fast: false,
    },
  ];
  for (const c of documents) {
    it(`reads ${c.name} as before (${c.fast ? "fast" : "precise"} path)`, () => {
      const text = configMap(c.yaml);
      assert.equal(fastParseDocuments(text) !== undefined, c.fast);
      const got = parseManifests(text, "c.yaml");
      assert.deepEqual(got, parseManifestsPrecisely(text, "c.yaml"));
      assert.deepEqual(got.problems, []);
      assert.deepEqual(got.objects[0]?.object.data, c.data);
    });
  }

  it("refuses an alias bomb through the precise parser, naming the file and line", () => {
    const lines = [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata: {name: bomb}",
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
    ];
    for (let i = 0; i < 4; i++)
      lines.push(`${"bcde"[i]}: &${"bcde"[i]} [${Array(10).fill(`*${"abcd"[i]}`).join(", ")}]`);
    const got = parseManifests(lines.join("\n"), "bomb.yaml");
    assert.deepEqual(got.objects, []);
    assert.equal(got.problems.length, 1);
    assert.equal(got.problems[0]?.file, "bomb.yaml");
    assert.equal(got.problems[0]?.line, 1);
    assert.match(got.problems[0]?.message ?? "", /too many YAML aliases/);
  });

  it("leaves invalid YAML to the precise parser, whose problem names the file, line and column", () => {
    const text = [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: a",
      "---",
      "kind: [unclosed",
    ].join("\n");
    assert.equal(fastParseDocuments(text), undefined);
    const got = parseManifests(text, "team/app.yaml");
    assert.deepEqual(
      got.objects.map((o) => o.object.metadata.name),
      ["a"],
    );
    assert.deepEqual(
      got.problems.map((p) => `${p.file}:${p.line}: ${p.message}`),
      [
        "team/app.yaml:6: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] (column 16)",
      ],
    );
  });

  it("a key repeated in a mapping takes its last value, as in Argo CD (gitops-engine's StatefulSet case)", () => {
    const text = [
      "apiVersion: apps/v1",
      "kind: StatefulSet",
      "metadata:",
      "  name: db",
      "spec:",
      "  replicas: 1",
      "  serviceName: db",
      "  replicas: 3",
      "  template:",
      "    spec:",
      "      containers:",
      "      - name: db",
      "        image: postgres:15",
      "        image: postgres:16",
    ].join("\n");
    const got = parseManifests(text, "db.yaml");
    assert.deepEqual(got.problems, []);
    const spec = got.objects[0]?.object.spec as {
      replicas: number;
      template: { spec: { containers: Array<{ image: string }> } };
    };
    assert.equal(spec.replicas, 3);
    assert.equal(spec.template.spec.containers[0]?.image, "postgres:16");
  });

  it("names the line of each document it reads, past comments and separators", () => {
    const text = [
      "# leading comment",
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata: {name: one}",
      "---",
      "",
      "# about two",
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata: {name: two}",
      "--- {apiVersion: v1, kind: ConfigMap, metadata: {name: three}}",
      "---",
      "kind: ConfigMap",
    ].join("\n");
    assert.notEqual(fastParseDocuments(text), undefined);
    const got = parseManifests(text, "m.yaml");
    assert.deepEqual(got, parseManifestsPrecisely(text, "m.yaml"));
    assert.deepEqual(
      got.objects.map((o) => [o.object.metadata.name, o.line]),
      [
        ["one", 2],
        ["two", 8],
        ["three", 11],
      ],
    );
    assert.deepEqual(got.problems, [
      { file: "m.yaml", line: 13, message: "document is missing apiVersion, metadata.name" },
    ]);
  });

  it("gives the same objects, lines and problems as the precise parser for every fixture manifest", () => {
    const files = yamlFiles(FIXTURES);
    assert.ok(files.length > 200, `found ${files.length} fixture files`);
    let fast = 0;
    for (const file of files) {
      const text = readFileSync(file, "utf8").replace(/^\uFEFF/, "");
      if (fastParseDocuments(text)) fast++;
      assert.deepEqual(parseManifests(text, file), parseManifestsPrecisely(text, file), file);
    }
    // Most real manifests have no tags, merge keys or many aliases: the fast path is the usual one.
    assert.ok(fast > files.length / 2, `fast path for ${fast} of ${files.length}`);
  });

  it("gives the same objects as the precise parser for the cold-sync benchmark's manifests", () => {
    const dir = writeManifests(20);
    try {
      for (const file of yamlFiles(dir)) {
        const text = readFileSync(file, "utf8");
        assert.notEqual(fastParseDocuments(text), undefined, file);
        assert.deepEqual(parseManifests(text, file), parseManifestsPrecisely(text, file));
      }
    } finally {
      cleanup(dir);
    }
  });
});

describe("the scan's walks say what their patterns say", () => {
  // The patterns they replace, which read well and cost a pass of the text per character.
  const EMPTY_KEY = /(?:^|[\s{,?-]):(?:\s|$)/m;
  const ALIAS = /(?:^|[\s[{,:])\*/gm;
  // Every string of up to 4 characters over the ones that matter, plus a few longer ones.
  const alphabet = [":", "*", " ", "\n", "\r", "\t", "{", "[", ",", "?", "-", "a", "]", "\u2028"];
  const texts: string[] = [""];
  for (let n = 0; n < 4; n++)
    for (const t of texts.splice(0)) for (const c of ["", ...alphabet]) texts.push(t + c);
  texts.push("key: *ref\n- *a\n  b: [*x, *y]\n: v", "p: '[0-9]*'\nq: \"a:b\"", "  deep:\n      : v");
  const distinct = [...new Set(texts)];

  it(`agree on ${distinct.length} texts`, () => {
    for (const text of distinct) {
      assert.equal(hasEmptyKey(text), EMPTY_KEY.test(text), JSON.stringify(text));
      assert.equal(aliasCount(text), text.match(ALIAS)?.length ?? 0, JSON.stringify(text));
    }
  });
});
