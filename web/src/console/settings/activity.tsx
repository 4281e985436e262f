/**
 * Settings, Activity: the program's activity log (docs/dashboard-api.md, "Activity"), every change made to it by a
 * team member, an API key or the operator, newest first, filtered by who made it and what it changed. Owners and
 * admins (programs:write) read it; the others are told so.
 */
import { useState } from "preact/hooks";
import { api } from "../../lib/api";
import { dateTime } from "../../lib/format";
import { FilterForm, PagedTable, SelectField, useAsync, type Column } from "../../lib/ui";
import { useConsole } from "../session";
import { ACTIVITY_KINDS, type ActivityEntry as ActivityRecord, type ActivityKind } from "../../../../shared/domain/audit";

/** An entry as the API answers it. */
type ActivityEntry = Omit<ActivityRecord, "createdAt"> & { createdAt: string };

const KIND_TEXT: Record<ActivityKind, string> = {
  partners: "Partners",
  commissions: "Commissions",
  payouts: "Payouts",
  rewards: "Rewards and groups",
  coupons: "Coupon codes",
  webhooks: "Webhook endpoints",
  fraud: "Fraud rules and reviews",
  api_keys: "API keys",
  settings: "Settings",
};

function actorText(e: ActivityEntry): string {
  if (e.actorType === "operator") return "Operator";
  if (e.actorType === "api_key") return `API key ${e.actorLabel ?? `#${e.actorId}`}`;
  return e.actorLabel ?? `Member #${e.actorId}`;
}

const COLUMNS: Array<Column<ActivityEntry>> = [
  { header: "When", cell: (e) => dateTime(e.createdAt) },
  { header: "Who", cell: actorText },
  { header: "What", cell: (e) => `${KIND_TEXT[e.kind]}: ${e.summary}` },
  {
    header: "Request",
    cell: (e) => (
      <>
        <code>
          {e.method} {e.location ?? e.path}
        </code>{" "}
        <span class="muted">({e.status})</span>
      </>
    ),
  },
  { header: "From", cell: (e) => [e.clientAddress, e.userAgent].filter(Boolean).join(", ") || "—" },
];

export function Activity() {
  const { program, programPath, can } = useConsole();
  const allowed = can("programs:write");
  const [filters, setFilters] = useState<Record<string, string>>({});
  // Who may have made a change: the workspace's members and the program's keys (retired ones too), and the operator.
  const actors = useAsync(async () => {
    if (!allowed) return [];
    const [members, keys] = await Promise.all([
      api<{ data: Array<{ userId: number; email: string; name: string | null }> }>("GET", `/api/workspaces/${program.workspaceId}/members`),
      api<{ data: Array<{ id: number; name: string | null; prefix: string }> }>("GET", programPath("/api-keys")),
    ]);
    return [
      ...members.data.map((m): [string, string] => [`user:${m.userId}`, m.name ? `${m.name} (${m.email})` : m.email]),
      ...keys.data.map((k): [string, string] => [`api_key:${k.id}`, `API key ${k.name ?? k.prefix}`]),
      ["operator", "Operator"] as [string, string],
    ];
  }, [program.id, allowed]);

  if (!allowed) return <p>Your role ({program.role}) cannot read the activity log; an owner or admin can.</p>;
  return (
    <section aria-labelledby="activity-title">
      <h2 id="activity-title">Activity</h2>
      <p class="muted">Every change made to this program: in this console, with an API key or by the operator. Tracked clicks, leads and sales are not listed here.</p>
      <FilterForm label="Filter activity" onApply={setFilters}>
        <SelectField label="Who" name="actor" options={[["", "Anyone"], ...(actors.data ?? [])]} />
        <SelectField label="What" name="kind" options={[["", "Every kind"], ...ACTIVITY_KINDS.map((k): [string, string] => [k, KIND_TEXT[k]])]} />
      </FilterForm>
      <PagedTable<ActivityEntry> caption="Activity" path={programPath("/activity")} filters={filters} rowKey={(e) => e.id} empty="No change matches these filters." columns={COLUMNS} />
    </section>
  );
}
