// Loaded with `node --import` into a real `dist/github/server.js` process, so the compiled app runs
// as `npm start` runs it (its own signal handling, HTTP server, app authentication) while GitHub is
// answered by nock inside that process: FakeGitHub over the local git repository FAKE_GITHUB_REPO,
// with the config FAKE_GITHUB_CONFIG (a file), the test repository installed once.
import { readFileSync } from "node:fs";
import { makeRepo } from "./git-repo.ts";
import { mockGitHub } from "./github.ts";
import { FakeGitHub } from "./github-fake.ts";
import { DEFAULT_INSTALLATION_ID, DEFAULT_OWNER, DEFAULT_REPO, repoIdOf } from "./webhooks.ts";

const repoDir = process.env.FAKE_GITHUB_REPO;
const configFile = process.env.FAKE_GITHUB_CONFIG;
if (!repoDir || !configFile)
  throw new Error("fake-github-process: set FAKE_GITHUB_REPO and FAKE_GITHUB_CONFIG");

const mock = mockGitHub();
new FakeGitHub(makeRepo({}, "main", repoDir), readFileSync(configFile, "utf8")).install(mock);
const api = mock.api.persist();
api
  .get("/app/installations")
  .query(true)
  .reply(200, [{ id: DEFAULT_INSTALLATION_ID, account: { login: DEFAULT_OWNER } }]);
api.post(/\/app\/installations\/\d+\/access_tokens$/).reply(201, () => ({
  token: "ghs_fakeinstallationtoken",
  expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  permissions: { contents: "read", checks: "write", deployments: "write" },
  repository_selection: "all",
}));
api
  .get("/installation/repositories")
  .query(true)
  .reply(200, {
    total_count: 1,
    repositories: [
      {
        // The id webhooks.ts gives the repository in events, so both name the same app.
        id: repoIdOf(`${DEFAULT_OWNER}/${DEFAULT_REPO}`),
        name: DEFAULT_REPO,
        full_name: `${DEFAULT_OWNER}/${DEFAULT_REPO}`,
        owner: { login: DEFAULT_OWNER },
        html_url: `https://github.com/${DEFAULT_OWNER}/${DEFAULT_REPO}`,
        default_branch: "main",
      },
    ],
  });
