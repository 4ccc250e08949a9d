/** RetryExecution's options (D47), as both an entry's retry and a bulk retry ask for them. */
export interface RetryChoice {
  from: "start" | "failed_block";
  version: "original" | "current";
}

/** The two choices, named `from` and `version` in the form they sit in. */
export function RetryOptions() {
  return (
    <>
      <label>
        Run from
        <select name="from">
          <option value="start">the start</option>
          <option value="failed_block">the block that failed, reusing what succeeded before it</option>
        </select>
      </label>
      <label>
        On
        <select name="version">
          <option value="original">the version it ran</option>
          <option value="current">the workflow's version now</option>
        </select>
      </label>
    </>
  );
}

export function retryChoiceOf(form: HTMLFormElement): RetryChoice {
  const data = new FormData(form);
  return {
    from: data.get("from") === "failed_block" ? "failed_block" : "start",
    version: data.get("version") === "current" ? "current" : "original",
  };
}
