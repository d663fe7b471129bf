import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  coAuthorsOf,
  contributionOf,
  contributorsOf,
  type GitHubUser,
  type Range,
  type RangeCommit,
  unclaimedAddresses,
  unknownPeople,
} from "../../../src/github/contributors.ts";

const alice: GitHubUser = { id: 11, login: "alice" };
const bob: GitHubUser = { id: 22, login: "bob" };
const carol: GitHubUser = { id: 33, login: "carol" };
const dave: GitHubUser = { id: 44, login: "dave" };
const webFlow: GitHubUser = { id: 19864447, login: "web-flow" };

const sha = (c: string) => c.repeat(40);
const commit = (
  c: string,
  author: GitHubUser | null,
  committer: GitHubUser | null,
  emails = {},
): RangeCommit => ({
  sha: sha(c),
  author,
  committer,
  ...emails,
});

// Alice merges a prod change (#1), Bob merges a docs change (#2): both are in the range.
const twoMerges: Range = {
  base: sha("0"),
  head: sha("b"),
  commits: [commit("a", alice, webFlow), commit("b", bob, webFlow)],
  pulls: [
    { number: 1, user: alice, mergedBy: alice, commits: [sha("a")] },
    { number: 2, user: bob, mergedBy: bob, commits: [sha("b")] },
  ],
};

// Dave's PR, into which Bob pushed a commit; Carol merged it.
const pushedInto: Range = {
  base: sha("0"),
  head: sha("e"),
  commits: [commit("d", dave, dave), commit("c", bob, bob), commit("e", dave, webFlow)],
  pulls: [{ number: 3, user: dave, mergedBy: carol, commits: [sha("d"), sha("c"), sha("e")] }],
};

describe("contributors of a range", () => {
  const cases: Array<{
    name: string;
    range: Range;
    named?: Parameters<typeof contributorsOf>[1];
    who: GitHubUser;
    want: string[] | undefined;
  }> = [
    {
      name: "the author of another merge in the range",
      range: twoMerges,
      who: alice,
      want: ["authored aaaaaaa", "opened #1", "merged #1"],
    },
    {
      name: "the author of the newest merge",
      range: twoMerges,
      who: bob,
      want: ["authored bbbbbbb", "opened #2", "merged #2"],
    },
    { name: "someone who did nothing in the range", range: twoMerges, who: carol, want: undefined },
    {
      name: "a colleague who pushed into someone else's PR",
      range: pushedInto,
      who: bob,
      want: ["authored ccccccc", "committed ccccccc"],
    },
    { name: "whoever merged a PR of the range", range: pushedInto, who: carol, want: ["merged #3"] },
    { name: "GitHub's own committer is nobody", range: twoMerges, who: webFlow, want: undefined },
    {
      name: "the same id under a new login",
      range: twoMerges,
      who: { id: 11, login: "alice-renamed" },
      want: ["authored aaaaaaa", "opened #1", "merged #1"],
    },
    {
      name: "a login reused by someone else (another id)",
      range: twoMerges,
      who: { id: 99, login: "alice" },
      want: undefined,
    },
    {
      name: "the pusher, known by login only",
      range: { head: sha("f"), commits: [commit("f", carol, carol)], pulls: [] },
      named: [{ login: "Dave", role: "pushed" }],
      who: dave,
      want: ["pushed fffffff"],
    },
    {
      name: "whoever requested the sync",
      range: twoMerges,
      named: [{ login: "carol", role: "requested" }],
      who: carol,
      want: ["requested the sync of bbbbbbb"],
    },
    {
      name: "a named login that also authored is one person",
      range: twoMerges,
      named: [{ login: "bob", role: "pushed" }],
      who: bob,
      want: ["authored bbbbbbb", "opened #2", "merged #2", "pushed bbbbbbb"],
    },
    {
      name: "the pusher of a commit written in someone else's name (repository activity)",
      range: {
        ...twoMerges,
        commits: [commit("a", carol, carol)],
        pulls: [],
        pushes: [{ after: sha("a"), actor: alice, kind: "push" }],
      },
      who: alice,
      want: ["pushed aaaaaaa"],
    },
    {
      name: "a push outside the range does not count",
      range: { ...twoMerges, pushes: [{ after: sha("0"), actor: carol, kind: "push" }] },
      who: carol,
      want: undefined,
    },
    {
      name: "a merge through the merge queue names who queued it",
      range: { ...twoMerges, pushes: [{ after: sha("b"), actor: dave, kind: "merge_queue_merge" }] },
      who: dave,
      want: ["merged bbbbbbb"],
    },
    {
      name: "an unlinked author whose address is the approver's noreply address",
      range: {
        head: sha("9"),
        commits: [commit("9", null, null, { authorEmail: "33+Carol@users.noreply.github.com" })],
        pulls: [],
      },
      who: carol,
      want: ["authored 9999999"],
    },
    {
      name: "an unlinked author with any other address matches nobody",
      range: {
        head: sha("9"),
        commits: [commit("9", null, null, { authorEmail: "carol@corp.example" })],
        pulls: [],
      },
      who: carol,
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(contributionOf(contributorsOf(c.range, c.named), c.who), c.want);
    });
  }

  it("lists each person once, by id, with every reason", () => {
    const people = contributorsOf(pushedInto);
    assert.deepEqual(
      people.map((p) => [p.id, p.reasons]),
      [
        [44, ["authored ddddddd", "committed ddddddd", "authored eeeeeee", "opened #3"]],
        [22, ["authored ccccccc", "committed ccccccc"]],
        [33, ["merged #3"]],
      ],
    );
  });

  it("names the addresses no GitHub account claims", () => {
    const range: Range = {
      head: sha("9"),
      commits: [
        commit("9", null, alice, { authorEmail: "ghost@example.com", committerEmail: "a@example.com" }),
        commit("8", null, null, { authorEmail: "ghost@example.com", committerEmail: "x@example.com" }),
      ],
      pulls: [],
    };
    assert.deepEqual(unclaimedAddresses(range), ["ghost@example.com", "x@example.com"]);
  });
});

