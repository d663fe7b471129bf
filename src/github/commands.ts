// The PR-comment command grammar: `/sync prod --prune`, `/freeze prod "release night"`...
// Pure: the handler decides who may run what and which environment is the default.
//
// Rules (see REFERENCE.md, "PR-command systems"):
// - One command per line. A command line is a line whose first non-space character is `/`,
//   followed by a word of letters and then a space or the end of the line (`^/[a-z]+`,
//   case-insensitive). Anything else (`/usr/bin/env`, `/tmp:`, `/sync,`) is prose, not a command.
// - Lines inside fenced code blocks (``` or ~~~), inside HTML comments (`<!-- -->`, e.g. PR
//   templates) and quoted lines (`>`, e.g. a reply quoting an earlier command) are ignored, so
//   quoting a command never runs it again.
// - Command and environment names are case-insensitive; environments come back spelt as configured.
// - Arguments split like a shell: 'single' and "double" quotes, backslash escapes, `--` ends the
//   flags. An unterminated quote makes the line invalid.
// - A word that is not a command is answered (invalid, with a suggestion) only when it is within
//   edit distance 2 of a command (`/snyc`, `/aprove`, `/histroy`); otherwise it is ignored, so
//   people can write paths and other slash-words in comments.
// - `suggestion` on an invalid command is the whole corrected line (`/sync prod --prune`), ready to
//   be shown as "did you mean ...?".
// - Only ASCII counts: `／sync` (a fullwidth slash), a Cyrillic `ѕync` or `/sy<ZWJ>nc` are prose, and
//   environment names match ASCII-case-insensitively only (the Kelvin sign is not a `k`). A command
//   line holding an invisible or direction-changing character (zero-width joiner, RTL override) is
//   invalid: what a reader sees would not be what runs.
// - Bounded: a command line of more than MAX_LINE_CHARS characters, a freeze reason of more than
//   MAX_REASON_CHARS, or more than MAX_COMMANDS commands in one comment are invalid.
// - Every piece of the comment quoted in an error is a code span (`codeSpan`): it cannot render as
//   markdown, HTML or a mention in the reply.
import { didYouMean } from "../config/did-you-mean.ts";
import { type RollbackTarget, rollbackTargetOf } from "../reconciler/pin.ts";
import { codeSpan, hasInvisible, showInvisible } from "./markdown.ts";

export type ParsedCommand =
  | {
      type: "sync";
      env?: string;
      prune: boolean;
      force: boolean;
      allowEmpty?: boolean;
      confirmPrune?: boolean;
    }
  | { type: "freeze"; env?: string; reason: string }
  | { type: "unfreeze"; env?: string }
  | { type: "approve"; env?: string }
  | { type: "unapprove"; env?: string }
  | { type: "diff"; env?: string }
  | { type: "history"; env?: string }
  | { type: "promote"; env?: string }
  | { type: "rollback"; env?: string; target?: RollbackTarget }
  | { type: "unpin"; env?: string }
  | { type: "preview"; stop: boolean }
  | { type: "help" }
  | { type: "invalid"; line: string; error: string; suggestion?: string };

export type CommandName = Exclude<ParsedCommand["type"], "invalid">;

/**
 * Every command, in the order `/help` lists them: what the parser accepts (an environment, flags,
 * a reason) and what help says of it. help.ts renders this table, so help cannot promise a flag
 * or an argument the parser refuses, nor leave out one it takes.
 */
export interface CommandSpec {
  /** Takes an environment name as its first argument. */
  env: boolean;
  /** Flags it accepts (without the leading `--`), each with what it does. */
  flags: Readonly<Record<string, string>>;
  /** A permission a flag needs beyond the command's own (comment-commands.ts checks it). */
  flagPermission?: Readonly<Record<string, "admin">>;
  /** Free text after the environment, named as help shows it. */
  text?: string;
  /** One optional word after the environment, named as help shows it. */
  argument?: string;
  does: string;
  /** The environment's `commands` permission it needs; absent: `who` says who may. */
  permission?: "sync" | "diff" | "freeze" | "unfreeze" | "history" | "rollback";
  who?: string;
}

