// The `syncward` command line. Exit codes scripts can trust: 0 success; 1 a diff exists or an
// operation failed or was refused; 2 a usage, input or connection problem (nothing changed).
// Parsing, help, suggestions and positional checks come from commander, built from the
// declarations in registry.ts; every check it makes happens before anything connects.
import { Command, CommanderError, Option } from "commander";
import { type CliIO, EXIT, processIO } from "./io.ts";
import { COMMANDS } from "./registry.ts";
import type { CommandSpec, OptionSpecs, Values } from "./spec.ts";

const EXIT_CODES =
  "Exit codes: 0 success, 1 diff found or operation failed/refused, 2 usage, input or connection error.";

function optionOf(name: string, spec: OptionSpecs[string]): Option {
  const flags = `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.type === "string" ? ` <${spec.value ?? "VALUE"}>` : ""}`;
  const option = new Option(flags, spec.description);
  if (spec.choices) option.choices(spec.choices);
  return option;
}

/** Commander's camelCased attributes back to the declared names (`dryRun` -> `dry-run`). */
function valuesOf(command: Command, specs: OptionSpecs): Values {
  const opts = command.opts();
  const values: Values = {};
  for (const name of Object.keys(specs)) {
    const option = command.options.find((o) => o.long === `--${name}`);
    if (!option) continue;
    const value = opts[option.attributeName()] as string | boolean | undefined;
    // `--no-leases` is a negation to commander (leases defaults to true); here it is a flag.
    values[name] = option.negate ? (value === false ? true : undefined) : value;
  }
  return values;
}

function configure(command: Command, io: CliIO): Command {
  return command
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError("(add --help for usage)");
}

function build(parent: Command, name: string, spec: CommandSpec, io: CliIO, result: { code: number }): void {
  const command = configure(parent.command(name, { hidden: spec.hidden }), io).description(spec.summary);
  for (const arg of spec.args ?? []) command.argument(arg);
  for (const [option, optionSpec] of Object.entries(spec.options ?? {}))
    command.addOption(optionOf(option, optionSpec));
  if (spec.details) command.addHelpText("after", `\n${spec.details}`);
  for (const [verb, verbSpec] of Object.entries(spec.verbs ?? {})) build(command, verb, verbSpec, io, result);
  const run = spec.run;
  if (run) {
    command.action(async () => {
      // A malformed SYNCWARD_MAX_* is said at once, not at the first render.
      (await import("../source/limits.ts")).limitsFromEnv();
      const positionals = command.processedArgs.flat().filter((a): a is string => typeof a === "string");
      result.code = await run({ positionals, values: valuesOf(command, spec.options ?? {}), io });
    });
  }
}

export function program(io: CliIO, result: { code: number } = { code: EXIT.ok }): Command {
  const root = configure(new Command("syncward"), io)
    .description("GitOps delivery for Kubernetes, driven from Git")
    // Answered in main() before parsing: the commit is looked up only when asked for.
    .option("--version", "print the version and the commit it was built from")
    .addHelpText("after", `\n${EXIT_CODES}\nRun "syncward COMMAND --help" for a command's options.`);
  for (const [name, spec] of Object.entries(COMMANDS)) build(root, name, spec, io, result);
  return root;
}

export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const result: { code: number } = { code: EXIT.ok };
  try {
    if (argv[0] === "__complete") {
      // The words being completed are data, not options to parse.
      return await (COMMANDS.__complete as Required<CommandSpec>).run({
        positionals: argv.slice(1),
        values: {},
        io,
      });
    }
    if (argv[0] === "--version") {
      io.out((await import("../build-info.ts")).versionLine());
      return EXIT.ok;
    }
    await program(io, result).parseAsync(argv, { from: "user" });
    return result.code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version exit 0; every parse error is a usage error (2), already printed.
      return err.exitCode === 0 ? EXIT.ok : EXIT.error;
    }
    const { oneLine } = await import("./errors.ts");
    const line = oneLine(err);
    if (line === undefined) throw err;
    io.err(`syncward: ${line}`);
    return EXIT.error;
  }
}
