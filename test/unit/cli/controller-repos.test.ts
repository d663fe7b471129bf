// `syncward controller --repos DIR`: bad input gets one clear line and exit code 2 before any
// cluster is contacted; --repos names many repositories, so the one-repository options are refused.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { CliIO } from "../../../src/cli/io.ts";
import { main } from "../../../src/cli/main.ts";
import { makeRepo } from "../../support/git-repo.ts";

async function run(args: string[]): Promise<{ code: number; err: string }> {
  let err = "";
  const io: CliIO = { out: () => undefined, err: (t) => (err += `${t}\n`), isTTY: false };
  return { code: await main(args, io), err };
}

describe("syncward controller --repos", () => {
  it("refuses a directory that does not exist", async () => {
    const missing = join(tmpdir(), "syncward-no-such-dir");
    const { code, err } = await run(["controller", "--repos", missing]);
    assert.equal(code, 2);
    assert.match(err, new RegExp(`--repos: ${missing} is not a directory`));
  });

  it("refuses a directory without any repository that has a syncward config", async () => {
    const dir = mkdtempSync(join(tmpdir(), "syncward-repos-"));
    mkdirSync(join(dir, "not-a-repo"));
    makeRepo({ "README.md": "no config here" }, "main", join(dir, "no-config"));
    const { code, err } = await run(["controller", "--repos", dir]);
    assert.equal(code, 2);
    assert.match(err, /--repos: no git repository with \.github\/syncward\.yml directly under/);
  });

  for (const option of ["--repo", "--config", "--app"]) {
    it(`refuses ${option} beside it`, async () => {
      const { code, err } = await run(["controller", "--repos", tmpdir(), option, "x"]);
      assert.equal(code, 2);
      assert.match(
        err,
        new RegExp(`${option} names one repository; with --repos each app is a directory under`),
      );
    });
  }
});
