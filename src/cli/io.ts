// Where a CLI command writes, so commands can be tested without a terminal.
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** True when stdout is a terminal: progress is shown only then. */
  isTTY: boolean;
}

export const processIO: CliIO = {
  out: (text) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`),
  isTTY: Boolean(process.stdout.isTTY),
};

/** Exit codes scripts can trust (like diff(1) for the diff commands). */
export const EXIT = { ok: 0, different: 1, error: 2 } as const;
