/**
 * The building blocks every screen uses: loading data, labelled fields, alerts, a polite status line, paged tables
 * with their filters and CSV link, and a copy button. Text from the API or from users is always rendered as text
 * (JSX escapes it); nothing here sets HTML.
 */
import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes } from "preact";
import { useCallback, useEffect, useId, useState } from "preact/hooks";
import { api, errorMessage, query, type Page } from "./api";

/** Loads with `load` whenever `deps` change; `reload()` loads again. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: string | null; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => current && setState({ data, error: null, loading: false }),
      (error) => current && setState({ data: undefined, error: errorMessage(error), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  return { ...state, reload: useCallback(() => setRound((n) => n + 1), []) };
}

/** An error a person should read: announced by screen readers as it appears. */
export function Alert({ children }: { children: ComponentChildren }) {
  return (
    <p class="bad" role="alert">
      {children}
    </p>
  );
}

/** A polite status line for what an action did ("Saved."), read out without moving the focus. */
export function StatusLine({ text }: { text: string }) {
  return (
    <p class="status-line" role="status" aria-live="polite">
      {text}
    </p>
  );
}

type InputProps = InputHTMLAttributes & { label: string; hint?: string };

/** A labelled input; `hint` is tied to it with aria-describedby. */
export function Field({ label, hint, id, ...input }: InputProps) {
  const generated = useId();
  const fieldId = (id as string | undefined) ?? generated;
  return (
    <div class="field">
      <label for={fieldId}>{label}</label>
      <input id={fieldId} aria-describedby={hint ? `${fieldId}-hint` : undefined} {...input} />
      {hint && (
        <p id={`${fieldId}-hint`} class="hint muted">
          {hint}
        </p>
      )}
    </div>
  );
}

type SelectProps = SelectHTMLAttributes & { label: string; options: Array<[value: string, text: string]> };

export function SelectField({ label, options, id, ...select }: SelectProps) {
  const generated = useId();
  const fieldId = (id as string | undefined) ?? generated;
  return (
    <div class="field">
      <label for={fieldId}>{label}</label>
      <select id={fieldId} {...select}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Copies `text` to the clipboard and says so in its own label for a moment. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(text);
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <button type="button" class="secondary" onClick={copy} aria-live="polite">
      {copied ? "Copied" : label}
    </button>
  );
}

/** A column of a paged table: its header and how a row shows in it. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  numeric?: boolean;
}

/**
 * The pages of a list endpoint (`path` with `filters`), walked by cursor: the cursors of pages already seen are kept,
 * so Previous needs no offset; changing the filters or the path starts again at the first page. `reloadKey` loads
 * the current page again when it changes.
 */
export function useCursorPages<T>(path: string, filters: Record<string, string | number | boolean | undefined>, reloadKey?: unknown, limit = 25) {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const filterKey = JSON.stringify(filters);
  useEffect(() => setCursors([undefined]), [filterKey, path]);
  const cursor = cursors[cursors.length - 1];
  const page = useAsync(() => api<Page<T>>("GET", `${path}${query({ ...filters, cursor, limit })}`), [path, filterKey, cursor, reloadKey]);
  return {
    page,
    pageNumber: cursors.length,
    previous: () => setCursors(cursors.slice(0, -1)),
    next: () => setCursors([...cursors, page.data?.nextCursor ?? undefined]),
  };
}

/** Previous/Next buttons for the pages of useCursorPages. */
export function Pager({ label, pages }: { label: string; pages: { pageNumber: number; previous: () => void; next: () => void; page: { data?: { nextCursor: string | null } } } }) {
  return (
    <nav class="pager" aria-label={`${label}: pages`}>
      <button type="button" class="secondary" disabled={pages.pageNumber === 1} onClick={pages.previous}>
        Previous page
      </button>
      <span class="muted">Page {pages.pageNumber}</span>
      <button type="button" class="secondary" disabled={!pages.page.data?.nextCursor} onClick={pages.next}>
        Next page
      </button>
    </nav>
  );
}

/**
 * A list screen's body: the rows of one page of `path` (a list endpoint) with `filters`, Previous/Next by cursor
 * (useCursorPages), and the CSV download of every row that matches the same filters when `csvPath` is given.
 */
export function PagedTable<T>({
  caption,
  path,
  filters,
  columns,
  rowKey,
  csvPath,
  empty,
  reloadKey,
}: {
  caption: string;
  path: string;
  filters: Record<string, string | number | boolean | undefined>;
  columns: Array<Column<T>>;
  rowKey: (row: T) => string | number;
  csvPath?: string;
  empty: string;
  reloadKey?: unknown;
}) {
  const pages = useCursorPages<T>(path, filters, reloadKey);
  const page = pages.page;
  return (
    <div class="paged">
      {csvPath && (
        <p>
          <a class="button secondary" href={`${csvPath}${query(filters)}`} download>
            Download CSV
          </a>{" "}
          <span class="muted">every row matching the filters</span>
        </p>
      )}
      {page.error && <Alert>{page.error}</Alert>}
      <div class="table-wrap">
        <table aria-busy={page.loading}>
          <caption class="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.header} scope="col" class={c.numeric ? "num" : undefined}>
                  {c.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {page.data?.data.map((row) => (
              <tr key={rowKey(row)}>
                {columns.map((c) => (
                  <td key={c.header} class={c.numeric ? "num" : undefined}>
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {page.data && page.data.data.length === 0 && <p class="muted">{empty}</p>}
      <Pager label={caption} pages={pages} />
    </div>
  );
}

/** A filter form: changes apply on submit (Enter in any field), so typing does not fire a request per key. */
export function FilterForm({ label, onApply, children }: { label: string; onApply: (values: Record<string, string>) => void; children: ComponentChildren }) {
  const submit = (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const values: Record<string, string> = {};
    for (const [key, value] of data.entries()) values[key] = String(value);
    onApply(values);
  };
  return (
    <form class="card filters" aria-label={label} onSubmit={submit}>
      <div class="controls">
        {children}
        <div>
          <button type="submit">Apply filters</button>
        </div>
      </div>
    </form>
  );
}
