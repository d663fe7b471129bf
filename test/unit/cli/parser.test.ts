// The command line as a person meets it, without a cluster: help everywhere, the version, typo
// suggestions, and usage errors (exit 2) found before anything connects.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { CliIO } from "../../../src/cli/io.ts";
import { main } from "../../../src/cli/main.ts";
import { COMMANDS } from "../../../src/cli/registry.ts";

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = {
    out: (t) => (out += t.endsWith("\n") ? t : `${t}\n`),
    err: (t) => (err += t.endsWith("\n") ? t : `${t}\n`),
    isTTY: false,
  };
  const code = await main(args, io);
  return { code, out, err };
}

/** Every command and verb as a person types it: ["app", "sync"], ["controller"], ... */
const everyCommand = Object.entries(COMMANDS).flatMap(([name, spec]) =>
  spec.hidden ? [] : [[name], ...Object.keys(spec.verbs ?? {}).map((verb) => [name, verb])],
);

describe("syncward --help", () => {
  it("lists every command and exits 0", async () => {
    const { code, out } = await run(["--help"]);
    assert.equal(code, 0);
    for (const [name] of everyCommand) assert.match(out, new RegExp(`^  ${name}\\b`, "m"));
  });

  for (const words of everyCommand) {
    for (const flag of ["--help", "-h"]) {
      it(`${words.join(" ")} ${flag} prints usage and exits 0`, async () => {
        const { code, out, err } = await run([...words, flag]);
        assert.equal(code, 0, err);
        assert.match(out, new RegExp(`^Usage: syncward ${words.join(" ")}\\b`, "m"));
        assert.equal(err, "");
      });
    }
  }

  it("help COMMAND VERB is the same as COMMAND VERB --help", async () => {
    assert.equal((await run(["help", "app"])).out, (await run(["app", "--help"])).out);
    assert.equal((await run(["app", "help", "sync"])).out, (await run(["app", "sync", "--help"])).out);
  });

  it("no command prints the usage on stderr with exit 2", async () => {
    const { code, err } = await run([]);
    assert.equal(code, 2);
    assert.match(err, /^Usage: syncward/m);
  });
});

describe("syncward --version and version", () => {
  it("names the version and the commit", async () => {
    const { code, out } = await run(["--version"]);
    assert.equal(code, 0);
    assert.match(out, /^syncward \d+\.\d+\.\d+ \(commit ([0-9a-f]{12}|unknown)\)\n$/);
  });

  it("prints the same as YAML or JSON with -o", async () => {
    const yaml = await run(["version", "-o", "yaml"]);
    assert.equal(yaml.code, 0);
    assert.match(yaml.out, /^version: \d+\.\d+\.\d+\ncommit: \S+\nnode: \S+\n$/);
    const json = JSON.parse((await run(["version", "-o", "json"])).out);
    assert.equal(json.node, process.versions.node);
    assert.equal((await run(["--version"])).out.includes(json.commit.slice(0, 12)), true);
  });
});

describe("mistakes get a suggestion and exit 2", () => {
  const cases: Array<[string[], RegExp]> = [
    [["ap"], /unknown command 'ap'\n\(Did you mean app\?\)/],
    [["app", "synk", "dev"], /unknown command 'synk'\n\(Did you mean sync\?\)/],
    [["app", "sync", "dev", "--prnue"], /unknown option '--prnue'\n\(Did you mean --prune\?\)/],
    [["app", "set", "dev", "--sync-polcy", "none"], /Did you mean --sync-policy\?/],
    [["controller", "--lease-duraton", "5s"], /Did you mean --lease-duration\?/],
    [["health", "--ouptut", "json", "x.yaml"], /Did you mean --output\?/],
    [["app", "list", "-o", "xml"], /argument 'xml' is invalid\. Allowed choices are json, yaml, wide/],
    [["app", "get", "dev", "prod"], /too many arguments for 'get'/],
  ];
  for (const [args, message] of cases) {
    it(args.join(" "), async () => {
      const { code, out, err } = await run(args);
      assert.equal(code, 2);
      assert.equal(out, "");
      assert.match(err, message);
    });
  }
});

describe("positionals are checked before any connection", () => {
  // A kubeconfig that does not exist and a repository that is not one: had either been opened,
  // the error would name them instead of the missing ENV.
  const nowhere = ["--repo", "/nonexistent", "--kubeconfig", "/nonexistent/kubeconfig"];
  for (const verb of [
    "get",
    "diff",
    "sync",
    "wait",
    "history",
    "set",
    "freeze",
    "unfreeze",
    "rollback",
    "unpin",
  ]) {
    it(`app ${verb} without ENV`, async () => {
      const { code, err } = await run(["app", verb, ...nowhere]);
      assert.equal(code, 2);
      assert.match(err, /^error: missing required argument 'ENV'$/m);
      assert.doesNotMatch(err, /nonexistent/);
    });
  }

  it("app wait with a timeout that is not a duration", async () => {
    const { code, err } = await run(["app", "wait", "dev", "--timeout", "soon", ...nowhere]);
    assert.equal(code, 2);
    assert.equal(err, 'syncward: app wait: --timeout "soon" is not a duration (e.g. 90s, 5m)\n');
  });

  it("a repository-bound command then names the missing repository", async () => {
    const { code, err } = await run(["app", "get", "dev", ...nowhere]);
    assert.equal(code, 2);
    assert.match(err, /^syncward: \/nonexistent is not a git repository/);
  });
});

describe("commands with parsers of their own get their declared options", () => {
  it("health -o json FILE", async () => {
    const dir = mkdtempSync(join(tmpdir(), "syncward-cli-"));
    const file = join(dir, "cm.yaml");
    writeFileSync(file, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n");
    const { code, out } = await run(["health", "-o", "json", file]);
    assert.equal(code, 0);
    assert.equal(JSON.parse(out)[0].name, "settings");
  });

  it("import-argo without a file", async () => {
    const { code, err } = await run(["import-argo"]);
    assert.equal(code, 2);
    assert.match(err, /missing required argument 'APPLICATION.yaml'/);
  });
});
