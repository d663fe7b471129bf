// A GitHub that answers whatever the app asks, for end-to-end tests about what it sends.
import { execFileSync } from "node:child_process";
import { REPO_PATH } from "./app.ts";
import type { GitHubMock } from "./github.ts";

const CODELOAD = "https://codeload.github.com";
const b64 = (s: string) => Buffer.from(s).toString("base64");

/** GitHub's answer to a read of `.github/syncward.yml` holding `text`. */
export function configFile(text: string) {
  return {
    type: "file",
    encoding: "base64",
    name: "syncward.yml",
    path: ".github/syncward.yml",
    content: b64(text),
    sha: "0".repeat(40),
    size: text.length,
  };
}

/**
 * GitHub as the app meets it, permissive: every request it makes answered (and recorded by the
 * mock), none refused: the config is `config`, tarballs come from the git repository `repoDir`, and
 * pull requests propose `prHead` (if given). For tests that scan or pick from what the app sent rather than
 * count its requests.
 */
export function answerEverything(mock: GitHubMock, config: string, repoDir: string, prHead?: string): void {
  let id = 9000;
  const api = mock.api.persist();
  api
    .get(/\/contents\/\.github(%2F|\/)syncward\.yml/)
    .query(true)
    .reply(200, () => configFile(config));
  api.get(/\/tarball\/[0-9a-f]{40}$/).reply((uri) => {
    const sha = uri.slice(-40);
    return [302, "", { location: `${CODELOAD}/acme/shop/legacy.tar.gz/${sha}` }];
  });
  // GitHub's tarball: a gzipped tar with one top-level folder.
  mock
    .scope(CODELOAD)
    .persist()
    .get(/\/acme\/shop\/legacy\.tar\.gz\/[0-9a-f]{40}$/)
    .reply(
      200,
      (uri) => {
        const sha = uri.slice(-40);
        const prefix = `--prefix=acme-shop-${sha.slice(0, 7)}/`;
        return execFileSync("git", ["archive", "--format=tar.gz", prefix, sha], { cwd: repoDir });
      },
      { "content-type": "application/x-gzip" },
    );
  api
    .post(`${REPO_PATH}/check-runs`)
    .reply(201, () => ({ id: ++id, html_url: `https://github.com/r/${id}` }));
  api.patch(/\/check-runs\/\d+$/).reply(200, () => ({ id }));
  api.get(/\/deployments(\?.*)?$/).reply(200, []);
  api.post(`${REPO_PATH}/deployments`).reply(201, () => ({ id: ++id }));
  api.post(/\/deployments\/\d+\/statuses$/).reply(201, { id: 1 });
  api.get(/\/commits\/[0-9a-f]{40}\/pulls/).reply(200, []);
  api.post(/\/issues\/comments\/\d+\/reactions$/).reply(201, { id: 1 });
  api.post(/\/issues\/\d+\/comments$/).reply(201, () => ({ id: ++id }));
  api.patch(/\/issues\/comments\/\d+$/).reply(200, () => ({ id }));
  api.get(/\/issues\/\d+\/comments/).reply(200, []);
  // The pull request commented on proposes the deployed commit: `/diff` shows the drift alone.
  // GitHub's test merge of it is taken to be the same commit (the branch is up to date). Without
  // `prHead` the test mocks its pull requests itself.
  if (prHead)
    api.get(/\/pulls\/\d+$/).reply(200, {
      number: 7,
      merged: false,
      mergeable: true,
      merge_commit_sha: prHead,
      head: { sha: prHead, repo: { id: 1296269 } },
      base: { ref: "main", repo: { id: 1296269 } },
    });
  // Pull requests change manifests, never the configuration.
  api
    .get(/\/pulls\/\d+\/files/)
    .query(true)
    .reply(200, [{ filename: "app/settings.yaml", status: "modified" }]);
  api.get(/\/collaborators\/[^/]+\/permission$/).reply(200, {
    permission: "write",
    role_name: "write",
    user: { login: "alice" },
  });
}