describe("contributors inside the pull requests of a range", () => {
  const squashed = (pull: Partial<Range["pulls"][number]>, coAuthors?: RangeCommit["coAuthors"]): Range => ({
    head: sha("e"),
    commits: [{ ...commit("e", dave, webFlow), ...(coAuthors ? { coAuthors } : {}) }],
    pulls: [{ number: 3, user: dave, mergedBy: carol, commits: [sha("e")], ...pull }],
  });
  const cases: Array<{ name: string; range: Range; who: GitHubUser; want: string[] | undefined }> = [
    {
      name: "a squash merge: the PR's own commits count",
      range: squashed({ ownCommits: [commit("d", dave, dave), commit("c", bob, bob)] }),
      who: bob,
      want: ["authored ccccccc in #3", "committed ccccccc in #3"],
    },
    {
      name: "whoever pushed to a PR's branch (its deletion does not count)",
      range: squashed({
        branchPushes: [
          { after: sha("0"), actor: alice, kind: "branch_deletion" },
          { after: sha("c"), actor: bob, kind: "force_push" },
        ],
      }),
      who: bob,
      want: ["pushed to #3"],
    },
    {
      name: "the deleter of a PR's branch contributed nothing",
      range: squashed({ branchPushes: [{ after: sha("0"), actor: alice, kind: "branch_deletion" }] }),
      who: alice,
      want: undefined,
    },
    {
      name: "a co-author by the noreply address with an id, under a new login",
      range: squashed({}, [{ name: "B", email: "22+bob@users.noreply.github.com" }]),
      who: { id: 22, login: "bob-renamed" },
      want: ["co-authored eeeeeee"],
    },
    {
      name: "a co-author by an address GitHub linked on another commit of the range",
      range: squashed({ ownCommits: [commit("f", bob, bob, { authorEmail: "bob@corp.example" })] }, [
        { name: "B", email: "Bob@Corp.example" },
      ]),
      who: bob,
      want: ["co-authored eeeeeee", "authored fffffff in #3", "committed fffffff in #3"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(contributionOf(contributorsOf(c.range), c.who), c.want);
    });
  }

  it("reads Co-authored-by trailers, whatever their case", () => {
    const message =
      "Fix (#3)\n\n* one\n\nco-authored-by: Bob B <22+bob@users.noreply.github.com>\nCo-Authored-By: <eve@x.example>\n";
    assert.deepEqual(coAuthorsOf(message), [
      { name: "Bob B", email: "22+bob@users.noreply.github.com" },
      { name: "", email: "eve@x.example" },
    ]);
    assert.deepEqual(coAuthorsOf("Mentions Co-authored-by: in prose"), []);
  });

  it("a bot or an unmatched co-author hides the person behind it; web-flow and the merge queue do not", () => {
    const bot: GitHubUser = { id: 41898282, login: "github-actions[bot]", type: "Bot" };
    const queue: GitHubUser = { id: 9919, login: "github-merge-queue[bot]", type: "Bot" };
    const range: Range = {
      head: sha("e"),
      commits: [
        { ...commit("e", bot, webFlow), coAuthors: [{ name: "E", email: "eve@x.example" }] },
        commit("f", alice, queue),
      ],
      pulls: [],
    };
    assert.deepEqual(unknownPeople(contributorsOf(range)), [
      "@github-actions[bot] (a bot: it acts for whoever triggered it) authored eeeeeee",
      "the co-author <eve@x.example>, whom no GitHub account is tied to, co-authored eeeeeee",
    ]);
    assert.deepEqual(unknownPeople(contributorsOf(twoMerges)), []);
  });

  it("a push GitHub names no account for (a deleted account, a deploy key) hides the person behind it, like a bot", () => {
    const range: Range = {
      ...twoMerges,
      pushes: [{ after: sha("a"), before: sha("0"), actor: null, kind: "push" }],
      pulls: [
        ...twoMerges.pulls,
        {
          number: 3,
          user: carol,
          mergedBy: carol,
          commits: [sha("b")],
          branchPushes: [{ after: sha("c"), actor: null, kind: "push" }],
        },
      ],
    };
    assert.deepEqual(unknownPeople(contributorsOf(range)), [
      "someone GitHub names no account for (a deleted account, or a deploy key) pushed to #3, pushed aaaaaaa",
    ]);
    assert.equal(contributionOf(contributorsOf(range), dave), undefined, "and it is nobody's contribution");
  });

  it("a bot listed in approval.trustedBots hides nobody (whatever the case); any other still does", () => {
    const dependabot: GitHubUser = { id: 49699333, login: "dependabot[bot]", type: "Bot" };
    const renovate: GitHubUser = { id: 29139614, login: "renovate[bot]", type: "Bot" };
    const range: Range = {
      head: sha("e"),
      commits: [commit("e", dependabot, webFlow), commit("f", renovate, webFlow)],
      pulls: [],
    };
    const people = contributorsOf(range);
    assert.deepEqual(unknownPeople(people, ["Dependabot[bot]"]), [
      "@renovate[bot] (a bot: it acts for whoever triggered it) authored fffffff",
    ]);
    assert.equal(unknownPeople(people).length, 2);
  });
});

describe("a co-author whose address a commit of the range shows unclaimed", () => {
  it("is that address, as the commit's author is, and hides nobody", () => {
    const range: Range = {
      head: sha("e"),
      commits: [{ ...commit("e", dave, webFlow), coAuthors: [{ name: "X", email: "x@home.example" }] }],
      pulls: [
        {
          number: 3,
          user: dave,
          mergedBy: carol,
          commits: [sha("e")],
          ownCommits: [commit("c", null, null, { authorEmail: "X@home.example" })],
        },
      ],
    };
    const people = contributorsOf(range);
    assert.deepEqual(unknownPeople(people), []);
    assert.deepEqual(
      people.filter((p) => p.email !== undefined).map((p) => [p.email, p.reasons]),
      [["x@home.example", ["co-authored eeeeeee", "authored ccccccc in #3"]]],
    );
  });
});