export const COMMANDS: Readonly<Record<CommandName, CommandSpec>> = {
  sync: {
    env: true,
    flags: {
      prune: "delete live objects no longer in Git",
      force: "delete and re-create objects that cannot be patched, and sync even when frozen",
      "allow-empty": "let this sync prune every object when the render is empty",
      "confirm-prune": "prune objects marked `Prune=confirm` or `Delete=confirm`",
    },
    flagPermission: { force: "admin" },
    does: "Sync the environment now; an environment with an `approval` rule waits for an approval of the commit.",
    permission: "sync",
  },
  diff: {
    env: true,
    flags: {},
    does: "Show what a sync would change (Secret values are not compared), without changing anything.",
    permission: "diff",
  },
  approve: {
    env: true,
    flags: {},
    does: "Approve syncing this pull request's commit (or click **Approve** on the environment's check run). An approval is tied to that commit: a new push needs a new approval.",
  },
  unapprove: {
    env: true,
    flags: {},
    does: "Withdraw your approvals of the environment's revisions that are not deployed yet.",
    who: "whoever approved",
  },
  freeze: {
    env: true,
    flags: {},
    text: "reason",
    does: "Stop all syncs of the environment, automated and manual, until it is unfrozen.",
    permission: "freeze",
  },
  unfreeze: { env: true, flags: {}, does: "Lift a freeze.", permission: "unfreeze" },
  history: {
    env: true,
    flags: {},
    does: "List the last sync operations: revision, trigger, who, result.",
    permission: "history",
  },
  promote: {
    env: true,
    flags: {},
    does: "Deploy to the environment the commit its upstream (`promotion.after`) runs now, once the upstream has kept it Healthy for `promotion.healthyFor`; an environment with an `approval` rule waits for an approval of it.",
    permission: "sync",
  },
  rollback: {
    env: true,
    flags: {},
    argument: "history id or commit",
    does: "Re-deploy an earlier revision the environment ran successfully (a history id from `/history`, or a commit of at least 7 hex digits; without either, the newest one before the current revision) and pin it there: automated syncs, promotions and retries hold at it, self-heal keeps defending it, until `/unpin`. It needs no fresh approval: it ran here before.",
    permission: "rollback",
  },
  unpin: {
    env: true,
    flags: {},
    does: "Remove a rollback's pin: the next sync takes the branch head again (a gated environment waits for its approval).",
    permission: "rollback",
  },
  preview: {
    env: false,
    flags: {},
    text: "stop",
    does: "Start a live preview environment of this pull request (its `previewEnvironments` template), or end it with `/preview stop`. Never for a pull request from a fork.",
    who: "the template's `permission` (default **write**), for whoever asks, the author and everyone who pushed to the branch",
  },
  help: { env: false, flags: {}, does: "Show this help.", who: "anyone" },
};

/** Every command, in the order help lists them. */
export const COMMAND_NAMES = Object.keys(COMMANDS) as readonly CommandName[];

/**
 * The environment a command without one applies to: the only one configured; with several,
 * none (the reply asks "Which environment?" and nothing runs).
 */
export function defaultEnvironment(environments: readonly string[]): string | undefined {
  return environments.length === 1 ? environments[0] : undefined;
}

/** How far (insertions, deletions, substitutions, swaps) a slash-word may be from a command to be answered. */
const MAX_COMMAND_DISTANCE = 2;

/** Longest command line read; longer ones are refused, never echoed whole. */
export const MAX_LINE_CHARS = 500;
/** Longest `/freeze` reason (it is kept in the environment's state and shown in check runs). */
export const MAX_REASON_CHARS = 200;
/** Most commands one comment may hold; a comment with more runs none. */
export const MAX_COMMANDS = 10;

