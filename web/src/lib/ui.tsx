/**
 * The building blocks every screen uses: loading data, labelled fields, alerts, a polite status line, paged tables
 * with their filters and CSV link, and a copy button. Text from the API or from users is always rendered as text
 * (JSX escapes it); nothing here sets HTML.
 */
import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes } from "preact";
import { useCallback, useEffect, useId, useRef, useState } from "preact/hooks";
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

type InputProps = InputHTMLAttributes & { label: string; hint?: string; error?: ComponentChildren };

/** A labelled input; `hint` and `error` (what is wrong with its value, shown under it) are tied to it with aria-describedby. */
export function Field({ label, hint, error, id, ...input }: InputProps) {
  const generated = useId();
  const fieldId = (id as string | undefined) ?? generated;
  const describedBy = [hint && `${fieldId}-hint`, error && `${fieldId}-error`].filter(Boolean).join(" ");
  return (
    <div class="field">
      <label for={fieldId}>{label}</label>
      <input id={fieldId} aria-describedby={describedBy || undefined} aria-invalid={error ? true : undefined} {...input} />
      {hint && (
        <p id={`${fieldId}-hint`} class="hint muted">
          {hint}
        </p>
      )}
      <FieldError id={`${fieldId}-error`} error={error} />
    </div>
  );
}

/** What is wrong with a field's value, under it (the field names it with aria-describedby and aria-invalid). */
export function FieldError({ id, error }: { id: string; error?: ComponentChildren }) {
  return error ? (
    <p id={id} class="bad field-error">
      {error}
    </p>
  ) : null;
}

type SelectProps = SelectHTMLAttributes & { label: string; options: Array<[value: string, text: string]>; error?: ComponentChildren };

export function SelectField({ label, options, error, id, ...select }: SelectProps) {
  const generated = useId();
  const fieldId = (id as string | undefined) ?? generated;
  return (
    <div class="field">
      <label for={fieldId}>{label}</label>
      <select id={fieldId} aria-describedby={error ? `${fieldId}-error` : undefined} aria-invalid={error ? true : undefined} {...select}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
      <FieldError id={`${fieldId}-error`} error={error} />
    </div>
  );
}

/**
 * Asks once more before an action: the question (with `details`, what follows from it), Cancel, which takes the
 * focus, and the action's button.
 */
export function Confirm({
  question,
  details,
  confirmLabel,
  busy,
  onConfirm,
  onCancel,
}: {
  question: string;
  details?: string;
  confirmLabel: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  return (
    <div class="confirm secret-box" role="group" aria-label={question}>
      <p>
        {details ? (
          <>
            <strong>{question}</strong> {details}
          </>
        ) : (
          question
        )}
      </p>
      <span class="actions">
        <button type="button" class="secondary" ref={cancel} onClick={onCancel}>
          Cancel
        </button>
        <button type="button" disabled={busy} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </span>
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

/**
 * The rows of a list endpoint (`path` with `filters`) for a "Load more" list: the first page loads whenever the path,
 * the filters or `reloadKey` change (replacing the rows shown), `more()` appends the next page, and `replace` puts a
 * row an action answered in its place without loading again.
 */
export function useMoreRows<T>(path: string, filters: Record<string, string | number | boolean | undefined>, reloadKey?: unknown, limit = 25) {
  const [state, setState] = useState<{ rows: T[]; nextCursor: string | null; error: string | null; loading: boolean }>({ rows: [], nextCursor: null, error: null, loading: true });
  // Only the newest load may change the rows (a slow first page must not land after the filters changed again).
  const round = useRef(0);
  const filterKey = JSON.stringify(filters);
  const load = async (cursor?: string) => {
    const mine = ++round.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const page = await api<Page<T>>("GET", `${path}${query({ ...filters, cursor, limit })}`);
      if (mine === round.current) setState((s) => ({ rows: cursor ? [...s.rows, ...page.data] : page.data, nextCursor: page.nextCursor, error: null, loading: false }));
    } catch (e) {
      if (mine === round.current) setState((s) => ({ ...s, error: errorMessage(e), loading: false }));
    }
  };
  useEffect(() => void load(), [path, filterKey, reloadKey]);
  return {
    ...state,
    more: () => (state.nextCursor ? load(state.nextCursor) : Promise.resolve()),
    replace: (matches: (row: T) => boolean, row: T) => setState((s) => ({ ...s, rows: s.rows.map((r) => (matches(r) ? row : r)) })),
  };
}

/**
 * "Load more" under a useMoreRows list, or how many are shown once all are (`noun` is one row's: "email"). When the
 * last page came, the button is gone: the focus moves to `afterId` (the list's heading) instead of being lost.
 */
export function LoadMore({ rows, noun, afterId }: { rows: { rows: unknown[]; nextCursor: string | null; loading: boolean; more: () => Promise<void> }; noun: string; afterId: string }) {
  const shown = `${rows.rows.length} ${rows.rows.length === 1 ? noun : `${noun}s`}`;
  const load = async () => {
    await rows.more();
    requestAnimationFrame(() => {
      if (!document.activeElement || document.activeElement === document.body) document.getElementById(afterId)?.focus();
    });
  };
  if (rows.nextCursor)
    return (
      <p class="load-more">
        <button type="button" class="secondary" aria-busy={rows.loading} onClick={() => void (rows.loading || load())}>
          Load more
        </button>{" "}
        <span class="muted">{`${shown} shown`}</span>
      </p>
    );
  return rows.rows.length > 0 ? <p class="muted load-more">{rows.rows.length === 1 ? `${shown} in all.` : `All ${shown} shown.`}</p> : null;
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
      <Table caption={caption} columns={columns} rows={page.data?.data ?? []} rowKey={rowKey} loading={page.loading} />
      {page.data && page.data.data.length === 0 && <p class="muted">{empty}</p>}
      <Pager label={caption} pages={pages} />
    </div>
  );
}

/** A table of `rows` in `columns` (its caption for screen readers), scrolling sideways inside its wrapper when narrow. */
export function Table<T>({ caption, columns, rows, rowKey, loading }: { caption: string; columns: Array<Column<T>>; rows: T[]; rowKey: (row: T) => string | number; loading?: boolean }) {
  return (
    <div class="table-wrap">
      <table aria-busy={loading}>
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
          {rows.map((row) => (
            <tr key={rowKey(row)} data-row={rowKey(row)}>
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
