// What a replica reads from the pushes handed over in state: the record inside a watched
// ConfigMap, and whether a recorded push still waits for a sync when the app is taken over.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  awaitsSync,
  clearConsumedPush,
  handedOverOf,
  handedOverPushOf,
} from "../../../src/reconciler/handed-over-push.ts";
import { defaultState } from "../../../src/state/store.ts";
import type { EnvironmentState, HandedOverPush, HistoryEntry } from "../../../src/state/types.ts";

const push = (extra: Partial<HandedOverPush> = {}): HandedOverPush => ({
  branch: "main",
  trigger: "push",
  actor: "alice",
  at: "2026-12-01T12:00:00.000Z",
  ...extra,
});

const state = (
  lastSyncedRevision?: string,
  lastStartedAt?: string,
  last: Partial<HistoryEntry> = {},
): EnvironmentState => ({
  ...defaultState("shop.dev"),
  lastSyncedRevision,
  history: lastStartedAt ? [{ id: 1, startedAt: lastStartedAt, ...last } as HistoryEntry] : [],
});

describe("handedOverPushOf", () => {
  it("reads the record from the state ConfigMap's data", () => {
    const record = push({ revision: "a".repeat(40) });
    const cm = { data: { "state.json": JSON.stringify({ ...state(), handedOverPush: record }) } };
    assert.deepEqual(handedOverPushOf(cm), record);
  });
  for (const [name, data] of [
    ["no data", undefined],
    ["no record", { "state.json": JSON.stringify(state()) }],
    ["state that is not JSON", { "state.json": "{" }],
  ] as const) {
    it(`nothing for ${name}`, () => assert.equal(handedOverPushOf({ data }), undefined));
  }
});

describe("handedOverOf", () => {
  it("reads a repository event beside the push", () => {
    const repositoryEvent = {
      action: "renamed" as const,
      at: "2026-12-01T12:00:01.000Z",
      to: {
        owner: "acme",
        repo: "shop-api",
        installationId: 1,
        htmlUrl: "https://github.com/acme/shop-api",
        defaultBranch: "main",
      },
    };
    const cm = {
      data: { "state.json": JSON.stringify({ ...state(), handedOverPush: push(), repositoryEvent }) },
    };
    assert.deepEqual(handedOverOf(cm), { push: push(), awaiting: true, repositoryEvent });
  });
  it("nothing from state that is not JSON", () =>
    assert.deepEqual(handedOverOf({ data: { "state.json": "[" } }), {}));
});

describe("awaitsSync", () => {
  const sha = "b".repeat(40);
  const cases: Array<[string, HandedOverPush, EnvironmentState, boolean]> = [
    ["its commit is not synced yet", push({ revision: sha }), state("c".repeat(40)), true],
    ["its commit is the last synced", push({ revision: sha }), state(sha), false],
    ["nothing ever synced", push({ revision: sha }), state(), true],
    ["no commit named, nothing started since", push(), state(undefined, "2026-12-01T11:59:00.000Z"), true],
    ["no commit named, a sync started after it", push(), state(undefined, "2026-12-01T12:00:05.000Z"), false],
    ["no commit named, no history", push(), state(), true],
  ];
  const other = "c".repeat(40);
  const before = "2026-12-01T11:59:00.000Z";
  const after = "2026-12-01T12:00:05.000Z";
  cases.push(
    [
      "a sync of another commit started after it (the holder read a newer head)",
      push({ revision: sha }),
      state(other, after, { revision: other, trigger: "push" }),
      false,
    ],
    [
      "a failed sync of another commit started after it",
      push({ revision: sha }),
      state(undefined, after, { revision: other, trigger: "poll", result: "Failed" }),
      false,
    ],
    [
      "a sync of another commit started before it",
      push({ revision: sha }),
      state(other, before, { revision: other, trigger: "push" }),
      true,
    ],
    [
      "a sync of its own commit started after it and was interrupted",
      push({ revision: sha }),
      state(other, after, { revision: sha, trigger: "push", result: "Failed" }),
      true,
    ],
    [
      "only a self-heal of the deployed commit after it",
      push({ revision: sha }),
      state(other, after, { revision: other, trigger: "selfHeal" }),
      true,
    ],
    [
      "only a retry of the deployed commit after it",
      push({ revision: sha }),
      state(other, after, { revision: other, trigger: "retry" }),
      true,
    ],
  );
  for (const [name, p, s, waits] of cases) it(name, () => assert.equal(awaitsSync(p, s), waits));
});

describe("clearConsumedPush", () => {
  const sha = "d".repeat(40);
  const withRecord = (record: HandedOverPush) => ({ ...state(), handedOverPush: record });
  it("clears the push a sync of its commit consumed", () => {
    const s = withRecord(push({ revision: sha }));
    clearConsumedPush(s, sha);
    assert.equal(s.handedOverPush, undefined);
  });
  it("keeps a push of another commit", () => {
    const s = withRecord(push({ revision: "e".repeat(40) }));
    clearConsumedPush(s, sha);
    assert.equal(s.handedOverPush?.revision, "e".repeat(40));
  });
  it("keeps a config push, which every replica reads", () => {
    const s = withRecord(push({ revision: sha, config: true }));
    clearConsumedPush(s, sha);
    assert.equal(s.handedOverPush?.config, true);
  });
});
