import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { diffCommand } from "../../../src/cli/commands/diff.ts";
import { EXIT } from "../../../src/cli/io.ts";
import { FIXTURES, fixturePath } from "./fixtures.ts";

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await diffCommand(argv, {
    out: (t) => (out += t.endsWith("\n") ? t : `${t}\n`),
    err: (t) => (err += t.endsWith("\n") ? t : `${t}\n`),
    isTTY: false,
  });
  return { code, out, err };
}

const f = fixturePath;
const expected = (name: string) => readFileSync(join(FIXTURES, "expected", name), "utf8");

interface Case {
  name: string;
  argv: string[];
  code: number;
  out?: string | RegExp;
  err?: RegExp;
  /** Text that must appear nowhere in the output. */
  never?: string[];
}

/** Desired vs a live fixture, with the ignore rules and trusted managers of `env` in syncward.yml. */
const againstEnv = (live: string, env: string) => [
  "--desired",
  f("deployment.desired.yaml"),
  "--live",
  f(live),
  "--config",
  f("syncward.yml"),
  "--env",
  env,
];

const cases: Case[] = [
  {
    name: "in sync: exit 0, prints nothing",
    argv: ["--desired", f("deployment.desired.yaml"), "--live", f("deployment.live.yaml")],
    code: EXIT.ok,
    out: "",
  },
  {
    name: "different: exit 1, the diff on stdout, fields and their managers on stderr",
    argv: ["--desired", f("deployment.desired.yaml"), "--live", f("deployment.live-scaled.yaml")],
    code: EXIT.different,
    out: expected("deployment-scaled.diff"),
    err: /apps\/Deployment:shop\/web: 1 difference from Git\n {2}changed \/spec\/replicas \(live field manager: kube-controller-manager\)/,
  },
  {
    name: "the sidecar's manager is named",
    argv: [`--desired=${f("deployment.desired.yaml")}`, `--live=${f("deployment.live-edited.yaml")}`],
    code: EXIT.different,
    out: expected("deployment-edited.diff"),
    err: /extra \/spec\/template\/spec\/containers\/1 \(live field manager: kubectl-edit\)/,
  },
  {
    name: "--env prod ignores the HPA's replicas",
    argv: againstEnv("deployment.live-scaled.yaml", "prod"),
    code: EXIT.ok,
    out: "",
  },
  {
    name: "--env prod ignores the sidecar by jq",
    argv: againstEnv("deployment.live-edited.yaml", "prod"),
    code: EXIT.ok,
  },
  {
    name: "--env mesh trusts kubectl-edit (a bare name: replicas, labels, annotations): the sidecar it added is still drift",
    argv: againstEnv("deployment.live-edited.yaml", "mesh"),
    code: EXIT.different,
    err: /extra \/spec\/template\/spec\/containers\/1 \(live field manager: kubectl-edit\)/,
  },
  {
    name: "--config alone uses the first environment (dev ignores nothing)",
    argv: [
      "--desired",
      f("deployment.desired.yaml"),
      "--live",
      f("deployment.live-scaled.yaml"),
      "--config",
      f("syncward.yml"),
    ],
    code: EXIT.different,
  },
  {
    name: "an unknown environment is an error with a hint",
    argv: againstEnv("deployment.live.yaml", "prd"),
    code: EXIT.error,
    err: /unknown environment "prd" \(did you mean "prod"\?\)/,
  },
  {
    name: "a broken ignore rule is an error naming the expression",
    argv: againstEnv("deployment.live.yaml", "broken"),
    code: EXIT.error,
    err: /jqPathExpressions "\.spec\.template\.spec\.containers\[" does not parse/,
  },
  {
    name: "a config file that does not exist",
    argv: [
      "--desired",
      f("deployment.desired.yaml"),
      "--live",
      f("deployment.live.yaml"),
      "--config",
      f("nope.yml"),
    ],
    code: EXIT.error,
    err: /nope\.yml: file not found/,
  },
  {
    name: "Secrets: masked, never the value or its base64",
    argv: ["--desired", f("secret.desired.yaml"), "--live", f("secret.live-rotated.yaml")],
    code: EXIT.different,
    out: /^- {2}password: \+{12}\n\+ {2}password: \+{8}$/m,
    never: [
      "s3cr3t-Pa55word",
      "czNjcjN0LVBhNTV3b3Jk",
      "rotated-by-hand-42",
      "cm90YXRlZC1ieS1oYW5kLTQy",
      "YXBw",
    ],
  },
  {
    name: "a kubectl List with one item",
    argv: ["--desired", f("deployment.desired.yaml"), "--live", f("deployment.live-list.yaml")],
    code: EXIT.different,
    err: /changed \/spec\/replicas\n {2}missing \/spec\/template\/spec\/containers\/0\/ports\n/,
  },
  {
    name: "a multi-document desired file: the object matching live is picked",
    argv: ["--desired", f("app.desired.yaml"), "--live", f("service.live.yaml")],
    code: EXIT.ok,
  },
  {
    name: "unparsable YAML names the file and line",
    argv: ["--desired", f("malformed.yaml"), "--live", f("deployment.live.yaml")],
    code: EXIT.error,
    err: /malformed\.yaml:7:13: invalid YAML: Nested mappings are not allowed/,
  },
  {
    name: "a missing file",
    argv: ["--desired", f("deployment.desired.yaml"), "--live", f("missing.yaml")],
    code: EXIT.error,
    err: /missing\.yaml: file not found \(--live\)/,
  },
  {
    name: "objects that are not the same resource",
    argv: ["--desired", f("service.desired.yaml"), "--live", f("deployment.live.yaml")],
    code: EXIT.error,
    err: /not the same resource: .*service\.desired\.yaml holds \/Service:shop\/web, .*deployment\.live\.yaml holds apps\/Deployment:shop\/web/,
  },
  {
    name: "no object in the multi-document file matches",
    argv: ["--desired", f("app.desired.yaml"), "--live", f("configmap.live.yaml")],
    code: EXIT.error,
    err: /app\.desired\.yaml holds 2 objects and none is the same resource/,
  },
  {
    name: "not a Kubernetes object",
    argv: ["--desired", f("not-an-object.yaml"), "--live", f("deployment.live.yaml")],
    code: EXIT.error,
    err: /not-an-object\.yaml:1: not a Kubernetes object/,
  },
  {
    name: "a billion-laughs file is refused",
    argv: ["--desired", f("configmap.desired.yaml"), "--live", f("evil.yaml")],
    code: EXIT.error,
    err: /evil\.yaml: cannot be loaded: .*alias/i,
  },
  {
    name: "no arguments: usage",
    argv: [],
    code: EXIT.error,
    err: /--desired FILE is required\nusage: syncward diff/,
  },
  { name: "missing --live", argv: ["--desired", "x"], code: EXIT.error, err: /--live FILE is required/ },
  {
    name: "an option without its value",
    argv: ["--desired", "--live", "x"],
    code: EXIT.error,
    err: /--desired needs a value/,
  },
  {
    name: "an unknown option",
    argv: ["--desired", "a", "--live", "b", "--color"],
    code: EXIT.error,
    err: /unknown option --color/,
  },
  { name: "a stray argument", argv: ["a.yaml"], code: EXIT.error, err: /unexpected argument "a.yaml"/ },
  {
    name: "--help",
    argv: ["--help"],
    code: EXIT.ok,
    out: /^usage: syncward diff --desired FILE --live FILE/,
  },
];

describe("syncward diff", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const { code, out, err } = await run(...c.argv);
      assert.equal(code, c.code, `exit code (stderr: ${err})`);
      if (typeof c.out === "string") assert.equal(out, c.out);
      else if (c.out) assert.match(out, c.out);
      if (c.err) assert.match(err, c.err);
      for (const secret of c.never ?? []) assert.ok(!`${out}${err}`.includes(secret), `${secret} leaked`);
    });
  }

  it("colours the diff only on a terminal", async () => {
    let out = "";
    await diffCommand(
      ["--desired", f("deployment.desired.yaml"), "--live", f("deployment.live-scaled.yaml")],
      {
        out: (t) => (out += t),
        err: () => {},
        isTTY: true,
      },
    );
    const ESC = String.fromCharCode(27);
    if (process.env.NO_COLOR) assert.ok(!out.includes(ESC));
    else assert.ok(out.includes(`${ESC}[31m-  replicas: 5${ESC}[0m`), JSON.stringify(out));
  });
});
