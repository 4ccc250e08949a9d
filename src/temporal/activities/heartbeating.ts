import { Context } from "@temporalio/activity";

/**
 * Heartbeats through a whole request, not only between attempts: a 30 s request (D16, D19) outlasts the
 * heartbeat timeout, which must stay short so that a dead worker's block or delivery moves to another
 * worker soon.
 */
export async function heartbeating<T>(beat: () => void, work: (context: Context) => Promise<T>): Promise<T> {
  const context = Context.current();
  const every = Math.max(100, (context.info.heartbeatTimeoutMs ?? 30_000) / 3);
  const timer = setInterval(beat, every);
  try {
    return await work(context);
  } finally {
    clearInterval(timer);
  }
}
