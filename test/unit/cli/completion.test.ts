// Shell completion: the candidates for each position (table), and the bash script driven the way
// bash drives it, completing environment names from a real repository's config.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { candidates } from "../../../src/cli/complete.ts";
import type { CliIO } from "../../../src/cli/io.ts";
import { main } from "../../../src/cli/main.ts";
import { COMMANDS } from "../../../src/cli/registry.ts";

const envs = () => ["dev", "staging", "prod"];

describe("completion candidates", () => {
  const table: Array<[string[], string[]]> = [
    [[""], ["app", "controller", "health", "diff", "import-argo", "version", "completion"]],
    [["a"], ["app"]],
    [
      ["app", "s"],
      ["sync", "set"],
    ],
    [
      ["app", "get", ""],
      ["dev", "staging", "prod"],
    ],
    [["app", "sync", "--repo", "/r", "p"], ["prod"]],
    [["app", "sync", "dev", "--d"], ["--dry-run"]],
    [
      ["app", "get", "-o", ""],
      ["json", "yaml", "wide"],
    ],
    [["app", "get", "--output", "y"], ["yaml"]],
    [
      ["app", "set", "dev", "--sync-policy", ""],
      ["automated", "none", "config"],
    ],
    [["app", "list", ""], []],
    [["app", "get", "dev", ""], []],
    [
      ["completion", ""],
      ["bash", "zsh", "fish"],
    ],
    [["--v"], ["--version"]],
    [["controller", "--log-level", "d"], ["debug"]],
  ];
  for (const [words, expected] of table) {
    it(`syncward ${words.join(" ")}|`, async () => {
      assert.deepEqual(await candidates(COMMANDS, words, envs), expected);
    });
  }

  it("reads environment names with the --repo typed so far", async () => {
    let repo: string | undefined;
    await candidates(COMMANDS, ["app", "get", "--repo", "/srv/manifests", ""], (typed) => {
      repo = typed.options.repo;
      return [];
    });
    assert.equal(repo, "/srv/manifests");
  });
});

describe("syncward completion", () => {
  const io = () => {
    let out = "";
    const sink: CliIO = { out: (t) => (out += `${t}\n`), err: () => undefined, isTTY: false };
    return { sink, text: () => out };
  };

  for (const shell of ["bash", "zsh", "fish"]) {
    it(`prints a ${shell} script that asks syncward __complete`, async () => {
      const { sink, text } = io();
      assert.equal(await main(["completion", shell], sink), 0);
      assert.match(text(), /syncward __complete/);
    });
  }

  it("bash completes environment names from the repository's config", () => {
    const repo = mkdtempSync(join(tmpdir(), "syncward-complete-"));
    mkdirSync(join(repo, ".git"));
    mkdirSync(join(repo, ".github"));
    writeFileSync(
      join(repo, ".github", "syncward.yml"),
      "environments:\n  - name: dev\n    source: {path: dev}\n    destination: {namespace: dev}\n  - name: prod\n    source: {path: prod}\n    destination: {namespace: prod}\n",
    );
    // `syncward` on PATH is this checkout's CLI, as an installed one would be.
    const bin = join(repo, "bin");
    mkdirSync(bin);
    const root = resolve(import.meta.dirname, "../../..");
    writeFileSync(
      join(bin, "syncward"),
      `#!/bin/sh\nexec "${process.execPath}" --import "${import.meta.resolve("tsx")}" "${root}/src/cli/run.ts" "$@"\n`,
    );
    chmodSync(join(bin, "syncward"), 0o755);
    const complete = (line: string) =>
      execFileSync(
        "bash",
        [
          "-c",
          `source <(syncward completion bash)
           COMP_WORDS=(${line}); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
           _syncward; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { cwd: repo, encoding: "utf8", env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } },
      ).trim();
    assert.equal(complete("syncward app sync ''"), "dev\nprod");
    assert.equal(complete("syncward app get p"), "prod");
    assert.equal(complete("syncward app fr"), "freeze");
  });
});
