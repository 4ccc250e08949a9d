import { Context } from "@temporalio/activity";

/**
 * Every side effect of our workflows lives in an activity (style: workflows hold only deterministic
 * orchestration). The worker registers everything this module exports.
 */

/** Proves a real worker ran it: names the worker's process and the task queue it polled. */
export async function greetFromWorker(name: string): Promise<string> {
  return `Hello, ${name}, from worker process ${process.pid} on task queue ${Context.current().info.taskQueue}`;
}
