/**
 * The fields of a `/proc/<pid>/stat` line (Linux) after the program's name, the state first: field 3 of
 * proc(5) is at index 0. The name, in parentheses, may hold spaces and parentheses itself, so the fields
 * are counted from the last ")".
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}
