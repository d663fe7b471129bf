import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type ParsedCommand, parseCommands } from "../../../src/github/commands.ts";

const ENVS = ["dev", "staging", "prod"];
const fixtures = join(import.meta.dirname, "../../fixtures/github/comments");

type Expected = ParsedCommand | { type: "invalid"; error: RegExp; suggestion?: string };

function check(body: string, expected: Expected[], envs = ENVS) {
  const got = parseCommands(body, envs);
  assert.equal(got.length, expected.length, `commands in ${JSON.stringify(body)}: ${JSON.stringify(got)}`);
  expected.forEach((want, i) => {
    const actual = got[i]!;
    if (want.type === "invalid" && want.error instanceof RegExp) {
      assert.equal(
        actual.type,
        "invalid",
        `${JSON.stringify(body)} should be invalid, got ${JSON.stringify(actual)}`,
      );
      if (actual.type !== "invalid") return;
      assert.match(actual.error, want.error);
      assert.equal(actual.suggestion, want.suggestion, `suggestion for ${JSON.stringify(body)}`);
      assert.equal(actual.line, body.trim());
    } else {
      assert.deepEqual(actual, want, `for ${JSON.stringify(body)}`);
    }
  });
}

const sync = (env?: string, prune = false, force = false): ParsedCommand =>
  env === undefined ? { type: "sync", prune, force } : { type: "sync", env, prune, force };

describe("parseCommands: each command", () => {
  const cases: Array<[string, Expected[]]> = [
    ["/sync", [sync()]],
    ["/sync prod", [sync("prod")]],
    ["/sync prod --prune", [sync("prod", true)]],
    ["/sync prod --prune --force", [sync("prod", true, true)]],
    [
      "/sync prod --prune --allow-empty --confirm-prune",
      [{ ...sync("prod", true), allowEmpty: true, confirmPrune: true } as ParsedCommand],
    ],
    ["/sync --force --prune prod", [sync("prod", true, true)]],
    ["/sync --prune", [sync(undefined, true)]],
    ["/SYNC PROD --PRUNE", [sync("prod", true)]],
    ["/Sync Staging", [sync("staging")]],
    ["   /sync dev   ", [sync("dev")]],
    ["/sync\tdev", [sync("dev")]],
    ['/sync "prod"', [sync("prod")]],
    ["/diff", [{ type: "diff" }]],
    ["/diff staging", [{ type: "diff", env: "staging" }]],
    ["/approve prod", [{ type: "approve", env: "prod" }]],
    ["/approve", [{ type: "approve" }]],
    ["/unfreeze prod", [{ type: "unfreeze", env: "prod" }]],
    ["/history", [{ type: "history" }]],
    ["/history dev", [{ type: "history", env: "dev" }]],
    ["/help", [{ type: "help" }]],
    ["/help sync", [{ type: "help" }]],
    ["/HELP", [{ type: "help" }]],
    ['/help --all "unterminated', [{ type: "help" }]],
  ];
  for (const [body, expected] of cases) it(JSON.stringify(body), () => check(body, expected));
});

