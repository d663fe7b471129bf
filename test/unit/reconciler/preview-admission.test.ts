// Start decisions one at a time per installation: what a record counts for in the limits, when a
// claimed start is left to the replica that claimed it, and the decision itself against records
// and a ticket kept in memory with resourceVersions as the API server keeps them, run as two
// replicas would at the worst moment (both read before either writes).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type AdmissionRecords,
  type AdmissionTicket,
  type AdmissionTickets,
  admissionView,
  admitPreview,
  claimed,
  queuedOf,
  START_UNDER_WAY_MS,
  startUnderWay,
  unadmitted,
} from "../../../src/reconciler/preview-admission.ts";
import { admit, type PreviewLimits } from "../../../src/reconciler/preview-queue.ts";
import {
  PreviewConflictError,
  type PreviewRecord,
  type StoredPreview,
} from "../../../src/state/preview-store.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");

function record(pull: number, fields: Partial<PreviewRecord> = {}): PreviewRecord {
  return {
    key: `acme/shop#${pull}:dev`,
    repository: { owner: "acme", repo: "shop", id: 1 },
    installation: 7,
    pull,
    from: "dev",
    namespace: `shop-pr-${pull}`,
    head: { branch: `feature-${pull}`, sha: "a".repeat(40) },
    phase: "queued",
    requestedAt: new Date(NOW - 60_000 + pull).toISOString(),
    lastMovedAt: new Date(NOW).toISOString(),
    attempts: 0,
    ...fields,
  };
}

/** Preview records with resourceVersions: a put names the version it read, or fails as a 409 does. */
class Records implements AdmissionRecords {
  private version = 0;
  readonly map = new Map<string, StoredPreview>();
  /** Awaited after each list has read the records (a test holds one decider there). */
  afterList: () => Promise<void> = async () => undefined;

  async get(key: string) {
    return this.map.get(key);
  }
  async list() {
    const all = [...this.map.values()];
    await this.afterList();
    return all;
  }
  async put(r: PreviewRecord, resourceVersion?: string) {
    const now = this.map.get(r.key);
    if (now ? now.resourceVersion !== resourceVersion : resourceVersion !== undefined)
      throw new PreviewConflictError(r.key);
    const stored = { record: structuredClone(r), resourceVersion: String(++this.version) };
    this.map.set(r.key, stored);
    return stored;
  }
}

/** One installation's ticket, rewritten only as read. */
class Tickets implements AdmissionTickets {
  version?: number;
  commits = 0;
  fail?: Error;
  async read(installation: number): Promise<AdmissionTicket> {
    if (this.fail) throw this.fail;
    return {
      installation,
      ...(this.version === undefined ? {} : { resourceVersion: String(this.version) }),
      turns: this.commits,
    };
  }
  async commit(ticket: AdmissionTicket): Promise<boolean> {
    if (ticket.resourceVersion !== (this.version === undefined ? undefined : String(this.version)))
      return false;
    this.version = (this.version ?? 0) + 1;
    this.commits++;
    return true;
  }
}

const ONE: PreviewLimits = { maxPerRepository: 1, maxPerInstallation: 10 };
const byAdmit =
  (limits: PreviewLimits) => (all: Parameters<typeof admit>[0], c: Parameters<typeof admit>[1]) =>
    admit(all, c, limits);

describe("what a record counts for", () => {
  it("a queued record waits; once admitted it holds a place, as live and tearing-down ones do", () => {
    assert.equal(queuedOf(record(1)).phase, "queued");
    assert.equal(queuedOf(record(1, { admitted: new Date(NOW).toISOString() })).phase, "live");
    assert.equal(queuedOf(record(1, { phase: "live" })).phase, "live");
    assert.equal(queuedOf(record(1, { phase: "tearingDown" })).phase, "live");
    assert.equal(
      queuedOf(record(1, { repository: { owner: "Acme", repo: "Shop", id: 1 } })).repository,
      "acme/shop",
    );
  });

  it("the candidate of a decision is seen waiting, whatever an earlier decision left in its record", () => {
    const at = new Date(NOW).toISOString();
    const view = admissionView([record(1, { admitted: at }), record(2, { admitted: at })], "acme/shop#2:dev");
    assert.deepEqual(
      view.map((p) => [p.key, p.phase]),
      [
        ["acme/shop#1:dev", "live"],
        ["acme/shop#2:dev", "queued"],
      ],
    );
  });

  it("a claim keeps the record's token, counts one more launch and says when; giving back keeps both", () => {
    const first = claimed(record(1), NOW);
    assert.equal(first.launches, 1);
    assert.equal(first.admitted, new Date(NOW).toISOString());
    assert.match(first.claim ?? "", /^[\w-]{32}$/);
    const again = claimed(unadmitted(first), NOW + 1000);
    assert.equal(again.claim, first.claim);
    assert.equal(again.launches, 2);
    assert.equal(unadmitted(again).admitted, undefined);
    assert.equal(unadmitted(again).launches, 2);
  });
});