interface Token {
  value: string;
  /** Any part of it was quoted or escaped: `"--prune"` is an argument, not a flag. */
  quoted: boolean;
  /** Offsets in the (trimmed) line, to rebuild a corrected line for suggestions. */
  start: number;
  end: number;
}

class TokenizeError extends Error {}

/** Parses every command in a comment body, in order. Non-command lines are skipped. */
export function parseCommands(body: string, environments: string[]): ParsedCommand[] {
  const commands: ParsedCommand[] = [];
  for (const line of commandLines(body)) {
    const parsed = parseLine(line, environments);
    if (parsed !== undefined) commands.push(parsed);
  }
  if (commands.length > MAX_COMMANDS) {
    const first = commands[0] as ParsedCommand & { line?: string };
    return [
      invalid(
        first.line ?? "",
        `${commands.length} commands in one comment; at most ${MAX_COMMANDS} are read, so none of them ran`,
      ),
    ];
  }
  return commands;
}

/** The trimmed lines that may hold commands: outside code fences, HTML comments and quotes. */
function commandLines(body: string): string[] {
  const out: string[] = [];
  let fence: { char: string; length: number } | undefined;
  let inComment = false;
  for (const raw of body.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    if (fence !== undefined) {
      const close = /^(`{3,}|~{3,})$/.exec(line);
      if (close?.[1]?.[0] === fence.char && close[1].length >= fence.length) fence = undefined;
      continue;
    }
    // Any indentation counts (fences inside list items are indented): ignoring too much is safer
    // than running a command someone only showed as an example.
    const open = inComment ? null : /^(`{3,}|~{3,})/.exec(line);
    if (open?.[1] !== undefined) {
      fence = { char: open[1][0]!, length: open[1].length };
      continue;
    }
    const startsHidden = inComment;
    inComment = commentOpenAfter(line, inComment);
    // Quoted lines start with `>` and are skipped here like any other prose.
    if (!startsHidden && line.startsWith("/")) out.push(line);
  }
  return out;
}

/** Whether an HTML comment is still open at the end of `line`, given whether one was open at its start. */
function commentOpenAfter(line: string, open: boolean): boolean {
  let pos = 0;
  for (;;) {
    const next = line.indexOf(open ? "-->" : "<!--", pos);
    if (next < 0) return open;
    pos = next + (open ? 3 : 4);
    open = !open;
  }
}

function parseLine(line: string, environments: string[]): ParsedCommand | undefined {
  const head = /^\/([A-Za-z]+)(?=\s|$)/.exec(line);
  if (head === null) return undefined;
  const word = head[1]!.toLowerCase();
  const name = COMMAND_NAMES.find((c) => c === word);
  if (name === undefined) {
    const near = word.length > 12 ? undefined : nearestCommand(word);
    if (near === undefined) return undefined;
    if (line.length > MAX_LINE_CHARS) return tooLong(line);
    return invalid(
      line,
      `unknown command ${codeSpan(`/${head[1]}`)}`,
      `/${near}${line.slice(head[0].length)}`,
    );
  }
  if (line.length > MAX_LINE_CHARS) return tooLong(line);
  if (hasInvisible(line)) {
    return invalid(
      line,
      `the line holds invisible or direction-changing characters (${invisibleList(line)}), so what it shows is not what would run; retype it`,
    );
  }

  // `/help sync`, `/help --all`: still a request for help; the arguments do not matter.
  if (name === "help") return { type: "help" };

  let tokens: Token[];
  try {
    tokens = tokenize(line, head[0].length);
  } catch (err) {
    if (err instanceof TokenizeError) return invalid(line, err.message);
    throw err;
  }

  const flags = new Set<string>();
  const args: Token[] = [];
  let flagsEnded = false;
  for (const token of tokens) {
    if (!flagsEnded && !token.quoted && token.value === "--") {
      flagsEnded = true;
      continue;
    }
    if (!flagsEnded && !token.quoted && /^(--.|-[A-Za-z])/.test(token.value)) {
      const flag = token.value.replace(/^--?/, "").toLowerCase();
      const known = Object.keys(COMMANDS[name].flags);
      if (!token.value.startsWith("--") || !known.includes(flag)) {
        const near = didYouMean(flag, known);
        const hint = near === undefined ? undefined : replaceToken(line, token, `--${near}`);
        const accepted =
          known.length === 0
            ? "it takes no flags"
            : `it accepts ${known.map((f) => `\`--${f}\``).join(", ")}`;
        return invalid(line, `unknown flag ${codeSpan(token.value)} for \`/${name}\` (${accepted})`, hint);
      }
      flags.add(flag);
      continue;
    }
    args.push(token);
  }

  switch (name) {
    case "preview": {
      const words = args.map((t) => t.value.toLowerCase());
      if (words.length === 0) return { type: "preview", stop: false };
      if (words.length === 1 && words[0] === "stop") return { type: "preview", stop: true };
      return invalid(line, "`/preview` takes nothing, or `stop`", "/preview stop");
    }
    case "rollback":
      return rollbackCommand(line, args, environments);
    case "freeze": {
      const first = args[0];
      const env = first === undefined ? undefined : matchEnvironment(first, environments);
      if (first !== undefined && env === undefined && !first.quoted) {
        // `/freeze prdo night` is a typo, `/freeze "deploys are broken"` is a reason.
        const near = didYouMean(first.value, environments);
        if (near !== undefined) return unknownEnvironment(line, first, environments);
      }
      const reasonTokens = env === undefined ? args : args.slice(1);
      const reason = reasonTokens
        .map((t) => t.value.trim())
        .filter((v) => v !== "")
        .join(" ");
      if (reason.length > MAX_REASON_CHARS) {
        return invalid(
          line,
          `the reason is ${reason.length} characters long; at most ${MAX_REASON_CHARS} are kept`,
        );
      }
      return env === undefined ? { type: "freeze", reason } : { type: "freeze", env, reason };
    }
    default: {
      if (args.length > 1) {
        const extra = args.slice(1).map((t) => t.value);
        return invalid(
          line,
          `\`/${name}\` takes at most one environment; unexpected ${extra
            .slice(0, 5)
            .map((v) => codeSpan(v))
            .join(" ")}${extra.length > 5 ? " …" : ""}`,
        );
      }
      const first = args[0];
      let env: string | undefined;
      if (first !== undefined) {
        env = matchEnvironment(first, environments);
        if (env === undefined) return unknownEnvironment(line, first, environments);
      }
      if (name === "sync") {
        const sync = {
          type: "sync" as const,
          prune: flags.has("prune"),
          force: flags.has("force"),
          ...(flags.has("allow-empty") ? { allowEmpty: true } : {}),
          ...(flags.has("confirm-prune") ? { confirmPrune: true } : {}),
        };
        return env === undefined ? sync : { ...sync, env };
      }
      return env === undefined ? { type: name } : { type: name, env };
    }
  }
}