describe("parseCommands: /freeze reasons", () => {
  const cases: Array<[string, Expected[]]> = [
    [
      '/freeze prod "release night" please',
      [{ type: "freeze", env: "prod", reason: "release night please" }],
    ],
    ["/freeze prod", [{ type: "freeze", env: "prod", reason: "" }]],
    ["/freeze", [{ type: "freeze", reason: "" }]],
    ["/freeze PROD db migration", [{ type: "freeze", env: "prod", reason: "db migration" }]],
    // Not an environment and not close to one: the whole thing is the reason.
    ["/freeze deploys are broken", [{ type: "freeze", reason: "deploys are broken" }]],
    ['/freeze "deploys are broken"', [{ type: "freeze", reason: "deploys are broken" }]],
    // Close to an environment: a typo, refused rather than freezing the default environment.
    [
      "/freeze prdo night",
      [{ type: "invalid", error: /unknown environment `prdo`/, suggestion: "/freeze prod night" }],
    ],
    // Quoted: meant as a reason.
    ["/freeze 'prdo' night", [{ type: "freeze", reason: "prdo night" }]],
    ["/freeze prod release\\ night", [{ type: "freeze", env: "prod", reason: "release night" }]],
    ['/freeze prod "say \\"hi\\" twice"', [{ type: "freeze", env: "prod", reason: 'say "hi" twice' }]],
    ["/freeze prod 'a \\ b'", [{ type: "freeze", env: "prod", reason: "a \\ b" }]],
    [
      "/freeze prod -- --force is text here",
      [{ type: "freeze", env: "prod", reason: "--force is text here" }],
    ],
    ['/freeze prod "--force"', [{ type: "freeze", env: "prod", reason: "--force" }]],
    ["/freeze prod 50% - 5 minutes", [{ type: "freeze", env: "prod", reason: "50% - 5 minutes" }]],
    [
      "/freeze prod --force",
      [{ type: "invalid", error: /unknown flag `--force` for `\/freeze` \(it takes no flags\)/ }],
    ],
    ['/freeze prod "release night', [{ type: "invalid", error: /unterminated double quote/ }]],
    ["/freeze prod it's late", [{ type: "invalid", error: /unterminated single quote/ }]],
  ];
  for (const [body, expected] of cases) it(JSON.stringify(body), () => check(body, expected));
});

describe("parseCommands: invalid commands and suggestions", () => {
  const cases: Array<[string, Expected[]]> = [
    ["/snyc", [{ type: "invalid", error: /unknown command `\/snyc`/, suggestion: "/sync" }]],
    ["/snyc prod --prune", [{ type: "invalid", error: /unknown command/, suggestion: "/sync prod --prune" }]],
    ["/SNYC prod", [{ type: "invalid", error: /unknown command `\/SNYC`/, suggestion: "/sync prod" }]],
    ["/aprove prod", [{ type: "invalid", error: /unknown command/, suggestion: "/approve prod" }]],
    ["/approved", [{ type: "invalid", error: /unknown command/, suggestion: "/approve" }]],
    ["/histroy", [{ type: "invalid", error: /unknown command/, suggestion: "/history" }]],
    ["/unfrezee prod", [{ type: "invalid", error: /unknown command/, suggestion: "/unfreeze prod" }]],
    ["/dif", [{ type: "invalid", error: /unknown command/, suggestion: "/diff" }]],
    ["/hlep", [{ type: "invalid", error: /unknown command/, suggestion: "/help" }]],
    [
      "/sync prdo",
      [
        {
          type: "invalid",
          error: /unknown environment `prdo` \(environments: `dev`, `staging`, `prod`\)/,
          suggestion: "/sync prod",
        },
      ],
    ],
    [
      "/sync stagign --prune",
      [{ type: "invalid", error: /unknown environment/, suggestion: "/sync staging --prune" }],
    ],
    ["/sync qa", [{ type: "invalid", error: /unknown environment `qa`/ }]],
    ['/sync "pr od"', [{ type: "invalid", error: /unknown environment `pr od`/, suggestion: "/sync prod" }]],
    ["/diff production", [{ type: "invalid", error: /unknown environment `production`/ }]],
    [
      "/sync prod --dry-run",
      [
        {
          type: "invalid",
          error:
            /unknown flag `--dry-run` for `\/sync` \(it accepts `--prune`, `--force`, `--allow-empty`, `--confirm-prune`\)/,
        },
      ],
    ],
    [
      "/sync prod --prun",
      [{ type: "invalid", error: /unknown flag `--prun`/, suggestion: "/sync prod --prune" }],
    ],
    ["/sync prod -p", [{ type: "invalid", error: /unknown flag `-p`/ }]],
    ["/sync prod --prune=false", [{ type: "invalid", error: /unknown flag `--prune=false`/ }]],
    [
      "/diff prod --prune",
      [{ type: "invalid", error: /unknown flag `--prune` for `\/diff` \(it takes no flags\)/ }],
    ],
    [
      "/sync prod staging",
      [{ type: "invalid", error: /takes at most one environment; unexpected `staging`/ }],
    ],
    ["/approve prod now please", [{ type: "invalid", error: /unexpected `now` `please`/ }]],
    ['/sync "prod', [{ type: "invalid", error: /unterminated double quote/ }]],
  ];
  for (const [body, expected] of cases) it(JSON.stringify(body), () => check(body, expected));

  it("keeps the original line on invalid commands", () => {
    const [c] = parseCommands("  /snyc prod  ", ENVS);
    assert.deepEqual(c, {
      type: "invalid",
      line: "/snyc prod",
      error: "unknown command `/snyc`",
      suggestion: "/sync prod",
    });
  });

  it("says when no environments are configured", () => {
    check("/sync prod", [{ type: "invalid", error: /no environments are configured/ }], []);
    check("/sync", [sync()], []);
  });
});

