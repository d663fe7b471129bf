// `syncward completion bash|zsh|fish` prints a script that asks `syncward __complete WORDS...`
// for candidates, so commands, verbs, options, choices and environment names always match this
// build (the kubectl/cobra approach).
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { DEFAULT_CONFIG_FILE, loadConfigFile } from "../../config/load.ts";
import { candidates, SHELLS, type Typed } from "../complete.ts";
import { type CliIO, EXIT } from "../io.ts";
import { COMMANDS } from "../registry.ts";
import { UsageError } from "../usage-error.ts";

const SCRIPTS: Record<(typeof SHELLS)[number], string> = {
  bash: `# syncward bash completion: source <(syncward completion bash)
_syncward() {
  local IFS=$'\\n'
  COMPREPLY=($(syncward __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _syncward syncward`,
  zsh: `#compdef syncward
# syncward zsh completion: source <(syncward completion zsh)
_syncward() {
  local -a candidates
  candidates=("\${(@f)$(syncward __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if (( \${#candidates} )) && [[ -n "\${candidates[1]}" ]]; then
    compadd -a candidates
  else
    _files
  fi
}
compdef _syncward syncward`,
  fish: `# syncward fish completion: syncward completion fish | source
function __syncward_complete
  set -l words (commandline -opc) (commandline -ct)
  syncward __complete $words[2..-1] 2>/dev/null
end
complete -c syncward -f -a '(__syncward_complete)'`,
};

export async function completionCommand(positionals: string[], io: CliIO): Promise<number> {
  const shell = positionals[0] as (typeof SHELLS)[number];
  if (!SHELLS.includes(shell))
    throw new UsageError(`completion: unsupported shell "${positionals[0]}" (use ${SHELLS.join(", ")})`);
  io.out(SCRIPTS[shell]);
  return EXIT.ok;
}

/** Environment names from the config the typed --repo/--config point at; none if it cannot be read. */
async function environmentNames(typed: Typed): Promise<string[]> {
  const repo = resolve(typed.options.repo ?? process.cwd());
  const file = typed.options.config ? resolve(typed.options.config) : join(repo, DEFAULT_CONFIG_FILE);
  if (!existsSync(file)) return [];
  try {
    return (await loadConfigFile(file)).environments.map((e) => e.name);
  } catch {
    return [];
  }
}

export async function completeCommand(words: string[], io: CliIO): Promise<number> {
  for (const c of await candidates(COMMANDS, words.length === 0 ? [""] : words, environmentNames)) io.out(c);
  return EXIT.ok;
}