/**
 * `/rollback [env] [id|commit]`: an environment's name comes first (a name wins over a history id
 * or commit spelt the same); a lone id or commit applies to the default environment.
 */
function rollbackCommand(line: string, args: Token[], environments: string[]): ParsedCommand {
  if (args.length > 2)
    return invalid(line, "`/rollback` takes an environment and at most one history id or commit");
  const [first, second] = args;
  const env = first === undefined ? undefined : matchEnvironment(first, environments);
  const targetToken = env === undefined ? first : second;
  if (first !== undefined && env === undefined && (second !== undefined || !looksLikeTarget(first.value)))
    return unknownEnvironment(line, first, environments);
  const withEnv = env === undefined ? {} : { env };
  if (targetToken === undefined) return { type: "rollback", ...withEnv };
  const target = rollbackTargetOf(targetToken.value);
  if ("error" in target) return invalid(line, `${codeSpan(targetToken.value)} ${target.error}`);
  return { type: "rollback", ...withEnv, target };
}

/** A word that reads as a history id or a commit rather than a mistyped environment. */
function looksLikeTarget(word: string): boolean {
  return !("error" in rollbackTargetOf(word));
}

function invalid(line: string, error: string, suggestion?: string): ParsedCommand {
  return suggestion === undefined
    ? { type: "invalid", line, error }
    : { type: "invalid", line, error, suggestion };
}

