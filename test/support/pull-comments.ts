// Commands commented on pull request #7 of acme/shop by bob, merged: the pull request as GitHub
// answers it whenever syncward reads it, and a comment that holds a command, with the reads a
// command makes of GitHub (its reactions, the commenter's permission, an approver's account).
import { mockPermission, mockReactions, REPO_PATH, type TestApp } from "./app.ts";
import { GITHUB_API } from "./github.ts";
import { apiPull, mockAccount } from "./github-range.ts";
import { issueCommentEvent } from "./webhooks.ts";

/** #7 by bob, merged as the last of `commits()` (read when asked: commits made later count). */
export function mockMergedPull(app: TestApp, commits: () => string[], head = "f".repeat(40)): void {
  app.mock
    .scope(GITHUB_API)
    .persist()
    .get(`${REPO_PATH}/pulls/7`)
    .optionally()
    .reply(200, () => {
      const all = commits();
      return apiPull({
        number: 7,
        author: "bob",
        mergedBy: "bob",
        commits: all,
        mergeCommit: all.at(-1),
        head,
      });
    });
}

/**
 * `login` (write permission) comments `body` on #7 and the app settles. An approver's login is
 * pinned to their GitHub account the first time it is needed, so `/approve` reads it.
 */
export async function commentOnPull(app: TestApp, id: number, login: string, body: string): Promise<void> {
  mockReactions(app.mock, id, "rocket");
  mockPermission(app.mock, login, "write");
  if (body.startsWith("/approve")) mockAccount(app.mock, login);
  const event = issueCommentEvent({ body, sender: { login }, commentId: id });
  (event.payload.issue.user as { login: string }).login = "bob";
  await app.probot.receive(event);
  await app.settle();
}
