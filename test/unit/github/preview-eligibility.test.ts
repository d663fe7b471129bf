import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PreviewTemplate } from "../../../src/config/types.ts";
import {
  type PreviewEvent,
  type PreviewPullFacts,
  previewDecision,
} from "../../../src/github/preview-eligibility.ts";
import { previewTemplate } from "../../support/preview-template.ts";

const template = previewTemplate;
const pull = (fields: Partial<PreviewPullFacts> = {}): PreviewPullFacts => ({
  sameRepository: true,
  author: "dana",
  authorPermission: "write",
  pushers: [{ login: "dana", permission: "write" }],
  labels: [],
  live: false,
  ...fields,
});
const labeled: PreviewEvent = { kind: "labeled", label: "preview" };
const ask = (
  by = "maya",
  permission: "read" | "write" | "maintain" | "admin" = "maintain",
): PreviewEvent => ({
  kind: "command",
  stop: false,
  by,
  permission,
});
const stopAsk: PreviewEvent = { kind: "command", stop: true, by: "maya", permission: "write" };

describe("previewDecision", () => {
  const table: Array<[string, PreviewTemplate, PreviewEvent, PreviewPullFacts, string, RegExp?]> = [
    ["the label starts one", template(), labeled, pull(), "start"],
    ["another label does nothing", template(), { kind: "labeled", label: "bug" }, pull(), "none"],
    [
      "the label under trigger comment does nothing",
      template({ trigger: "comment" }),
      labeled,
      pull(),
      "none",
    ],
    ["/preview starts one whatever the trigger", template({ trigger: "comment" }), ask(), pull(), "start"],
    ["/preview on a live preview syncs it again", template(), ask(), pull({ live: true }), "resync"],
    [
      "removing the label stops it",
      template(),
      { kind: "unlabeled", label: "preview" },
      pull({ live: true }),
      "stop",
    ],
    ["/preview stop stops it", template(), stopAsk, pull({ live: true }), "stop"],
    ["/preview stop without a preview does nothing", template(), stopAsk, pull(), "none"],
    ["closing stops it", template(), { kind: "closed" }, pull({ live: true }), "stop"],
    [
      "trigger always: opening starts one",
      template({ trigger: "always" }),
      { kind: "opened" },
      pull(),
      "start",
    ],
    [
      "trigger label: opening with the label starts one",
      template(),
      { kind: "opened" },
      pull({ labels: ["preview"] }),
      "start",
    ],
    ["trigger label: opening without it does nothing", template(), { kind: "opened" }, pull(), "none"],
    [
      "a push moves a live preview",
      template({ trigger: "comment" }),
      { kind: "synchronize" },
      pull({ live: true }),
      "resync",
    ],
    [
      "a push without a preview under trigger comment does nothing",
      template({ trigger: "comment" }),
      { kind: "synchronize" },
      pull(),
      "none",
    ],
    [
      "a fork's label",
      template(),
      labeled,
      pull({ sameRepository: false }),
      "refuse",
      /forks never get a live preview/,
    ],
    [
      "a maintainer's /preview on a fork",
      template(),
      ask("maya", "admin"),
      pull({ sameRepository: false }),
      "refuse",
      /forks never/,
    ],
    [
      "an author without write",
      template(),
      labeled,
      pull({ authorPermission: "read" }),
      "refuse",
      /the author @dana has read access/,
    ],
    [
      "a pusher without write",
      template(),
      labeled,
      pull({
        pushers: [
          { login: "dana", permission: "write" },
          { login: "eve", permission: "triage" },
        ],
      }),
      "refuse",
      /pushed or written by @eve \(triage\)/,
    ],
    [
      "a commenter without the permission",
      template(),
      ask("eve", "read"),
      pull(),
      "refuse",
      /@eve has read access; \/preview needs write/,
    ],
    [
      "a commenter without it cannot stop one either",
      template(),
      { ...stopAsk, permission: "read" },
      pull({ live: true }),
      "refuse",
    ],
    [
      "a higher permission named by the template",
      template({ permission: "maintain" }),
      labeled,
      pull(),
      "refuse",
      /needs maintain/,
    ],
    [
      "a push by someone without write holds a live preview where it is",
      template(),
      { kind: "synchronize" },
      pull({ live: true, pushers: [{ login: "eve", permission: "read" }] }),
      "hold",
      /pushed or written by @eve \(read\)/,
    ],
    [
      "a later push by a writer does not let it follow while eve's commit is on the branch",
      template(),
      { kind: "synchronize" },
      pull({
        live: true,
        pushers: [
          { login: "dana", permission: "write" },
          { login: "eve", permission: "read" },
        ],
      }),
      "hold",
      /@eve \(read\)/,
    ],
    [
      "a held preview follows again once no one without write pushed what its head holds",
      template(),
      { kind: "synchronize" },
      pull({ live: true, pushers: [{ login: "dana", permission: "write" }] }),
      "resync",
    ],
  ];
  for (const [what, t, event, pr, action, reason] of table) {
    it(what, () => {
      const decision = previewDecision(t, event, pr);
      assert.equal(decision.action, action);
      if (reason) assert.match("reason" in decision ? (decision.reason ?? "") : "", reason);
    });
  }
});