describe("parseCommands: what is not a command", () => {
  const ignored = [
    "",
    "LGTM",
    "please /sync prod",
    "`/sync prod`",
    "- /sync prod",
    "/usr/bin/env node",
    "/tmp",
    "/etc/hosts",
    "/home",
    "/sync,prod",
    "/sync/prod",
    "/sync:prod",
    "/shrug",
    "/me waves",
    "/lgtm",
    "/assign @alice",
    "/",
    "/123",
    "//sync",
    "/ sync",
    "> /sync prod",
    ">> /sync prod",
    "  > /sync prod",
  ];
  for (const body of ignored) it(JSON.stringify(body), () => check(body, []));
});

describe("parseCommands: comment structure", () => {
  const cases: Array<[string, Expected[]]> = [
    ["LGTM\n/sync dev\n/sync prod --prune", [sync("dev"), sync("prod", true)]],
    ["/sync dev\r\n/diff dev\r\n", [sync("dev"), { type: "diff", env: "dev" }]],
    ["```\n/sync prod\n```\n/diff", [{ type: "diff" }]],
    ["```bash\n/sync prod\n```\n/diff", [{ type: "diff" }]],
    ["~~~\n/sync prod\n~~~\n/diff", [{ type: "diff" }]],
    ["````\n```\n/sync prod\n```\n````\n/diff", [{ type: "diff" }]],
    ["~~~\n```\n/sync prod\n~~~\n/diff", [{ type: "diff" }]],
    ["   ```\n/sync prod\n   ```\n/diff", [{ type: "diff" }]],
    // An unclosed fence hides everything after it (as GitHub renders it).
    ["```\n/sync prod\n/diff", []],
    ["> /sync prod\n/diff prod", [{ type: "diff", env: "prod" }]],
    ["<!--\n/sync prod\n-->\n/help", [{ type: "help" }]],
    ["<!-- /sync prod -->\n/help", [{ type: "help" }]],
    ["text <!-- starts here\n/sync prod\nends --> here\n/help", [{ type: "help" }]],
    ["<!-- one --> <!-- two\n/sync prod\n-->\n/help", [{ type: "help" }]],
    ["/sync dev\n/sync dev", [sync("dev"), sync("dev")]],
  ];
  for (const [body, expected] of cases) it(JSON.stringify(body), () => check(body, expected));

  it("reads only the real commands of an evil PR body", () => {
    const body = readFileSync(join(fixtures, "evil.md"), "utf8");
    assert.deepEqual(parseCommands(body, ENVS), [
      { type: "diff", env: "staging" },
      {
        type: "invalid",
        line: "/snyc staging --prune",
        error: "unknown command `/snyc`",
        suggestion: "/sync staging --prune",
      },
      sync("prod", true, true),
      { type: "freeze", env: "prod", reason: "release night please" },
      { type: "history" },
    ]);
  });

  it("returns environments spelt as configured", () => {
    assert.deepEqual(parseCommands("/sync PROD-EU", ["prod-eu", "Prod-US"]), [sync("prod-eu")]);
    assert.deepEqual(parseCommands("/diff prod-us", ["prod-eu", "Prod-US"]), [
      { type: "diff", env: "Prod-US" },
    ]);
  });
});

