/** The task queue the API server starts workflows on and the worker polls (D3: either may run alone). */
export const FLOWLOG_TASK_QUEUE = "flowlog";
