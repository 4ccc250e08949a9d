import { isoToLocalInput, levels, localInputToIso, logFilters, triggers } from "./log-filters.js";
import { useWorkspaceCatalog } from "./use-workflows.js";

/**
 * Every filter of the logs API (issue 17), read from and written to the URL's parameters. The workflow
 * and folder lists come from the API; a submitted form replaces the view's filters and starts at page one.
 */
export function FilterForm({
  params,
  onApply,
}: {
  params: URLSearchParams;
  onApply: (filters: Record<string, string>) => void;
}) {
  const choices = useWorkspaceCatalog();
  const selected = (param: string) => new Set((params.get(param) ?? "").split(",").filter(Boolean));
  const chosenWorkflows = selected("workflows");
  const chosenFolders = selected("folders");
  const chosenTriggers = selected("triggers");

  function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const filters: Record<string, string> = {};
    for (const { param, kind } of logFilters) {
      const values = form
        .getAll(param)
        .map((value) => String(value).trim())
        .filter(Boolean);
      const value = kind === "list" ? values.join(",") : (values[0] ?? "");
      if (value)
        filters[param] = param === "from" || param === "to" ? (localInputToIso(value) ?? value) : value;
    }
    onApply(filters);
  }

  return (
    // Uncontrolled fields, drawn afresh when the filters in the URL change: a controlled field was set back
    // to the URL's value by every re-render (the workflow list arriving, the page loading), so choices
    // made while the page loaded were lost before they were applied.
    <form
      key={params.toString()}
      class="filters"
      onSubmit={submit}
      onReset={() => onApply({})}
      aria-label="Filters"
    >
      <label>
        Workflows
        <select name="workflows" multiple size={4}>
          {choices.value?.workflows.map((workflow) => (
            <option key={workflow.id} value={workflow.id} selected={chosenWorkflows.has(workflow.id)}>
              {workflow.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Folders
        <select name="folders" multiple size={4}>
          {choices.value?.folders.map((folder) => (
            <option key={folder.id} value={folder.id} selected={chosenFolders.has(folder.id)}>
              {folder.name}
            </option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>Triggers</legend>
        {triggers.map((trigger) => (
          <label key={trigger} class="inline">
            <input
              type="checkbox"
              name="triggers"
              value={trigger}
              defaultChecked={chosenTriggers.has(trigger)}
            />
            {trigger}
          </label>
        ))}
      </fieldset>
      <label>
        Level
        <select name="level">
          {["", ...levels].map((level) => (
            <option key={level} value={level} selected={(params.get("level") ?? "") === level}>
              {level || "any"}
            </option>
          ))}
        </select>
      </label>
      <label>
        Started from
        <input type="datetime-local" name="from" defaultValue={isoToLocalInput(params.get("from"))} />
      </label>
      <label>
        Started before
        <input type="datetime-local" name="to" defaultValue={isoToLocalInput(params.get("to"))} />
      </label>
      <label>
        Min duration (ms)
        <input type="number" name="minMs" min={0} step={1} defaultValue={params.get("minMs") ?? ""} />
      </label>
      <label>
        Max duration (ms)
        <input type="number" name="maxMs" min={0} step={1} defaultValue={params.get("maxMs") ?? ""} />
      </label>
      <label>
        Min cost
        <input type="number" name="minCost" min={0} step="any" defaultValue={params.get("minCost") ?? ""} />
      </label>
      <label>
        Max cost
        <input type="number" name="maxCost" min={0} step="any" defaultValue={params.get("maxCost") ?? ""} />
      </label>
      <label>
        Model
        <input name="model" defaultValue={params.get("model") ?? ""} placeholder="gpt-4o" />
      </label>
      <label>
        Execution id
        <input name="execution" defaultValue={params.get("execution") ?? ""} />
      </label>
      <div class="actions">
        <button type="submit">Apply filters</button>
        <button type="reset" class="quiet">
          Clear
        </button>
      </div>
    </form>
  );
}
