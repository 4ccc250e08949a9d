import { ConnectError } from "@connectrpc/connect";
import type { Config } from "../config/config.js";
import type { Store } from "../store/store.js";

export interface CommandContext {
  config: Config;
  store: Store;
}

/**
 * Runs one command against the store the server uses, and closes it after. A refusal (a ConnectError:
 * bad input, an unknown id, a limit reached) prints its message and exits with 2, like a usage error;
 * anything else is a fault and keeps its stack.
 */
export async function withContext(
  openContext: () => CommandContext | Promise<CommandContext>,
  action: (context: CommandContext) => void | Promise<void>,
): Promise<void> {
  const context = await openContext();
  try {
    await action(context);
  } catch (error) {
    if (!(error instanceof ConnectError)) throw error;
    console.error(`error: ${error.rawMessage}`);
    process.exitCode = 2;
  } finally {
    await context.store.close();
  }
}
