// A tree is checked on its way into tar, header by header, before the bytes of an entry are written:
// a gzip bomb, a file of 10 GB, 100,000 files or a path 500 folders deep is stopped at the header
// that crosses the limit, so the disk never holds more than the limit. The stream passes unchanged.

import { Transform, type TransformCallback } from "node:stream";
import { describeBytes, TREE_LIMIT_VARIABLES, type TreeLimits } from "./limits.ts";

/** An entry crossed a limit: the message names it, the limit and the variable that raises it. */
export class TreeLimitError extends Error {
  override readonly name = "TreeLimitError";
}

const BLOCK = 512;

function octal(header: Buffer, offset: number, length: number): number {
  const field = header.subarray(offset, offset + length);
  // GNU base-256 for sizes over 8 GiB: the high bit of the first byte set.
  if ((field[0] ?? 0) & 0x80) {
    let value = (field[0] ?? 0) & 0x7f;
    for (let i = 1; i < field.length; i++) value = value * 256 + (field[i] ?? 0);
    return value;
  }
  const text = field.toString("latin1").replace(/\0.*$/s, "").trim();
  return text === "" ? 0 : Number.parseInt(text, 8);
}

function text(header: Buffer, offset: number, length: number): string {
  return header
    .subarray(offset, offset + length)
    .toString("utf8")
    .replace(/\0.*$/s, "");
}

/** `path=` and `size=` from a pax extended header's records (`<len> key=value\n`). */
function paxRecords(body: Buffer): { path?: string; size?: number } {
  const out: { path?: string; size?: number } = {};
  for (const record of body.toString("utf8").split("\n")) {
    const m = /^\d+ (path|size)=(.*)$/s.exec(record);
    if (m?.[1] === "path") out.path = m[2];
    else if (m?.[1] === "size" && m[2] !== undefined) out.size = Number(m[2]);
  }
  return out;
}

/** Counts what a tar stream holds and fails it at the first entry over a limit. */
export class TreeLimiter extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  /** Bytes of the current entry's body (with padding) still to pass. */
  private skip = 0;
  /** The body of a pax or GNU long-name header being collected, and what it is. */
  private meta?: { type: string; size: number; chunks: Buffer[]; got: number };
  private next: { path?: string; size?: number } = {};
  private ended = false;
  files = 0;
  bytes = 0;

  constructor(
    private readonly limits: TreeLimits,
    private readonly what: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      if (!this.ended) this.inspect(chunk);
      done(null, chunk);
    } catch (err) {
      done(err as Error);
    }
  }

  private inspect(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (!this.ended) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, this.pending.length);
        if (this.meta) {
          const want = this.meta.size - this.meta.got;
          if (want > 0) this.meta.chunks.push(this.pending.subarray(0, Math.min(n, want)));
          this.meta.got += n;
        }
        this.pending = this.pending.subarray(n);
        this.skip -= n;
        if (this.skip > 0) return;
        if (this.meta) this.finishMeta();
        continue;
      }
      if (this.pending.length < BLOCK) return;
      const header = this.pending.subarray(0, BLOCK);
      this.pending = this.pending.subarray(BLOCK);
      if (header.every((b) => b === 0)) {
        this.ended = true; // end of archive: what follows is padding
        return;
      }
      this.entry(header);
    }
  }

  private entry(header: Buffer): void {
    const type = String.fromCharCode(header[156] ?? 0);
    const raw = octal(header, 124, 12);
    if (type === "x" || type === "g" || type === "L" || type === "K") {
      if (raw > 1024 * 1024) this.refuse(`an extended header of ${describeBytes(raw)}`, "maxTreeFileBytes");
      this.meta = { type, size: raw, chunks: [], got: 0 };
      this.skip = Math.ceil(raw / BLOCK) * BLOCK;
      if (this.skip === 0) this.finishMeta();
      return;
    }
    const size = this.next.size ?? raw;
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    const prefix = text(header, 345, 155);
    const name = this.next.path ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    this.next = {};
    this.files += 1;
    if (this.files > this.limits.maxTreeFiles)
      this.refuse(`more than ${this.limits.maxTreeFiles} files`, "maxTreeFiles");
    const depth = name.split("/").filter((p) => p !== "" && p !== ".").length;
    if (depth > this.limits.maxTreeDepth)
      this.refuse(
        `'${name.slice(0, 200)}', ${depth} folders deep (the limit is ${this.limits.maxTreeDepth})`,
        "maxTreeDepth",
      );
    // Only regular files take bytes; links, folders and devices carry no body (or tar ignores it).
    if (type === "0" || type === "\0" || type === "7") {
      if (size > this.limits.maxTreeFileBytes)
        this.refuse(
          `'${name.slice(0, 200)}' of ${describeBytes(size)} (the limit for one file is ${describeBytes(this.limits.maxTreeFileBytes)})`,
          "maxTreeFileBytes",
        );
      this.bytes += size;
      if (this.bytes > this.limits.maxTreeBytes)
        this.refuse(`more than ${describeBytes(this.limits.maxTreeBytes)} of files`, "maxTreeBytes");
    }
    this.skip = padded;
  }

  private finishMeta(): void {
    const meta = this.meta;
    this.meta = undefined;
    if (!meta) return;
    const body = Buffer.concat(meta.chunks).subarray(0, meta.size);
    if (meta.type === "x") this.next = { ...this.next, ...paxRecords(body) };
    else if (meta.type === "L")
      this.next = { ...this.next, path: body.toString("utf8").replace(/\0.*$/s, "") };
  }

  private refuse(what: string, limit: keyof TreeLimits): never {
    throw new TreeLimitError(
      `${this.what} holds ${what}; refused before extracting it (raise ${TREE_LIMIT_VARIABLES[limit]} if the repository really needs it)`,
    );
  }
}
