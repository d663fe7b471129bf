// What syncward writes back on a pull request after a command: text it did not write (a freeze
// reason, object names, API-server output) is shown, never rendered or used to mention anyone.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { handleCommentCommands } from "../../../src/github/comment-commands.ts";
import type { Octokit } from "../../../src/github/octokit.ts";
import type { RepoRuntime } from "../../../src/github/runtime.ts";
import { envConfig } from "../../support/env.ts";

/** GitHub as a commenter with write permission sees it; replies land in `bodies`. */
function writerOnGitHub(): { gh: Octokit; bodies: string[] } {
  const bodies: string[] = [];
  const gh = {
    rest: {
      reactions: { createForIssueComment: async () => ({}) },
      repos: {
        getCollaboratorPermissionLevel: async () => ({ data: { permission: "write", role_name: "write" } }),
      },
      issues: {
        createComment: async (p: { body: string }) => {
          bodies.push(p.body);
          return { data: { id: 1 } };
        },
      },
    },
  } as unknown as Octokit;
  return { gh, bodies };
}

/** The replies to `body` (default `/sync dev`) by `login` (a writer), with `controller` as the environment's. */
async function replies(controller: object, login = "alice", body = "/sync dev"): Promise<string[]> {
  const env = envConfig("shop");
  const rt = {
    ref: { owner: "acme", repo: "shop" },
    config: { environments: [env] },
    reconciler: { controller: () => ({ env, rules: async () => env, ...controller }) },
  } as unknown as RepoRuntime;
  const { gh, bodies } = writerOnGitHub();
  await handleCommentCommands(rt, gh, {
    commentId: 1,
    body,
    login,
    userId: 1,
    senderType: "User",
    pullNumber: 7,
    merged: true,
  });
  return bodies;
}

/** The reply to `/sync dev` when the sync ends with `message`. */
async function syncReply(message: string): Promise<string> {
  const bodies = await replies({
    sync: async () => ({ phase: "Refused", revision: "a".repeat(40), message }),
  });
  assert.equal(bodies.length, 1);
  return bodies[0] ?? "";
}

describe("comment replies", () => {
  it("/sync shows the outcome's message (a freeze reason) in a code span: no HTML, markdown or mention", async () => {
    const reason = "environment dev is frozen by alice (<img src=x onerror=alert(1)> @acme/everyone **now**)";
    assert.equal(
      await syncReply(reason),
      `**dev**: sync of \`aaaaaaa\` refused: \`${reason}\`\n\n**Next:** fix what the message names, then comment \`/sync dev\` again; \`/diff dev\` shows what a sync would change.`,
    );
  });

  it("/sync shows a message of several lines (API-server output) in a fence it cannot close", async () => {
    const message = "1 failed:\n```\n</details> @mallory";
    assert.equal(
      await syncReply(message),
      `**dev**: sync of \`aaaaaaa\` refused: \n\n\`\`\`\`\n${message}\n\`\`\`\`\n\n**Next:** fix what the message names, then comment \`/sync dev\` again; \`/diff dev\` shows what a sync would change.`,
    );
  });
});

describe("a pending config change that loosens a command's permission", () => {
  it("/sync is held to the stricter permission of the deployed config", async () => {
    const env = envConfig("shop", { commands: { sync: "write" } });
    const deployed = envConfig("shop", { commands: { sync: "admin" } });
    let synced = false;
    const bodies = await replies(
      {
        env,
        rules: async () => ({ ...env, commands: deployed.commands }),
        sync: async () => {
          synced = true;
          return { phase: "Succeeded", revision: "a".repeat(40), message: "" };
        },
      },
      "mallory",
    );
    assert.equal(synced, false);
    assert.match(
      bodies[0] ?? "",
      /Sorry @mallory, `\/sync dev` needs \*\*admin\*\* permission on this repository and you have \*\*write\*\*/,
    );
  });
});

describe("the Next line of a reply to several commands", () => {
  it("is the one of the command that did not run, once, at the very end", async () => {
    const dev = envConfig("shop-dev");
    const prod = { ...envConfig("shop-prod"), name: "prod" };
    const rt = {
      ref: { owner: "acme", repo: "shop" },
      config: { environments: [dev, prod] },
      log: { error: () => {} },
      reconciler: { controller: () => ({ env: dev, rules: async () => dev }) },
    } as unknown as RepoRuntime;
    const { gh, bodies } = writerOnGitHub();
    await handleCommentCommands(rt, gh, {
      commentId: 1,
      body: "/help\n/freeze",
      login: "alice",
      userId: 1,
      senderType: "User",
      pullNumber: 7,
      merged: true,
    });
    const body = bodies[0] ?? "";
    assert.equal(body.match(/\*\*Next:\*\*/g)?.length, 1, body);
    assert.match(
      body,
      /\| `\/help` \|[\s\S]*---\n\nWhich environment\? This repository has 2: `dev`, `prod`/,
    );
    assert.match(body, /\n\n\*\*Next:\*\* comment `\/freeze dev` \(or another environment's name\)\.$/);
  });
});

describe("/rollback and /unpin reach the controller's rollback and unpin", () => {
  const run = (body: string, controller: object) => replies(controller, "alice", body);
  const A = "a".repeat(40);
  const pin = {
    revision: A,
    historyId: 3,
    by: "alice",
    at: "2026-01-01T00:00:00.000Z",
    reason: "/rollback on #7",
  };

  it("/rollback dev 3 asks for history entry 3, as alice, and says what moved", async () => {
    const calls: unknown[] = [];
    const bodies = await run("/rollback dev 3", {
      rollback: async (request: unknown) => {
        calls.push(request);
        return { phase: "Succeeded", revision: A, message: "synced 1 object", pin };
      },
    });
    assert.deepEqual(calls, [{ actor: "alice", target: { historyId: 3 }, reason: "/rollback on #7" }]);
    assert.match(bodies[0] ?? "", /^\*\*dev\*\* rolled back to `aaaaaaa` \(history 3\) and is pinned there/);
    assert.match(bodies[0] ?? "", /\*\*Next:\*\* comment `\/unpin dev` when `main` is fit to deploy again/);
  });

  it("/rollback dev <commit> asks for the commit", async () => {
    const calls: unknown[] = [];
    await run("/rollback dev ABCDEF12", {
      rollback: async (request: unknown) => {
        calls.push(request);
        return { refused: "dev has no successful sync of commit abcdef12 in its history" };
      },
    });
    assert.deepEqual(calls, [{ actor: "alice", target: { commit: "abcdef12" }, reason: "/rollback on #7" }]);
  });

  it("/unpin dev unpins as alice", async () => {
    const calls: unknown[] = [];
    const bodies = await run("/unpin dev", {
      unpin: async (actor: string) => {
        calls.push(actor);
        return pin;
      },
    });
    assert.deepEqual(calls, ["alice"]);
    assert.match(bodies[0] ?? "", /^\*\*dev\*\* is unpinned: it held `aaaaaaa`/);
  });
});
