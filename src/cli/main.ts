// The `syncward` command line. Exit codes scripts can trust: 0 success; 1 a diff exists or an
// operation failed or was refused; 2 a usage, input or connection problem (nothing changed).
import { ConfigError, UnknownEnvironmentError } from "../config/load.ts";
import { KubeApiError, KubeConnectionError } from "../kube/errors.ts";
import { SourceError } from "../source/errors.ts";
import { LimitsError, limitsFromEnv } from "../source/limits.ts";
import { APP_USAGE, appCommand } from "./commands/app.ts";
import { CONTROLLER_USAGE, controllerCommand } from "./commands/controller.ts";
import { diffCommand } from "./commands/diff.ts";
import { healthCommand } from "./commands/health.ts";
import { importArgoCommand } from "./commands/import-argo.ts";
import { UsageError } from "./context.ts";
import { type CliIO, EXIT, processIO } from "./io.ts";

const USAGE = `syncward: GitOps delivery for Kubernetes, driven from Git

usage: syncward <command> [options]
  app        list | get | diff | sync | history | set | freeze | unfreeze an environment
  controller run the reconcile loop against a local git repository
  health     assess the health of saved objects (kubectl get -o yaml output)
  diff       compare a desired object with a saved live object
  import-argo  turn an Argo CD Application into a syncward environment

${APP_USAGE}

${CONTROLLER_USAGE}

exit codes: 0 success, 1 diff found or operation failed/refused, 2 usage, input or connection error`;

function oneLine(err: unknown): string | undefined {
  if (
    err instanceof UsageError ||
    err instanceof ConfigError ||
    err instanceof UnknownEnvironmentError ||
    err instanceof SourceError ||
    err instanceof LimitsError
  ) {
    return err.message;
  }
  if (err instanceof KubeConnectionError) return `${err.message} (check --kubeconfig and --context)`;
  if (err instanceof KubeApiError) return `the API server refused ${err.method} ${err.path}: ${err.message}`;
  if (
    err instanceof Error &&
    err.name === "TypeError" &&
    /parseArgs|Unknown option|unexpected argument/i.test(err.message)
  )
    return err.message;
  if (err instanceof Error && (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"))
    return err.message;
  return undefined;
}

export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const [command, ...rest] = argv;
  try {
    limitsFromEnv(); // a malformed SYNCWARD_MAX_* is said at once, not at the first render
    switch (command) {
      case "app":
        return await appCommand(rest, io);
      case "controller":
        return await controllerCommand(rest, io);
      case "health":
        return await healthCommand(rest, io);
      case "diff":
        return await diffCommand(rest, io);
      case "import-argo":
        return await importArgoCommand(rest, io);
      case "help":
      case "--help":
      case "-h":
        io.out(USAGE);
        return EXIT.ok;
      default:
        io.err(command ? `syncward: unknown command "${command}"\n\n${USAGE}` : USAGE);
        return EXIT.error;
    }
  } catch (err) {
    const line = oneLine(err);
    if (line === undefined) throw err;
    io.err(`syncward: ${line}`);
    return EXIT.error;
  }
}
