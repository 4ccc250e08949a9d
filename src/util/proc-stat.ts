/**
 * The fields of a `/proc/<pid>/stat` line (Linux) after the program's name, the state first: field 3 of
 * proc(5) is at index 0. The name, in parentheses, may hold spaces and parentheses itself, so the fields
 * are counted from the last ")".
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** USER_HZ, which Linux fixes at 100 for /proc's clock ticks on every architecture Node runs on. */
const clockTicksPerSecond = 100;

/**
 * The CPU time in a `/proc/<pid>/stat` line, in seconds: the process's own user and system time (every
 * thread), and that of its children it has waited for (cutime and cstime).
 */
export function cpuSecondsOf(stat: string): { own: number; children: number } {
  const [utime, stime, cutime, cstime] = statFields(stat)
    .slice(11, 15)
    .map((ticks) => Number(ticks) / clockTicksPerSecond);
  return {
    own: (utime ?? Number.NaN) + (stime ?? Number.NaN),
    children: (cutime ?? Number.NaN) + (cstime ?? Number.NaN),
  };
}