describe("parseCommands: hostile input", () => {
  const cases: Array<[string, Expected[]]> = [
    // Lookalikes are prose: only an ASCII slash and ASCII letters make a command.
    ["\uff0fsync prod", []],
    ["/\u0455ync prod", []],
    ["/sy\u200dnc prod", []],
    // Unicode lower-casing maps the Kelvin sign onto `k`; environment names match ASCII only.
    [
      "/sync \u212Aube",
      [{ type: "invalid", error: /unknown environment `\u212Aube`/, suggestion: "/sync kube" }],
    ],
    [
      "/sync pr\u200bod",
      [{ type: "invalid", error: /invisible or direction-changing characters \(\\u\{200b\}\)/ }],
    ],
    ["/sync \u202edorp", [{ type: "invalid", error: /\\u\{202e\}/ }]],
    ["/help \u2066x", [{ type: "invalid", error: /\\u\{2066\}/ }]],
    ["/sync dev; rm -rf /", [{ type: "invalid", error: /unknown flag `-rf`/ }]],
    ["/sync $(id)", [{ type: "invalid", error: /unknown environment `\$\(id\)`/ }]],
    ["/sync `id`", [{ type: "invalid", error: /unknown environment `` `id` ``/ }]],
    [`/sync ${"x".repeat(600)}`, [{ type: "invalid", error: /606 characters long; at most 500/ }]],
    [`/freeze prod "${"r".repeat(201)}"`, [{ type: "invalid", error: /reason is 201 characters long/ }]],
  ];
  for (const [body, expected] of cases)
    it(JSON.stringify(body.slice(0, 60)), () => check(body, expected, [...ENVS, "kube"]));

  it("reads at most 10 commands: a comment with 11 is one invalid command", () => {
    const got = parseCommands(Array.from({ length: 11 }, () => "/diff dev").join("\n"), ENVS);
    assert.equal(got.length, 1);
    assert.match((got[0] as { error: string }).error, /11 commands in one comment; at most 10/);
    assert.equal(parseCommands(Array.from({ length: 10 }, () => "/diff dev").join("\n"), ENVS).length, 10);
  });

  it("keeps a tab as a separator", () => check("/sync\tdev", [sync("dev")]));
});

describe("/unapprove", () => {
  it("parses with or without an environment, like /approve", () => {
    assert.deepEqual(parseCommands("/unapprove prod", ["dev", "prod"]), [{ type: "unapprove", env: "prod" }]);
    assert.deepEqual(parseCommands("/unapprove", ["dev", "prod"]), [{ type: "unapprove" }]);
    assert.equal(parseCommands("/unaprove prod", ["prod"])[0]?.type, "invalid");
  });
});

describe("/preview", () => {
  const ENVS = ["dev", "prod"];
  const cases: Array<[string, ParsedCommand["type"], boolean | undefined]> = [
    ["/preview", "preview", false],
    ["/preview stop", "preview", true],
    ["/PREVIEW Stop", "preview", true],
    ["/preview dev", "invalid", undefined],
    ["/preview stop now", "invalid", undefined],
    ["/preveiw", "invalid", undefined],
  ];
  for (const [line, type, stop] of cases) {
    it(`${line} -> ${type}${stop === undefined ? "" : ` stop=${stop}`}`, () => {
      const [parsed] = parseCommands(line, ENVS);
      assert.equal(parsed?.type, type);
      if (parsed?.type === "preview") assert.equal(parsed.stop, stop);
    });
  }
});
