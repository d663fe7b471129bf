// Errors of the source layer: every problem names the file and line a person has to fix.

export interface SourceProblem {
  /** Path relative to the repository root (`overlays/dev/deploy.yaml`), when the problem is in a file. */
  file?: string;
  /** 1-based line in `file`. */
  line?: number;
  message: string;
}

/** `overlays/dev/deploy.yaml:7: problem`, `overlays/dev/deploy.yaml: problem` or just `problem`. */
export function formatProblem(problem: SourceProblem): string {
  if (problem.file === undefined) return problem.message;
  const where = problem.line === undefined ? problem.file : `${problem.file}:${problem.line}`;
  return `${where}: ${problem.message}`;
}

/**
 * Fetching or rendering a source failed. `problems` holds every problem found (a render does not stop at
 * the first one); `file` and `line` are those of the first problem. The message lists each problem on a
 * line of its own as `path/to/file.yaml:12: problem`.
 */
export class SourceError extends Error {
  override readonly name = "SourceError";
  readonly file?: string;
  readonly line?: number;
  readonly problems: SourceProblem[];

  constructor(problems: SourceProblem[] | string, options?: { cause?: unknown }) {
    const list = typeof problems === "string" ? [{ message: problems }] : problems;
    if (list.length === 0) throw new TypeError("SourceError needs at least one problem");
    super(list.map(formatProblem).join("\n"), options);
    this.problems = list;
    const first = list[0];
    if (first?.file !== undefined) this.file = first.file;
    if (first?.line !== undefined) this.line = first.line;
  }
}
