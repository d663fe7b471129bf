// For app tests of PR comments that must be answered without reaching any cluster.
import { afterEach, beforeEach } from "node:test";
import {
  mockConfig,
  mockPermission,
  mockReactions,
  mockReply,
  startApp,
  type TestApp,
  unreachableClient,
} from "./app.ts";
import type { GitHubMock } from "./github.ts";

/** A fresh app without a reachable cluster for each test of the file; anything that tries to act fails. */
export function useOfflineApp(): () => TestApp {
  let app: TestApp | undefined;
  beforeEach(async () => {
    app = await startApp({ client: unreachableClient() });
  });
  afterEach(async () => {
    if (!app) return;
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });
  return () => {
    if (!app) throw new Error("useOfflineApp: no app outside a test");
    return app;
  };
}

type Level = Parameters<typeof mockPermission>[2];

/**
 * A comment that is refused: the config is read, eyes then confused, one reply (returned); with
 * `who`, the commenter's permission is looked up too.
 */
export function mockRefusal(
  mock: GitHubMock,
  config: string,
  who?: { login: string; permission: Level },
  commentId = 1001,
): { body: () => string } {
  mockConfig(mock, config);
  if (who) mockPermission(mock, who.login, who.permission);
  mockReactions(mock, commentId, "confused");
  return mockReply(mock, 7);
}
