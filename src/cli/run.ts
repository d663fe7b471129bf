// The process entry of the `syncward` command (bin/syncward.js runs its compiled form).
import { main } from "./main.ts";

process.exitCode = await main(process.argv.slice(2));
