// The hostile corpus (test/fixtures/health/evil/): scripts that try to run commands, load the
// repository's JavaScript, read the environment, escape through metatables or binary chunks, or
// spend the process's time and memory. Each goes through the real paths: the engine's health
// evaluation, the CLI's `syncward health --health-config`, and a repository's config (refused
// before any script compiles). Every one is contained with its message, the marker file the
// payload would write never appears, and the environment variable's value appears nowhere.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { stringify } from "yaml";
import { main } from "../../../src/cli/main.ts";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";
import { assessHealth, compileHealthChecks } from "../../../src/engine/health/index.ts";
import type { KubeObject } from "../../../src/kube/object.ts";

const DIR = join(import.meta.dirname, "..", "..", "fixtures", "health", "evil");
const work = mkdtempSync(join(tmpdir(), "syncward-evil-"));
const MARKER = join(work, "marker");
const SECRET = `evil-secret-${randomBytes(8).toString("hex")}`;
process.env.SYNCWARD_EVIL_MARKER = MARKER;
process.env.SYNCWARD_EVIL_SECRET = SECRET;
after(() => rmSync(work, { recursive: true, force: true }));

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const fill = (s: string) => s.replaceAll("__MARKER__", MARKER).replaceAll("__DIR__", DIR);

interface Case {
  name: string;
  kind: string;
  lua: string;
  expect: RegExp;
}

const cases: Case[] = readdirSync(DIR)
  .filter((f) => f.endsWith(".lua"))
  .sort()
  .map((f) => {
    const text = readFileSync(join(DIR, f), "utf8");
    const expect = /^-- expect: (.*)$/m.exec(text)?.[1];
    assert.ok(expect, `${f} names what it expects`);
    const name = f.replace(/\.lua$/, "");
    const kind = name.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase());
    return { name, kind, lua: fill(text), expect: new RegExp(fill(expect).replaceAll(DIR, escapeRe(DIR))) };
  });

const objectOf = (kind: string): KubeObject =>
  ({
    apiVersion: "evil.example.com/v1",
    kind,
    metadata: { name: "x", namespace: "shop" },
    status: {},
  }) as KubeObject;

const BUDGET = { instructions: 2_000_000, timeMs: 250, memoryBytes: 16 * 1024 * 1024 };
const seen: string[] = [];

describe("hostile health scripts in the engine", () => {
  for (const c of cases) {
    test(`${c.name}: Unknown with its reason, and the next script still runs`, () => {
      const checks = compileHealthChecks(
        {
          [`evil.example.com/${c.kind}`]: { "health.lua": c.lua },
          "evil.example.com/Honest": { "health.lua": "return { status = 'Healthy', message = 'fine' }" },
        },
        BUDGET,
      );
      const health = assessHealth(objectOf(c.kind), checks);
      seen.push(JSON.stringify(health));
      assert.equal(health?.status, "Unknown", JSON.stringify(health));
      assert.match(health?.message ?? "", c.expect);
      assert.deepEqual(assessHealth(objectOf("Honest"), checks), { status: "Healthy", message: "fine" });
    });
  }
});

describe("hostile health scripts through `syncward health --health-config`", () => {
  test("every object is Unknown with its script's reason", async () => {
    const config = join(work, "health.yml");
    writeFileSync(
      config,
      stringify({
        resourceCustomizations: Object.fromEntries(
          cases.map((c) => [`evil.example.com/${c.kind}`, { "health.lua": c.lua }]),
        ),
      }),
    );
    const objects = join(work, "objects.yaml");
    writeFileSync(objects, cases.map((c) => stringify(objectOf(c.kind))).join("---\n"));
    let out = "";
    let err = "";
    const code = await main(["health", "--health-config", config, "-o", "json", objects], {
      out: (t) => (out += `${t}\n`),
      err: (t) => (err += `${t}\n`),
      isTTY: false,
    });
    seen.push(out, err);
    assert.equal(code, 0, err);
    const rows = JSON.parse(out) as Array<{ kind: string; status: string; message: string }>;
    for (const c of cases) {
      const row = rows.find((r) => r.kind === c.kind);
      assert.equal(row?.status, "Unknown", `${c.name}: ${JSON.stringify(row)}`);
      assert.match(row?.message ?? "", c.expect, c.name);
    }
  });
});

describe("hostile health scripts in a repository's config", () => {
  for (const c of cases) {
    test(`${c.name}: the config is refused before the script compiles`, () => {
      const text = stringify({
        environments: [{ name: "dev", source: { path: "k8s" }, destination: { namespace: "shop" } }],
        resourceCustomizations: {
          [`evil.example.com/${c.kind}`]: { "health.lua": c.lua, "health.lua.useOpenLibs": true },
        },
      });
      assert.throws(
        () => parseConfig(text, ".github/syncward.yml"),
        (e: unknown) => {
          assert.ok(e instanceof ConfigError);
          seen.push(e.message);
          assert.match(e.message, /resourceCustomizations: is not allowed in a repository's config/);
          return true;
        },
      );
    });
  }
});

describe("after the whole corpus", () => {
  test("the payload never ran and the environment's value appears nowhere", () => {
    assert.equal(existsSync(MARKER), false, "the marker file was written");
    assert.ok(seen.length > cases.length, "the cases ran");
    for (const text of seen) assert.ok(!text.includes(SECRET), `the secret leaked: ${text}`);
  });
});