describe("startUnderWay", () => {
  const at = (ms: number) => record(1, { admitted: new Date(ms).toISOString() });
  it("a claim younger than the bound is another start's, under way", () => {
    assert.equal(startUnderWay(at(NOW - 1000), NOW), true);
    assert.equal(startUnderWay(at(NOW - START_UNDER_WAY_MS + 1), NOW), true);
  });
  it("an older one died with its replica; an unclaimed, live or unreadable one is no start under way", () => {
    assert.equal(startUnderWay(at(NOW - START_UNDER_WAY_MS), NOW), false);
    assert.equal(startUnderWay(record(1), NOW), false);
    assert.equal(startUnderWay({ ...at(NOW), phase: "live" }, NOW), false);
    assert.equal(startUnderWay(record(1, { admitted: "soon" }), NOW), false);
  });
});

describe("admitPreview", () => {
  it("starts a preview with room: its claim is written, then the ticket", async () => {
    const records = new Records();
    const tickets = new Tickets();
    await records.put(record(1));
    const out = await admitPreview(records, tickets, "acme/shop#1:dev", byAdmit(ONE), () => NOW);
    assert.equal(out.kind, "start");
    assert.equal(out.kind === "start" && out.stored.record.admitted, new Date(NOW).toISOString());
    assert.equal(records.map.get("acme/shop#1:dev")?.record.launches, 1);
    assert.equal(tickets.commits, 1);
  });

  it("queues one the limits leave no place, writing nothing", async () => {
    const records = new Records();
    const tickets = new Tickets();
    await records.put(record(1, { phase: "live" }));
    const { resourceVersion } = await records.put(record(2));
    const out = await admitPreview(records, tickets, "acme/shop#2:dev", byAdmit(ONE), () => NOW);
    assert.deepEqual(out.kind === "queued" && [out.position, out.reason, out.stored.resourceVersion], [
      1,
      "this repository has 1 live preview(s), its limit is 1",
      resourceVersion,
    ]);
    assert.equal(tickets.commits, 0);
  });

  /**
   * Replica A decides for #2 and has read the records (only #2's) when #1 (asked for earlier, by
   * another replica's clock) is written and decided on replica B, before A writes anything: the
   * worst moment. Without the ticket both would start (A saw no one; B saw #2 behind it, waiting).
   */
  const race = async (
    records: Records,
    tickets: Tickets,
    a: PreviewRecord,
    b: PreviewRecord,
    limits: PreviewLimits,
  ) => {
    await records.put(a);
    let listed!: () => void;
    const aListed = new Promise<void>((r) => {
      listed = r;
    });
    let go!: () => void;
    const goOn = new Promise<void>((r) => {
      go = r;
    });
    records.afterList = async () => {
      records.afterList = async () => undefined;
      listed();
      await goOn;
    };
    const first = admitPreview(records, tickets, a.key, byAdmit(limits), () => NOW);
    await aListed;
    await records.put(b);
    const second = await admitPreview(records, tickets, b.key, byAdmit(limits), () => NOW);
    go();
    return [await first, second] as const;
  };

  it("two replicas deciding at the same moment for the last place: one starts, the other is queued and holds no place", async () => {
    const records = new Records();
    const tickets = new Tickets();
    const [a, b] = await race(records, tickets, record(2), record(1), ONE);
    assert.deepEqual([a.kind, b.kind], ["queued", "start"]);
    assert.equal(a.kind === "queued" && a.reason, "this repository has 1 live preview(s), its limit is 1");
    const admitted = [...records.map.values()].filter((s) => queuedOf(s.record).phase === "live");
    assert.deepEqual(
      admitted.map((s) => s.record.key),
      ["acme/shop#1:dev"],
      "one place taken",
    );
    assert.equal(records.map.get("acme/shop#2:dev")?.record.admitted, undefined, "the other holds none");
    assert.equal(tickets.commits, 1);
  });

  it("the per-installation limit the same way, across repositories", async () => {
    const records = new Records();
    const tickets = new Tickets();
    const cart = record(1, { repository: { owner: "acme", repo: "cart", id: 2 }, key: "acme/cart#1:dev" });
    const limits = { maxPerRepository: 5, maxPerInstallation: 1 };
    const [a, b] = await race(records, tickets, record(2), cart, limits);
    assert.deepEqual([a.kind, b.kind], ["queued", "start"]);
    assert.equal(a.kind === "queued" && a.reason, "this installation has 1 live preview(s), its limit is 1");
  });

  it("with room for both, the one that lost the turn decides again and starts too", async () => {
    const records = new Records();
    const tickets = new Tickets();
    const limits = { maxPerRepository: 2, maxPerInstallation: 2 };
    const outs = await race(records, tickets, record(2), record(1), limits);
    assert.deepEqual(
      outs.map((o) => o.kind),
      ["start", "start"],
    );
    assert.equal(tickets.commits, 2);
    assert.equal(records.map.get("acme/shop#2:dev")?.record.launches, 2, "claimed again after the lost turn");
  });

  it("leaves alone a start another replica claimed just now; decides again one claimed long ago", async () => {
    const records = new Records();
    const tickets = new Tickets();
    await records.put(record(1, { phase: "live" }));
    const recent = await records.put(
      record(2, { admitted: new Date(NOW - 1000).toISOString(), launches: 1 }),
    );
    let out = await admitPreview(records, tickets, "acme/shop#2:dev", byAdmit(ONE), () => NOW);
    assert.equal(out.kind, "left");
    assert.equal(records.map.get("acme/shop#2:dev")?.resourceVersion, recent.resourceVersion, "untouched");
    // Long after, no start made it live: its place is given back, as the limits now have none.
    out = await admitPreview(
      records,
      tickets,
      "acme/shop#2:dev",
      byAdmit(ONE),
      () => NOW + START_UNDER_WAY_MS,
    );
    assert.equal(out.kind, "queued");
    assert.equal(records.map.get("acme/shop#2:dev")?.record.admitted, undefined);
    assert.equal(records.map.get("acme/shop#2:dev")?.record.launches, 1);
  });

  it("an API error leaves it queued, holding no place; so do turns lost every time", async () => {
    const records = new Records();
    const tickets = new Tickets();
    const before = await records.put(record(1));
    tickets.fail = new Error("the API server is down");
    await assert.rejects(
      admitPreview(records, tickets, "acme/shop#1:dev", byAdmit(ONE), () => NOW),
      /down/,
    );
    assert.equal(records.map.get("acme/shop#1:dev")?.resourceVersion, before.resourceVersion);

    // The ticket's rewrite fails (not a conflict): the claim written before it is given back.
    tickets.fail = undefined;
    tickets.commit = async () => {
      throw new Error("the API server timed out");
    };
    await assert.rejects(
      admitPreview(records, tickets, "acme/shop#1:dev", byAdmit(ONE), () => NOW),
      /timed out/,
    );
    assert.equal(records.map.get("acme/shop#1:dev")?.record.admitted, undefined, "no place held");
    assert.equal(records.map.get("acme/shop#1:dev")?.record.launches, 1);

    tickets.commit = async () => false;
    await assert.rejects(
      admitPreview(records, tickets, "acme/shop#1:dev", byAdmit(ONE), () => NOW),
      /lost its turn 8 times in a row .* it stays queued/,
    );
    const after = records.map.get("acme/shop#1:dev")?.record;
    assert.equal(after?.phase, "queued");
    assert.equal(after?.admitted, undefined, "no place held");
  });

  it("leaves a preview that is no longer queued, or that another start claimed first", async () => {
    const records = new Records();
    const tickets = new Tickets();
    await records.put(record(1, { phase: "live" }));
    assert.equal((await admitPreview(records, tickets, "acme/shop#1:dev", byAdmit(ONE))).kind, "left");
    assert.equal((await admitPreview(records, tickets, "acme/shop#9:dev", byAdmit(ONE))).kind, "left");
    // Another start writes the record between this decision's read and its claim.
    await records.put(record(2));
    const list = records.list.bind(records);
    records.list = async () => {
      const all = await list();
      const now = records.map.get("acme/shop#2:dev") as StoredPreview;
      await records.put(claimed(now.record, NOW), now.resourceVersion);
      records.list = list;
      return all;
    };
    const room = { maxPerRepository: 5, maxPerInstallation: 5 };
    assert.equal(
      (await admitPreview(records, tickets, "acme/shop#2:dev", byAdmit(room), () => NOW)).kind,
      "left",
    );
    assert.equal(tickets.commits, 0);
  });
});
