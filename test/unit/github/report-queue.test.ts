// The queue between the reconciler and GitHub: in order per lane, kept through outages, newest
// per key, bounded, and never hanging shutdown.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  GitHubUnavailableError,
  gitHubWaitMs,
  isTransientGitHubError,
} from "../../../src/github/github-errors.ts";
import { ReportQueue } from "../../../src/github/report-queue.ts";
import { SourceError } from "../../../src/source/errors.ts";

interface Item {
  lane: string;
  key: string;
  n: number;
}

/** A GitHub that is down while `down` is true; `sent` lists what it took. */
function fakeGitHub() {
  const gh = {
    down: false,
    sent: [] as number[],
    dropped: [] as Array<{ n: number; why: string }>,
    queue: undefined as unknown as ReportQueue<Item>,
  };
  gh.queue = new ReportQueue<Item>({
    send: async (item) => {
      await new Promise((r) => setImmediate(r));
      if (gh.down) throw Object.assign(new Error("Bad Gateway"), { status: 502 });
      if (item.key === "refused") throw Object.assign(new Error("Validation Failed"), { status: 422 });
      gh.sent.push(item.n);
    },
    laneOf: (i) => i.lane,
    keyOf: (i) => i.key,
    transient: isTransientGitHubError,
    onDropped: (i, why) => gh.dropped.push({ n: i.n, why }),
    retryMs: { initial: 5, max: 20 },
    laneCapacity: 3,
  });
  return gh;
}

