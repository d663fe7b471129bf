import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { appendHistory } from "../../../src/state/history.ts";
import { defaultState } from "../../../src/state/store.ts";
import type { EnvironmentState, HistoryEntry } from "../../../src/state/types.ts";

function op(revision: string): Omit<HistoryEntry, "id"> {
  return {
    startedAt: "2026-11-29T18:00:00Z",
    finishedAt: "2026-11-29T18:00:05Z",
    revision,
    trigger: "push",
    actor: "octocat",
    result: "Succeeded",
    message: "successfully synced",
    counts: { created: 1, configured: 0, pruned: 0, failed: 0 },
  };
}

function withIds(ids: number[]): EnvironmentState {
  const state = defaultState("payments-config.dev");
  state.history = ids.map((id) => ({ id, ...op(`sha${id}`) }));
  return state;
}

const ids = (s: EnvironmentState) => s.history.map((e) => e.id);

describe("appendHistory", () => {
  const cases: Array<{ name: string; before: number[]; limit: number; id: number; after: number[] }> = [
    { name: "first entry gets id 1", before: [], limit: 10, id: 1, after: [1] },
    { name: "next id follows the highest", before: [1, 2, 3], limit: 10, id: 4, after: [1, 2, 3, 4] },
    { name: "at the limit the oldest goes", before: [1, 2, 3], limit: 3, id: 4, after: [2, 3, 4] },
    { name: "ids stay monotonic after trimming", before: [7, 8, 9], limit: 3, id: 10, after: [8, 9, 10] },
    { name: "a lowered limit trims several", before: [1, 2, 3, 4, 5], limit: 2, id: 6, after: [5, 6] },
    { name: "the highest id wins, not the last", before: [4, 9, 6], limit: 10, id: 10, after: [4, 9, 6, 10] },
    { name: "limit 1 keeps only the new entry", before: [1, 2], limit: 1, id: 3, after: [3] },
    { name: "limit 0 still keeps the new entry", before: [5], limit: 0, id: 6, after: [6] },
    { name: "negative limit behaves like 1", before: [5], limit: -3, id: 6, after: [6] },
    { name: "fractional limit rounds down", before: [1, 2, 3], limit: 2.9, id: 4, after: [3, 4] },
    {
      name: "Infinity keeps everything",
      before: [1, 2, 3],
      limit: Number.POSITIVE_INFINITY,
      id: 4,
      after: [1, 2, 3, 4],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const state = withIds(c.before);
      const added = appendHistory(state, op("new"), c.limit);
      assert.equal(added.id, c.id);
      assert.deepEqual(ids(state), c.after);
      assert.deepEqual(state.history.at(-1), added);
      assert.equal(added.revision, "new");
    });
  }

  it("ignores an id the caller's object carries", () => {
    const state = withIds([1, 2]);
    const added = appendHistory(state, { ...op("new"), id: 99 } as HistoryEntry, 10);
    assert.equal(added.id, 3);
  });

  it("copies the entry, leaving the caller's object alone", () => {
    const state = withIds([]);
    const entry = op("abc");
    appendHistory(state, entry, 10);
    assert.equal("id" in entry, false);
  });

  it("numbers a long run without gaps or repeats under a small limit", () => {
    const state = withIds([]);
    const seen: number[] = [];
    for (let i = 0; i < 25; i++) seen.push(appendHistory(state, op(`sha${i}`), 4).id);
    assert.deepEqual(
      seen,
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    assert.deepEqual(ids(state), [22, 23, 24, 25]);
  });
});
