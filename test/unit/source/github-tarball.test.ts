import assert from "node:assert/strict";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { Octokit } from "@octokit/rest";
import nock from "nock";
import { SourceError } from "../../../src/source/errors.ts";
import { fetchGitHubTree } from "../../../src/source/github-tarball.ts";
import { maxTarballBytesFromEnv } from "../../../src/source/limits.ts";
import { cleanup, TestRepo, tempDir } from "./helpers.ts";

const API = "https://api.github.com";
const CODELOAD = "https://codeload.github.com";

describe("fetchGitHubTree", () => {
  let repo: TestRepo;
  let sha: string;
  let tarball: Buffer;
  let cache: string;
  const quiet = () => {};
  const octokit = new Octokit({ log: { debug: quiet, info: quiet, warn: quiet, error: quiet } });

  before(() => {
    nock.disableNetConnect();
    repo = new TestRepo();
    sha = repo.commit("manifests", {
      "deploy/app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
      "deploy/link.yaml": { symlink: "app.yaml" },
      "README.md": "hello\n",
    });
    // What GitHub serves: a gzipped tar with everything under `<owner>-<repo>-<sha7>/`.
    tarball = repo.archive(sha, "--format=tar.gz", "--prefix=owner-repo-abc1234/");
  });

  after(() => {
    cleanup(repo.dir);
    nock.enableNetConnect();
  });

  beforeEach(() => {
    cache = tempDir("syncward-cache-");
  });

  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    cleanup(cache);
    assert.deepEqual(pending, [], "every mocked request was made");
  });

  function mockTarball(ref: string) {
    const download = `/owner/repo/legacy.tar.gz/${ref}?token=short-lived`;
    const api = nock(API)
      .get(`/repos/owner/repo/tarball/${ref}`)
      .reply(302, "", { location: `${CODELOAD}${download}` });
    const codeload = nock(CODELOAD).get(download).reply(200, tarball, {
      "content-type": "application/x-gzip",
      "content-disposition": "attachment; filename=owner-repo-abc1234.tar.gz",
    });
    return { api, codeload };
  }

  it("downloads the tarball through the redirect and extracts it without its top directory", async () => {
    const { api, codeload } = mockTarball(sha);
    const dir = await fetchGitHubTree(octokit, { owner: "owner", repo: "repo", sha }, cache);
    assert.ok(api.isDone() && codeload.isDone());
    assert.equal(dir, join(cache, sha));
    assert.deepEqual(readdirSync(dir).sort(), ["README.md", "deploy"]);
    assert.equal(readFileSync(join(dir, "deploy/app.yaml"), "utf8").split("\n")[1], "kind: ConfigMap");
    assert.ok(lstatSync(join(dir, "deploy/link.yaml")).isSymbolicLink());
    assert.equal(readlinkSync(join(dir, "deploy/link.yaml")), "app.yaml");
    assert.deepEqual(
      readdirSync(cache).filter((n) => n !== ".meta"),
      [sha],
      "no temporary directory left behind",
    );
  });

  it("stops a download past the operator's cap, streamed: nothing extracted, the variable named", async () => {
    mockTarball(sha);
    const cap = Math.floor(tarball.byteLength / 2);
    await assert.rejects(
      fetchGitHubTree(octokit, { owner: "owner", repo: "repo", sha }, cache, cap),
      (err: unknown) =>
        err instanceof SourceError &&
        err.message ===
          `the tarball of owner/repo at ${sha} is larger than ${cap} bytes (SYNCWARD_MAX_TARBALL_BYTES); download stopped`,
    );
    assert.deepEqual(readdirSync(cache), [], "no tree left behind");
  });

  it("reads the cap from SYNCWARD_MAX_TARBALL_BYTES and refuses a malformed one", () => {
    assert.equal(maxTarballBytesFromEnv({ SYNCWARD_MAX_TARBALL_BYTES: "1048576" }), 1048576);
    assert.equal(maxTarballBytesFromEnv({}), 256 * 1024 * 1024);
    assert.throws(() => maxTarballBytesFromEnv({ SYNCWARD_MAX_TARBALL_BYTES: "1GB" }), {
      message: 'SYNCWARD_MAX_TARBALL_BYTES="1GB": expected a whole number greater than 0',
    });
  });

  it("serves a cached SHA without any request", async () => {
    mockTarball(sha);
    const dir = await fetchGitHubTree(octokit, { owner: "owner", repo: "repo", sha }, cache);
    // No mock is left: a second download would fail with a network error.
    assert.equal(await fetchGitHubTree(octokit, { owner: "owner", repo: "repo", sha }, cache), dir);
  });

  it("downloads once for concurrent callers", async () => {
    mockTarball(sha);
    const dirs = await Promise.all(
      [1, 2, 3].map(() => fetchGitHubTree(octokit, { owner: "owner", repo: "repo", sha }, cache)),
    );
    assert.equal(new Set(dirs).size, 1);
  });

  it("names a revision GitHub does not know", async () => {
    const missing = "f".repeat(40);
    nock(API)
      .get(`/repos/owner/repo/tarball/${missing}`)
      .reply(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
    await assert.rejects(fetchGitHubTree(octokit, { owner: "owner", repo: "repo", sha: missing }, cache), {
      name: "SourceError",
      message: `revision '${missing}' not found in owner/repo (or the app cannot read it)`,
    });
    assert.ok(!existsSync(join(cache, missing)));
    assert.deepEqual(readdirSync(cache), []);
  });

  it("reports a corrupt tarball and leaves no tree", async () => {
    nock(API)
      .get(`/repos/owner/repo/tarball/${sha}`)
      .reply(302, "", { location: `${CODELOAD}/owner/repo/legacy.tar.gz/${sha}` });
    nock(CODELOAD)
      .get(`/owner/repo/legacy.tar.gz/${sha}`)
      .reply(200, Buffer.from("this is not gzip"), { "content-type": "application/x-gzip" });
    await assert.rejects(
      fetchGitHubTree(octokit, { owner: "owner", repo: "repo", sha }, cache),
      (err: unknown) =>
        err instanceof SourceError && /extracting the tarball of owner\/repo/.test(err.message),
    );
    assert.deepEqual(readdirSync(cache), []);
  });

  it("refuses a branch name instead of a SHA before any request", async () => {
    await assert.rejects(
      fetchGitHubTree(octokit, { owner: "owner", repo: "repo", sha: "main" }, cache),
      /expected a full commit SHA/,
    );
  });
});
