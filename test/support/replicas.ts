// The GitHub App as several replicas on the shared cluster: each with its own client, app Leases
// on and the state watched, answered by one FakeGitHub (what GitHub holds is shared).
import { KubeClient } from "../../src/kube/client.ts";
import { startApp, type TestApp } from "./app.ts";
import type { FakeGitHub } from "./github-fake.ts";
import {
  DEFAULT_BRANCH,
  DEFAULT_INSTALLATION_ID,
  DEFAULT_OWNER,
  DEFAULT_REPO,
  repoIdOf,
} from "./webhooks.ts";
import { within } from "./within.ts";

export class Replicas {
  readonly apps: TestApp[] = [];
  private readonly clients: KubeClient[] = [];

  constructor(
    private readonly kubeconfig: string,
    private readonly stateNamespace: string,
    private readonly github: FakeGitHub,
  ) {}

  async start(identity: string): Promise<TestApp> {
    const client = KubeClient.fromKubeconfig({ kubeconfig: this.kubeconfig });
    this.clients.push(client);
    const app = await startApp({
      client,
      stateNamespace: this.stateNamespace,
      autoStart: true,
      replica: { identity, watch: true },
    });
    this.github.install(app.mock);
    this.apps.push(app);
    return app;
  }

  /**
   * Stops every replica, each within `boundMs` (a stop that never ends fails the hook instead of
   * hanging the file), and closes the clients whatever became of the stops: an open watch or
   * HTTP/2 session would keep the test process from exiting.
   */
  async stop(boundMs = 30_000): Promise<void> {
    try {
      for (const app of this.apps) await within(boundMs, "a replica's stop", app.parts.runtimes.stop());
    } finally {
      for (const c of this.clients) c.close();
    }
  }
}

/**
 * Starts the test repository on `app` as a restarted pod does (bootstrap); returns its runtime.
 * Bootstrap lists the installation's repositories, each with its GitHub id (the app's identity).
 */
export async function runTestRepository(app: TestApp) {
  const rt = await app.parts.runtimes.for({
    id: repoIdOf(`${DEFAULT_OWNER}/${DEFAULT_REPO}`),
    owner: DEFAULT_OWNER,
    repo: DEFAULT_REPO,
    installationId: DEFAULT_INSTALLATION_ID,
    htmlUrl: `https://github.com/${DEFAULT_OWNER}/${DEFAULT_REPO}`,
    defaultBranch: DEFAULT_BRANCH,
  });
  if (!rt) throw new Error("the test repository has no config");
  return rt;
}
