// The process entry of the `syncward` command (bin/syncward.js runs its compiled form).
import { main } from "./main.ts";

// `syncward ... | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw err;
});
process.exitCode = await main(process.argv.slice(2));
