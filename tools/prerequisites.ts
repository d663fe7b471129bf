// The programs that syncward, its tests and its tooling run, besides Node and Go
// (docs/getting-started.md, "Prerequisites"). tools/run-tests.ts looks for them before any test
// runs, so a missing one is named with what needs it and how to install it, never met as a spawn
// ENOENT in the middle of a test. (Go is looked for by tools/cluster/build.sh, only when something
// has to be built.)
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

export interface Tool {
  name: string;
  /** What runs it. */
  needs: string;
  install: string;
  /** Needed only when one of these test files runs. */
  onlyFor?: string[];
}

export const TOOLS: Tool[] = [
  {
    name: "git",
    needs: "syncward reads local repositories with it; every test repository is made with it",
    install: "sudo apt-get install git, or brew install git",
  },
  {
    name: "tar",
    needs: "syncward unpacks repository archives and Helm charts with it",
    install: "sudo apt-get install tar (macOS has one)",
  },
  {
    name: "openssl",
    needs: "the local control plane's certificates and the tests' keys",
    install: "sudo apt-get install openssl, or brew install openssl",
  },
  {
    name: "kubectl",
    needs: "its built-in kustomize renders Kustomize sources",
    install:
      "any recent kubectl, or the pinned one: bash tools/cluster/build.sh kubectl, then put the folder of the path it prints on PATH",
  },
  {
    name: "bash",
    needs: "tools/cluster/build.sh builds the control plane and helm",
    install: "sudo apt-get install bash, or brew install bash",
  },
  {
    name: "zsh",
    needs: "the zsh completion test runs syncward's completion script in zsh",
    install: "sudo apt-get install zsh, or brew install zsh",
    onlyFor: ["test/unit/cli/completion.test.ts"],
  },
  {
    name: "fish",
    needs: "the fish completion test runs syncward's completion script in fish",
    install: "sudo apt-get install fish, or brew install fish",
    onlyFor: ["test/unit/cli/completion.test.ts"],
  },
];

/** Whether `name` is an executable file in one of PATH's folders. */
function onPath(name: string, path: string): boolean {
  return path
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => {
      const file = join(dir, name);
      try {
        accessSync(file, constants.X_OK);
        return statSync(file).isFile();
      } catch {
        return false;
      }
    });
}

/** The tools that a run of `files` (paths from the repository's root) needs and PATH does not have. */
export function missingTools(files: string[], env: NodeJS.ProcessEnv = process.env, tools = TOOLS): Tool[] {
  return tools
    .filter((t) => !t.onlyFor || t.onlyFor.some((f) => files.includes(f)))
    .filter((t) => !onPath(t.name, env.PATH ?? ""));
}

/** One paragraph per missing tool: what needs it, and how to install it. */
export function describeMissing(missing: Tool[]): string {
  const lines = missing.map((t) => `  ${t.name}: ${t.needs}. Install: ${t.install}.`);
  return `The tests need ${missing.length === 1 ? "a program" : "programs"} that ${missing.length === 1 ? "is" : "are"} not on PATH (docs/getting-started.md, "Prerequisites"):\n${lines.join("\n")}\n`;
}
