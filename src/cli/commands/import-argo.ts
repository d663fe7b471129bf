// `syncward import-argo FILE`: prints the syncward environment for an Argo CD Application.
import { readFile } from "node:fs/promises";
import { ArgoImportError, importArgoApplication } from "../../config/argo-import.ts";
import { type CliIO, EXIT } from "../io.ts";
import { UsageError } from "../usage-error.ts";

export async function importArgoCommand(argv: string[], io: CliIO): Promise<number> {
  const [file] = argv;
  if (!file || argv.length > 1) throw new UsageError("usage: syncward import-argo APPLICATION.yaml");
  const text = await readFile(file, "utf8").catch(() => {
    throw new UsageError(`cannot read ${file}`);
  });
  try {
    const imported = importArgoApplication(text);
    io.out("# paste under `environments:` in .github/syncward.yml");
    io.out(imported.yaml);
    for (const note of imported.notes) io.err(`note: ${note}`);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof ArgoImportError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
}
