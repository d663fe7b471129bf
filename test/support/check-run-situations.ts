// The situations a check run or reply reports, built as the golden tests build them, so the
// golden files (test/unit/github/check-run-situations.test.ts) and the screenshots in docs/images
// (tools/screenshots.ts) show the same thing from the real renderers.
import { parseConfig } from "../../src/config/load.ts";
import type { RevertedChange } from "../../src/engine/revert/trail.ts";
import { configCheckReport } from "../../src/github/config-check.ts";
import { historyReply } from "../../src/github/history-reply.ts";
import {
  type CheckRunOutputInput,
  checkRunOutput,
  conclusionFor,
  prCommentBody,
} from "../../src/github/summary.ts";
import { envConfig, history, resource, resultOf, SHA, stateOf } from "./summary-fixtures.ts";

export const links = { repoUrl: "https://github.com/acme/shop", titles: { [SHA]: "web: bump to 1.29" } };
export const HEAD = "4f9c2e1a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e";
export const BASE = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807";

export function input(overrides: Partial<CheckRunOutputInput> = {}): CheckRunOutputInput {
  return {
    env: envConfig({ environmentUrl: "https://shop.example.com" }),
    state: stateOf(),
    repoBranch: "main",
    effectivePolicy: "Automated (Prune, SelfHeal)",
    links,
    revision: SHA,
    ...overrides,
  };
}

export const WEBHOOK = [
  'admission webhook "policy.acme.io" denied the request:',
  "- container web: image must come from registry.acme.io/",
  "- securityContext.runAsNonRoot must be true (see ```policy.md```)",
].join("\n");

export const INTRUSION: RevertedChange[] = [
  {
    object: "apps/Deployment:shop/web",
    path: "/spec/template/spec/containers/1",
    kind: "extra",
    manager: "kubectl-patch",
    operation: "Update",
    at: "2026-12-01T03:02:11Z",
    value: '{"name":"miner","image":"evil:1","securityContext":{"privileged":true}}',
    trusted: false,
    security: "new container, image evil:1, privileged",
  },
  {
    object: "apps/Deployment:shop/web",
    path: "/spec/template/spec/serviceAccountName",
    kind: "changed",
    manager: "kubectl-patch",
    operation: "Update",
    value: "cluster-admin|<b>@mallory</b>`",
    trusted: false,
    security: "ServiceAccount changed",
  },
  {
    object: "apps/Deployment:shop/web",
    path: "/spec/template/spec/volumes/3",
    kind: "extra",
    manager: "kubectl-patch",
    operation: "Update",
    value: '{"name":"root","hostPath":{"path":"/"}}',
    trusted: false,
    security: "hostPath volume",
  },
];

/** The check-run inputs, one per golden file (named as the file). */
export const CHECK_RUNS = {
  synced: () => input({ result: resultOf() }),
  failed: () => {
    const failed = Array.from({ length: 8 }, (_, i) =>
      resource({ name: `api-${i}`, status: "Failed", action: "failed", message: WEBHOOK, health: undefined }),
    );
    const result = resultOf({
      phase: "Failed",
      message: "8 of 9 objects failed",
      writes: 0,
      resources: [resultOf().resources[0]!, ...failed],
    });
    return input({
      result,
      state: stateOf({ lastSyncedRevision: BASE, syncStatus: "OutOfSync", history: history(2) }),
    });
  },
  intrusion: () => input({ result: resultOf({ writes: 1 }), reverted: INTRUSION }),
  approval: () =>
    input({
      env: envConfig({
        approval: {
          users: ["carol", "erin"],
          teams: ["acme/sre"],
          minimum: 2,
          allowAuthor: false,
          trustedBots: [],
        },
      }),
      state: stateOf({ syncStatus: "OutOfSync", lastSyncedRevision: BASE }),
      awaitingApproval: {
        revision: SHA,
        range: {
          base: BASE,
          commits: [{ sha: SHA, title: "web: bump to 1.29 | @everyone <b>", author: "bob" }],
          pulls: [{ number: 12, title: "Bump web", author: "bob" }],
        },
        gate: { approvers: ["carol"], needed: 2 },
      },
    }),
  preview: () =>
    input({
      result: resultOf({
        dryRun: true,
        revision: "7777777aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        writes: 0,
        resources: [
          resource({
            status: "OutOfSync",
            action: "configured",
            message: "deployment.apps/web configured (dry run)",
          }),
          resource({
            kind: "Secret",
            group: "",
            name: "db",
            status: "Skipped",
            action: "skipped",
            health: undefined,
            message: "secret/db: values are not compared in previews",
          }),
        ],
      }),
      diff: "--- live\n+++ git\n-  image: web:1.28\n+  image: web:1.29\n",
      notes: [":information_source: 1 object(s) would require pruning (prune is off)"],
      preview: { number: 12, headRef: "bump-web", headSha: HEAD, baseRef: "main", baseSha: BASE },
    }),
  "out-of-sync": () =>
    input({
      state: stateOf({ lastSyncedRevision: BASE, syncStatus: "OutOfSync" }),
      revision: HEAD,
      outOfSync: true,
      notes: ["spec.replicas differs from Git."],
    }),
} satisfies Record<string, () => CheckRunOutputInput>;

