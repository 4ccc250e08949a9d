import { resolveTemporalCli } from "../src/temporal/dev/cli-binary.js";

// `npm run temporal:install`: makes sure a Temporal CLI is available (issue 2, item 7) and prints its path,
// so `"$(npm run -s temporal:install)" workflow list` works from a shell.
console.log(await resolveTemporalCli());