function tooLong(line: string): ParsedCommand {
  return invalid(
    line,
    `the command line is ${line.length} characters long; at most ${MAX_LINE_CHARS} are read, so it did not run`,
  );
}

/** The invisible characters of `text`, written out: `\u{200d}, \u{202e}`. */
function invisibleList(text: string): string {
  const found = new Set(Array.from(text).filter(hasInvisible).map(showInvisible));
  return [...found].slice(0, 5).join(", ");
}

function unknownEnvironment(line: string, token: Token, environments: string[]): ParsedCommand {
  const near = didYouMean(token.value, environments);
  const known =
    environments.length === 0
      ? "no environments are configured"
      : `environments: ${environments.map((e) => `\`${e}\``).join(", ")}`;
  return invalid(
    line,
    `unknown environment ${codeSpan(token.value)} (${known})`,
    near === undefined ? undefined : replaceToken(line, token, near),
  );
}

/** The configured spelling of an environment named case-insensitively (ASCII letters only), if any. */
function matchEnvironment(token: Token, environments: string[]): string | undefined {
  const wanted = asciiLower(token.value);
  return environments.find((e) => asciiLower(e) === wanted);
}

/** Lower case for A-Z only: Unicode lowering maps lookalikes (U+212A KELVIN SIGN) onto ASCII letters. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function replaceToken(line: string, token: Token, replacement: string): string {
  return line.slice(0, token.start) + replacement + line.slice(token.end);
}

function nearestCommand(word: string): CommandName | undefined {
  let best: CommandName | undefined;
  let bestDistance = MAX_COMMAND_DISTANCE + 1;
  for (const name of COMMAND_NAMES) {
    const d = editDistance(word, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * Splits `line` from offset `from` like a POSIX shell (without expansions): whitespace separates
 * words; 'single quotes' are literal; "double quotes" allow `\"` and `\\`; outside quotes a
 * backslash makes the next character literal.
 */
function tokenize(line: string, from = 0): Token[] {
  const tokens: Token[] = [];
  let i = from;
  while (i < line.length) {
    while (i < line.length && /\s/.test(line[i]!)) i++;
    if (i >= line.length) break;
    const start = i;
    let value = "";
    let quoted = false;
    while (i < line.length && !/\s/.test(line[i]!)) {
      const c = line[i]!;
      if (c === "'") {
        const close = line.indexOf("'", i + 1);
        if (close < 0) throw new TokenizeError("unterminated single quote (') in arguments");
        value += line.slice(i + 1, close);
        quoted = true;
        i = close + 1;
      } else if (c === '"') {
        quoted = true;
        i++;
        let closed = false;
        while (i < line.length) {
          const d = line[i]!;
          if (d === '"') {
            closed = true;
            i++;
            break;
          }
          if (d === "\\" && (line[i + 1] === '"' || line[i + 1] === "\\")) {
            value += line[i + 1];
            i += 2;
          } else {
            value += d;
            i++;
          }
        }
        if (!closed) throw new TokenizeError('unterminated double quote (") in arguments');
      } else if (c === "\\" && i + 1 < line.length) {
        value += line[i + 1];
        quoted = true;
        i += 2;
      } else {
        value += c;
        i++;
      }
    }
    tokens.push({ value, quoted, start, end: i });
  }
  return tokens;
}

/** Optimal string alignment distance: Levenshtein plus swaps of two neighbouring characters. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
