/**
 * The pieces every part of a program in the portal is made of: a section with its heading, a table, and a list whose
 * first page arrives loaded and whose next pages "Show more" fetches.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api, query, type Page } from "../lib/api";
import { t } from "../lib/i18n";

const PAGE_SIZE = 25;

export const programPath = (programId: number, rest: string): string => `/api/partner/programs/${programId}${rest}`;

export const listPage = <T,>(programId: number, list: string, cursor?: string) => api<Page<T>>("GET", programPath(programId, `/${list}${query({ limit: PAGE_SIZE, cursor })}`));

export function Section({ id, title, children, headingRef }: { id: string; title: string; children: ComponentChildren; headingRef?: { current: HTMLHeadingElement | null } }) {
  return (
    <section id={id} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} ref={headingRef} tabIndex={headingRef ? -1 : undefined} class={headingRef ? "focus-target" : undefined}>
        {title}
      </h2>
      {children}
    </section>
  );
}

export function Figure({ name, label, value }: { name: string; label: string; value: string }) {
  return (
    <div class="figure" data-figure={name}>
      <span class="value">{value}</span>
      <span class="label">{label}</span>
    </div>
  );
}

export function Table({ caption, headers, children }: { caption: string; headers: Array<[label: string, numeric?: boolean]>; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {headers.map(([label, numeric]) => (
              <th key={label} scope="col" class={numeric ? "num" : undefined}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A list's rows: the first page as loaded, then "Show more" while there is a next cursor. When a refresh brings a new
 * first page, the pages shown after it are dropped.
 */
export function PagedList<T>({
  programId,
  list,
  first,
  empty,
  onError,
  children,
}: {
  programId: number;
  list: string;
  first: Page<T>;
  empty: string;
  onError: (error: unknown) => void;
  children: (rows: T[]) => ComponentChildren;
}) {
  const [more, setMore] = useState<{ from: Page<T>; rows: T[]; cursor: string | null }>({ from: first, rows: [], cursor: first.nextCursor });
  const [busy, setBusy] = useState(false);
  const shown = more.from === first ? more : { from: first, rows: [], cursor: first.nextCursor };
  const rows = [...first.data, ...shown.rows];
  const showMore = async () => {
    if (!shown.cursor) return;
    setBusy(true);
    try {
      const page = await listPage<T>(programId, list, shown.cursor);
      setMore({ from: first, rows: [...shown.rows, ...page.data], cursor: page.nextCursor });
    } catch (e) {
      onError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      {rows.length === 0 ? <p class="muted">{empty}</p> : children(rows)}
      {shown.cursor && (
        <p>
          <button type="button" class="secondary" disabled={busy} onClick={showMore}>
            {t("list.showMore")}
          </button>
        </p>
      )}
    </div>
  );
}
