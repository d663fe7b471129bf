// -o json|yaml for any command's structured result (wide is a table, drawn by the command).
import { stringify } from "yaml";
import type { CliIO } from "./io.ts";

export type Structured = "json" | "yaml";

export function structured(format: string | undefined): Structured | undefined {
  return format === "json" || format === "yaml" ? format : undefined;
}

export function printStructured(io: CliIO, format: Structured, value: unknown): void {
  io.out(
    format === "json" ? JSON.stringify(value, null, 2) : stringify(value, { aliasDuplicateObjects: false }),
  );
}
