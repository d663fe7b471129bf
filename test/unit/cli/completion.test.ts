// Shell completion: the candidates for each position (table), and the bash script driven the way
// bash drives it, completing environment names from a real repository's config.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
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
    [[""], ["app", "controller", "health", "diff", "cluster", "import-argo", "version", "completion"]],
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

  /** A repository with environments dev and prod, and `syncward` on PATH as an installed one would be. */
  function setup(): { repo: string; env: NodeJS.ProcessEnv } {
    const repo = mkdtempSync(join(tmpdir(), "syncward-complete-"));
    mkdirSync(join(repo, ".git"));
    mkdirSync(join(repo, ".github"));
    writeFileSync(
      join(repo, ".github", "syncward.yml"),
      "environments:\n  - name: dev\n    source: {path: dev}\n    destination: {namespace: dev}\n  - name: prod\n    source: {path: prod}\n    destination: {namespace: prod}\n",
    );
    const bin = join(repo, "bin");
    mkdirSync(bin);
    const root = resolve(import.meta.dirname, "../../..");
    writeFileSync(
      join(bin, "syncward"),
      `#!/bin/sh\nexec "${process.execPath}" --import "${import.meta.resolve("tsx")}" "${root}/src/cli/run.ts" "$@"\n`,
    );
    chmodSync(join(bin, "syncward"), 0o755);
    return { repo, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } };
  }

  it("bash completes environment names from the repository's config", () => {
    const { repo, env } = setup();
    const complete = (line: string) =>
      execFileSync(
        "bash",
        [
          "-c",
          `source <(syncward completion bash)
           COMP_WORDS=(${line}); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
           _syncward; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { cwd: repo, encoding: "utf8", env },
      ).trim();
    assert.equal(complete("syncward app sync ''"), "dev\nprod");
    assert.equal(complete("syncward app get p"), "prod");
    assert.equal(complete("syncward app fr"), "freeze");
  });

  it("zsh hands the candidates to compadd", () => {
    const { repo, env } = setup();
    requireShell("zsh", env);
    // Outside an interactive shell there is no completion system: compdef and compadd are
    // stood in for, and _syncward runs as zsh would run it for the words typed.
    const complete = (words: string) =>
      execFileSync(
        "zsh",
        [
          "-c",
          `compdef() { :; }
           compadd() { [[ $1 == -a ]] && print -l -- "\${(@P)2}"; }
           _files() { print FILES; }
           source <(syncward completion zsh)
           words=(${words}); CURRENT=\${#words}
           _syncward`,
        ],
        { cwd: repo, encoding: "utf8", env },
      ).trim();
    assert.equal(complete("syncward app sync ''"), "dev\nprod");
    assert.equal(complete("syncward app get -o ''"), "json\nyaml\nwide");
    assert.equal(complete("syncward app get --repo ''"), "FILES", "paths fall back to file completion");
  });

  it("fish completes with its own completion engine", () => {
    const { repo, env } = setup();
    requireShell("fish", env);
    const complete = (line: string) =>
      execFileSync("fish", ["-c", `syncward completion fish | source; complete -C '${line}'`], {
        cwd: repo,
        encoding: "utf8",
        env,
      }).trim();
    assert.equal(complete("syncward app sync "), "dev\nprod");
    assert.equal(complete("syncward app unf"), "unfreeze");
    assert.equal(complete("syncward completion z"), "zsh");
  });
});

/**
 * The completion scripts are run by the shells they are for: one missing fails its test with what
 * to install (README, "Prerequisites"), not with spawnSync's ENOENT.
 */
function requireShell(shell: "zsh" | "fish", env: NodeJS.ProcessEnv): void {
  const found = spawnSync("sh", ["-c", `command -v ${shell}`], { env, encoding: "utf8" }).status === 0;
  assert.ok(
    found,
    `${shell} is not installed: this test runs syncward's ${shell} completion in ${shell}. Install it (Debian/Ubuntu: sudo apt-get install ${shell}; macOS: brew install ${shell}); docs/getting-started.md lists it under Prerequisites`,
  );
}