export type CheckRunName = keyof typeof CHECK_RUNS;

/** What GitHub shows for one situation: a check run's title and conclusion, or a comment. */
export interface Rendered {
  name: string;
  /** What it is, for a reader of the docs: "check run", "config check", "reply". */
  kind: "check run" | "config check" | "reply" | "comment";
  title?: string;
  conclusion?: string;
  /** The Markdown GitHub renders (a check run's summary, then its text). */
  markdown: string;
  /** Mentions written on purpose (approvers notified). */
  mentions: string[];
}

export function renderCheckRun(name: CheckRunName): Rendered {
  const given = CHECK_RUNS[name]();
  const out = checkRunOutput(given);
  const conclusion = given.preview
    ? "neutral"
    : conclusionFor(given.result, given.alert, given.awaitingApproval, given.reverted);
  return {
    name,
    kind: "check run",
    title: out.title,
    conclusion,
    markdown: `${out.summary}\n\n${out.text}`,
    mentions: name === "approval" ? ["@carol", "@erin", "@acme/sre"] : [],
  };
}

const GUARDED = `environments:
  - name: prod
    source: {path: overlays/prod}
    destination: {namespace: shop-prod}
    production: true
    approval: {users: [carol, erin], minimum: 2}
`;
const LOOSENED = `environments:
  - name: prod
    source: {path: overlays/prod}
    destination: {namespace: shop-prod}
    production: true
    approval: {users: [carol, erin], minimum: 1, allowAuthor: true}
`;

/** A pull request that lowers prod's approvals and lets authors approve their own changes. */
export function renderLoosenedConfigCheck(): Rendered {
  const report = configCheckReport(
    ".github/syncward.yml",
    parseConfig(GUARDED, ".github/syncward.yml"),
    parseConfig(LOOSENED, ".github/syncward.yml"),
    [],
    [],
  );
  return {
    name: "config-loosened",
    kind: "config check",
    title: report.title,
    conclusion: report.conclusion,
    markdown: report.summary,
    mentions: [],
  };
}

export function renderHistoryReply(): Rendered {
  return {
    name: "history-reply",
    kind: "reply",
    markdown: historyReply("prod", history(4), links),
    mentions: [],
  };
}

export function renderPrComment(): Rendered {
  return {
    name: "pr-comment",
    kind: "comment",
    markdown: prCommentBody(
      [
        {
          env: "prod",
          status: "waiting for approval",
          revision: SHA,
          checkUrl: "https://github.com/acme/shop/runs/62",
          note: "comment /approve prod to deploy (1 of 2 approvals; 1 more needed)",
          approvers: ["@erin"],
        },
      ],
      "syncward:summary",
      links,
    ),
    mentions: ["@erin"],
  };
}

/** Every situation, in the order the docs show them. */
export function allSituations(): Rendered[] {
  return [
    ...(Object.keys(CHECK_RUNS) as CheckRunName[]).map(renderCheckRun),
    renderLoosenedConfigCheck(),
    renderHistoryReply(),
    renderPrComment(),
  ];
}
