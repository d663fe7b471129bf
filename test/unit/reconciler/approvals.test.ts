import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  addApproval,
  approvalsOf,
  countableApprovals,
  withdrawApproval,
} from "../../../src/reconciler/approvals.ts";
import { defaultState } from "../../../src/state/store.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const at = (minutes: number) => new Date(Date.UTC(2026, 5, 1, 12, minutes)).toISOString();
const NOW = new Date(Date.UTC(2026, 5, 1, 13, 0));

describe("approvals in the state", () => {
  it("counts people, by id when known: a renamed login is one person, two logins without ids are two", () => {
    const s = defaultState("app.prod");
    addApproval(s, { sha: A, by: "carol", id: 7, at: at(0) });
    addApproval(s, { sha: A, by: "carol-renamed", id: 7, at: at(1) });
    addApproval(s, { sha: A, by: "dave", at: at(2) });
    addApproval(s, { sha: B, by: "erin", id: 9, at: at(3) });
    assert.deepEqual(approvalsOf(s, A, NOW).approvers, ["carol-renamed", "dave"]);
    assert.deepEqual(approvalsOf(s, B, NOW).approvers, ["erin"]);
  });

  it("ignores approvals older than expiresAfter and counts them; approving again renews", () => {
    const s = defaultState("app.prod");
    addApproval(s, { sha: A, by: "carol", id: 7, at: at(0) });
    addApproval(s, { sha: A, by: "dave", id: 8, at: at(50) });
    assert.deepEqual(approvalsOf(s, A, NOW, 30 * 60_000), {
      approvers: ["dave"],
      expired: 1,
      rejudged: 0,
      unchecked: 0,
      reconfigured: 0,
      rerendered: 0,
    });
    addApproval(s, { sha: A, by: "carol", id: 7, at: at(55) });
    assert.deepEqual(approvalsOf(s, A, NOW, 30 * 60_000), {
      approvers: ["dave", "carol"],
      expired: 0,
      rejudged: 0,
      unchecked: 0,
      reconfigured: 0,
      rerendered: 0,
    });
  });

  it('counts an approval only while the last synced revision is the one it was judged against (none: ""); one recorded without it counts', () => {
    const s = defaultState("app.prod");
    addApproval(s, { sha: A, by: "carol", id: 7, at: at(0), base: "" });
    addApproval(s, { sha: A, by: "dave", id: 8, at: at(1), base: B });
    addApproval(s, { sha: A, by: "erin", id: 9, at: at(2) });
    assert.deepEqual(approvalsOf(s, A, NOW), {
      approvers: ["carol", "erin"],
      expired: 0,
      rejudged: 1,
      unchecked: 0,
      reconfigured: 0,
      rerendered: 0,
    });
    s.lastSyncedRevision = B;
    assert.deepEqual(approvalsOf(s, A, NOW), {
      approvers: ["dave", "erin"],
      expired: 0,
      rejudged: 1,
      unchecked: 0,
      reconfigured: 0,
      rerendered: 0,
    });
    // Where contributors do not matter (allowAuthor), neither does the base.
    assert.equal(approvalsOf(s, A, NOW, undefined, false).approvers.length, 3);
  });

  it("an approval given without checking contributors (allowAuthor: true then) stops counting once they matter", () => {
    const s = defaultState("app.prod");
    addApproval(s, { sha: A, by: "carol", id: 7, at: at(0), base: "", unchecked: true });
    addApproval(s, { sha: A, by: "dave", id: 8, at: at(1), base: "" });
    assert.deepEqual(approvalsOf(s, A, NOW), {
      approvers: ["dave"],
      expired: 0,
      rejudged: 0,
      unchecked: 1,
      reconfigured: 0,
      rerendered: 0,
    });
    // Still allowAuthor: both count.
    assert.equal(approvalsOf(s, A, NOW, undefined, false).approvers.length, 2);
  });

  it("counts approvals against the base a never-synced environment inherits, when given", () => {
    const s = defaultState("app.production");
    addApproval(s, { sha: A, by: "carol", id: 7, at: at(0), base: B });
    addApproval(s, { sha: A, by: "dave", id: 8, at: at(1), base: "" });
    assert.deepEqual(approvalsOf(s, A, NOW, undefined, true, B).approvers, ["carol"]);
  });

  it("counts an approval only under the configuration it was given under; one recorded without it counts (third review, C)", () => {
    const s = defaultState("app.prod");
    addApproval(s, { sha: A, by: "carol", id: 7, at: at(0), base: "", config: "c1" });
    addApproval(s, { sha: A, by: "dave", id: 8, at: at(1), base: "", config: "c2" });
    addApproval(s, { sha: A, by: "erin", id: 9, at: at(2), base: "" });
    assert.deepEqual(approvalsOf(s, A, NOW, undefined, true, "", "c2"), {
      approvers: ["dave", "erin"],
      expired: 0,
      rejudged: 0,
      unchecked: 0,
      reconfigured: 1,
      rerendered: 0,
    });
    // Even where contributors do not matter (allowAuthor), the configuration does.
    assert.deepEqual(approvalsOf(s, A, NOW, undefined, false, "", "c1").approvers, ["carol", "erin"]);
  });

  it("/unapprove withdraws only the commenter's own approvals, of every pending revision", () => {
    const s = defaultState("app.prod");
    addApproval(s, { sha: A, by: "carol", id: 7, at: at(0) });
    addApproval(s, { sha: B, by: "carol", id: 7, at: at(1) });
    addApproval(s, { sha: A, by: "dave", id: 8, at: at(2) });
    // A login now held by someone else (id 99) withdraws nothing of carol's (id 7).
    assert.deepEqual(withdrawApproval(s, { login: "carol", id: 99 }), []);
    assert.deepEqual(withdrawApproval(s, { login: "carol", id: 7 }).sort(), [A, B]);
    assert.deepEqual(approvalsOf(s, A, NOW).approvers, ["dave"]);
    assert.deepEqual(withdrawApproval(s, { login: "carol", id: 7 }), []);
  });
});

describe("approvals while a pin holds another revision", () => {
  const pin = { revision: B, historyId: 2, by: "alice", at: at(30), reason: "" };
  it("only those given after the pin count; the others are told", () => {
    const s = defaultState("app.prod");
    addApproval(s, { sha: A, by: "bob", id: 1, at: at(10) });
    addApproval(s, { sha: A, by: "carol", id: 2, at: at(40) });
    const { state, beforePin } = countableApprovals({ ...s, pin }, A);
    assert.deepEqual(approvalsOf(state, A, NOW).approvers, ["carol"]);
    assert.equal(beforePin, 1);
  });
  it("all of them when not pinned, or pinned at the revision itself", () => {
    const s = defaultState("app.prod");
    addApproval(s, { sha: B, by: "bob", id: 1, at: at(10) });
    assert.equal(countableApprovals(s, B).beforePin, 0);
    assert.equal(countableApprovals({ ...s, pin }, B).beforePin, 0);
  });
});