/** Lets every promise callback that can run, run (setImmediate is not mocked). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

const until = async (what: () => boolean) => {
  for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(what(), "condition never held");
};

describe("report queue", () => {
  it("sends each lane in order", async () => {
    const gh = fakeGitHub();
    for (let n = 1; n <= 3; n++) gh.queue.push({ lane: "dev", key: `k${n}`, n });
    await gh.queue.idle();
    assert.deepEqual(gh.sent, [1, 2, 3]);
  });

  it("keeps what GitHub could not take, newest per key, and sends it in order once GitHub answers", async () => {
    const gh = fakeGitHub();
    gh.down = true;
    gh.queue.push({ lane: "dev", key: "a", n: 1 });
    await gh.queue.idle();
    assert.equal(gh.queue.backingOff, true);
    gh.queue.push({ lane: "dev", key: "b", n: 2 });
    gh.queue.push({ lane: "dev", key: "a", n: 3 }); // replaces 1, keeps its place behind nothing older
    assert.equal(gh.queue.waiting, 2);
    gh.down = false;
    await until(() => gh.queue.waiting === 0);
    assert.deepEqual(gh.sent, [2, 3]);
    assert.deepEqual(gh.dropped, []);
  });

  it("holds at most laneCapacity reports per lane while GitHub is down, dropping the oldest", async () => {
    const gh = fakeGitHub();
    gh.down = true;
    for (let n = 1; n <= 10; n++) gh.queue.push({ lane: "dev", key: `k${n}`, n });
    await gh.queue.idle();
    assert.ok(gh.queue.waiting <= 3, `${gh.queue.waiting} waiting`);
    gh.down = false;
    await until(() => gh.queue.waiting === 0);
    assert.deepEqual(gh.sent, [8, 9, 10]);
  });

  it("drops a report GitHub refuses for good (422) and goes on", async () => {
    const gh = fakeGitHub();
    gh.queue.push({ lane: "dev", key: "refused", n: 1 });
    gh.queue.push({ lane: "dev", key: "b", n: 2 });
    await gh.queue.idle();
    assert.deepEqual(gh.sent, [2]);
    assert.deepEqual(gh.dropped, [{ n: 1, why: "it failed for good" }]);
  });

  it("idle() and close() return during an outage (shutdown never hangs on GitHub)", async () => {
    const gh = fakeGitHub();
    gh.down = true;
    gh.queue.push({ lane: "dev", key: "a", n: 1 });
    await gh.queue.idle();
    gh.queue.close();
    assert.equal(gh.queue.waiting, 0);
    gh.queue.push({ lane: "dev", key: "b", n: 2 });
    await gh.queue.idle();
    assert.deepEqual(gh.sent, []);
  });
});

describe("transient GitHub errors", () => {
  const err = (status: number, message = "x", headers: Record<string, string> = {}) =>
    Object.assign(new Error(message), { status, response: { headers } });

  it("5xx, 429 and rate-limited 403s are worth sending again; other refusals and our own bugs are not", () => {
    assert.equal(isTransientGitHubError(err(502)), true);
    assert.equal(isTransientGitHubError(err(503)), true);
    assert.equal(isTransientGitHubError(err(429)), true);
    assert.equal(isTransientGitHubError(err(403, "x", { "x-ratelimit-remaining": "0" })), true);
    assert.equal(isTransientGitHubError(err(403, "You have exceeded a secondary rate limit")), true);
    assert.equal(isTransientGitHubError(err(403, "Resource not accessible by integration")), false);
    assert.equal(isTransientGitHubError(err(404)), false);
    assert.equal(isTransientGitHubError(err(422)), false);
    assert.equal(isTransientGitHubError(new TypeError("undefined is not a function")), false);
  });

  it("a failure wrapped in another error (cause) counts as what it wraps", () => {
    const limited = err(403, "secondary rate limit", { "retry-after": "30" });
    const wrapped = new GitHubUnavailableError("GitHub did not serve", 403, {
      cause: new SourceError("downloading failed", { cause: limited }),
    });
    assert.equal(isTransientGitHubError(wrapped), true);
    assert.equal(gitHubWaitMs(wrapped), 30_000, "the wait GitHub asked for, from the inner answer");
    assert.equal(isTransientGitHubError(new Error("render", { cause: err(404) })), false);
  });
});

describe("how long GitHub asks us to wait", () => {
  const err = (status: number, message = "x", headers: Record<string, string> = {}) =>
    Object.assign(new Error(message), { status, response: { headers } });
  const now = 1_700_000_000_000;

  const cases: Array<[string, Error, number | undefined]> = [
    ["retry-after on a secondary limit", err(403, "secondary rate limit", { "retry-after": "30" }), 30_000],
    ["retry-after on a 429", err(429, "x", { "retry-after": "0" }), 0],
    [
      "a spent quota: until its reset, and a second more",
      err(403, "API rate limit exceeded", {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(now / 1000 + 90),
      }),
      91_000,
    ],
    [
      "a secondary limit that names no time: a minute",
      err(403, "You have exceeded a secondary rate limit"),
      60_000,
    ],
    ["an outage is not a rate limit: our own backoff", err(502), undefined],
    ["a refusal is not a rate limit", err(403, "Resource not accessible by integration"), undefined],
  ];
  for (const [name, e, expected] of cases) it(name, () => assert.equal(gitHubWaitMs(e, now), expected));

  it("the queue waits as long as GitHub asked before sending again", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
    const sent: number[] = [];
    let limited = true;
    const queue = new ReportQueue<number>({
      send: async (n) => {
        if (limited) {
          limited = false;
          throw err(429, "x", { "retry-after": "0.3" });
        }
        sent.push(n);
      },
      laneOf: () => "dev",
      keyOf: (n) => String(n),
      transient: isTransientGitHubError,
      waitMs: (e) => gitHubWaitMs(e),
      onDropped: () => assert.fail("nothing is dropped"),
      retryMs: { initial: 5, max: 20 },
    });
    queue.push(1);
    await settle();
    // Our own backoff would have tried again after 5 ms; GitHub asked for 300.
    t.mock.timers.tick(299);
    await settle();
    assert.deepEqual(sent, []);
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(sent, [1]);
  });

  it("another environment's report going through does not lift a pause GitHub asked for", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
    const sent: string[] = [];
    let releaseProd = () => {};
    const queue = new ReportQueue<string>({
      send: async (lane) => {
        if (lane === "prod") await new Promise<void>((r) => (releaseProd = r));
        else if (!sent.includes("prod")) throw err(429, "x", { "retry-after": "60" });
        sent.push(lane);
      },
      laneOf: (lane) => lane,
      keyOf: (lane) => lane,
      transient: isTransientGitHubError,
      waitMs: (e) => gitHubWaitMs(e),
      onDropped: () => assert.fail("nothing is dropped"),
      retryMs: { initial: 5, max: 20 },
    });
    queue.push("prod"); // in flight while dev is rate limited
    queue.push("dev");
    await settle();
    assert.equal(queue.backingOff, true);
    releaseProd();
    await settle();
    assert.deepEqual(sent, ["prod"]);
    assert.equal(queue.backingOff, true, "prod's success lifted dev's rate-limit pause");
    t.mock.timers.tick(59_999);
    await settle();
    assert.deepEqual(sent, ["prod"]);
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(sent, ["prod", "dev"]);
  });

  it("another environment's report going through ends an outage pause at once", async () => {
    const sent: string[] = [];
    let releaseProd = () => {};
    const queue = new ReportQueue<string>({
      send: async (lane) => {
        if (lane === "prod") await new Promise<void>((r) => (releaseProd = r));
        else if (!sent.includes("prod")) throw err(502);
        sent.push(lane);
      },
      laneOf: (lane) => lane,
      keyOf: (lane) => lane,
      transient: isTransientGitHubError,
      onDropped: () => assert.fail("nothing is dropped"),
      // A backoff no test waits out: only prod's answer can send dev.
      retryMs: { initial: 3_600_000, max: 3_600_000 },
    });
    queue.push("prod");
    queue.push("dev");
    await settle();
    assert.equal(queue.backingOff, true);
    releaseProd();
    await queue.idle();
    assert.deepEqual(sent, ["prod", "dev"]);
  });
});
