// `syncward version [-o json|yaml]`: what `--version` prints, or the same as data.
import { buildInfo, versionLine } from "../../build-info.ts";
import { type CliIO, EXIT } from "../io.ts";
import { printStructured, structured } from "../output.ts";
import type { Values } from "../spec.ts";

export async function versionCommand(values: Values, io: CliIO): Promise<number> {
  const format = structured(values.output as string | undefined);
  if (format) printStructured(io, format, { ...buildInfo(), node: process.versions.node });
  else io.out(versionLine());
  return EXIT.ok;
}
