/**
 * Settings, Team: the members of the program's workspace with their roles (docs/dashboard-api.md, "Team"). Every
 * member sees the list; owners (members:write) change roles, remove members (asked once more), invite by email with
 * a role and withdraw open invitations. The API's refusals (the last owner, a member's email) are shown as it says them.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ROLES, type Role } from "../../../../shared/domain/permissions";
import { api, errorMessage } from "../../lib/api";
import { dateTime, day } from "../../lib/format";
import { Alert, Field, SelectField, StatusLine, useAsync } from "../../lib/ui";
import { useConsole } from "../session";

interface Member {
  userId: number;
  name: string | null;
  email: string;
  role: Role;
  joinedAt: string;
}

interface Invitation {
  id: number;
  email: string;
  role: Role;
  status: "pending" | "expired";
  createdAt: string;
  expiresAt: string;
}

/** What each role may do (shared/domain/permissions.ts), in a few words. */
const ROLE_TEXT: Record<Role, string> = {
  owner: "everything, the team included",
  admin: "settings, partners and payouts",
  developer: "reads everything, changes nothing",
  viewer: "reads everything, changes nothing",
  billing: "payouts, without tracking data",
};
const roleName = (role: Role): string => role.charAt(0).toUpperCase() + role.slice(1);
const ROLE_OPTIONS: Array<[string, string]> = ROLES.map((r) => [r, `${roleName(r)}: ${ROLE_TEXT[r]}`]);

const memberLabel = (m: Member): string => m.name || m.email;

export function Team() {
  const { me, program, can } = useConsole();
  const owner = can("members:write");
  const base = `/api/workspaces/${program.workspaceId}`;
  const [round, setRound] = useState(0);
  const members = useAsync(() => api<{ data: Member[] }>("GET", `${base}/members`), [base, round]);
  const invitations = useAsync(() => (owner ? api<{ data: Invitation[] }>("GET", `${base}/invitations`) : Promise.resolve({ data: [] })), [base, owner, round]);
  const [roles, setRoles] = useState<Record<number, Role>>({});
  const [confirming, setConfirming] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState("");
  const [inviteError, setInviteError] = useState<string | null>(null);
  const [invited, setInvited] = useState("");
  const [inviteRole, setInviteRole] = useState<Role>("viewer");
  const [busy, setBusy] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (confirming !== null) cancel.current?.focus();
  }, [confirming]);

  const act = async (work: () => Promise<string>) => {
    setError(null);
    setSaid("");
    try {
      setSaid(await work());
      setRound((n) => n + 1);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  /** Cancel: the Remove button is back, with the focus. */
  const stopConfirming = (userId: number) => {
    setConfirming(null);
    requestAnimationFrame(() => document.getElementById(`remove-member-${userId}`)?.focus());
  };

  const changeRole = (m: Member) =>
    act(async () => {
      const role = roles[m.userId] ?? m.role;
      try {
        await api("PATCH", `${base}/members/${m.userId}`, { role });
      } finally {
        // Changed or refused, the select shows the member's role as it is now.
        setRoles(({ [m.userId]: _done, ...rest }) => rest);
      }
      return m.userId === me.user.id ? `Your role is now ${role}: reload the page to see what it allows.` : `${memberLabel(m)} is now ${role}.`;
    });
  const remove = (m: Member) =>
    act(async () => {
      await api("DELETE", `${base}/members/${m.userId}`);
      setConfirming(null);
      return `${memberLabel(m)} was removed from the workspace.`;
    });
  const revoke = (i: Invitation) =>
    act(async () => {
      await api("DELETE", `${base}/invitations/${i.id}`);
      return `The invitation to ${i.email} was withdrawn: its link no longer works.`;
    });

  const invite = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setInviteError(null);
    setInvited("");
    setBusy(true);
    try {
      const answer = await api<Invitation & { replaced: boolean }>("POST", `${base}/invitations`, { email: String(data.get("email") ?? "").trim(), role: inviteRole });
      setInvited(
        `Invitation sent to ${answer.email} as ${answer.role}. The link in the mail works once, until ${dateTime(answer.expiresAt)}.${answer.replaced ? " It replaces the earlier invitation, whose link no longer works." : ""}`,
      );
      (form.elements.namedItem("email") as HTMLInputElement).value = "";
      setRound((n) => n + 1);
    } catch (e) {
      setInviteError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <section aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <p>Members of this workspace see all of its programs; their role decides what they may change.</p>
        {!owner && <p class="muted">Read-only: your role ({program.role}) cannot invite, change roles or remove members; an owner can.</p>}
        {members.error && <Alert>{members.error}</Alert>}
        <div class="table-wrap">
          <table aria-busy={members.loading}>
            <caption class="visually-hidden">Members of the workspace, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                {owner && <th scope="col">Action</th>}
              </tr>
            </thead>
            <tbody>
              {members.data?.data.map((m) => (
                <tr key={m.userId} data-member={m.userId}>
                  <td>
                    {m.name ?? "—"}
                    {m.userId === me.user.id && (
                      <>
                        {" "}
                        <span class="muted">(you)</span>
                      </>
                    )}
                  </td>
                  <td class="terms">{m.email}</td>
                  <td>
                    {owner ? (
                      <span class="actions">
                        <select
                          aria-label={`Role of ${memberLabel(m)}`}
                          value={roles[m.userId] ?? m.role}
                          onChange={(event) => setRoles({ ...roles, [m.userId]: (event.currentTarget as HTMLSelectElement).value as Role })}
                        >
                          {ROLES.map((r) => (
                            <option key={r} value={r}>
                              {roleName(r)}
                            </option>
                          ))}
                        </select>
                        <button
                          type="button"
                          class="secondary"
                          disabled={(roles[m.userId] ?? m.role) === m.role}
                          onClick={() => changeRole(m)}
                          aria-label={`Save the role of ${memberLabel(m)}`}
                        >
                          Save role
                        </button>
                      </span>
                    ) : (
                      roleName(m.role)
                    )}
                  </td>
                  <td>{day(m.joinedAt)}</td>
                  {owner && (
                    <td>
                      {confirming === m.userId ? (
                        <div class="confirm" role="group" aria-label={`Remove ${memberLabel(m)}?`}>
                          <p>Remove {memberLabel(m)} from the workspace? Their account stays; they lose access at once.</p>
                          <span class="actions">
                            <button type="button" class="secondary" ref={cancel} onClick={() => stopConfirming(m.userId)}>
                              Cancel
                            </button>
                            <button type="button" onClick={() => remove(m)}>
                              Yes, remove
                            </button>
                          </span>
                        </div>
                      ) : (
                        <button type="button" class="secondary" id={`remove-member-${m.userId}`} onClick={() => setConfirming(m.userId)} aria-label={`Remove ${memberLabel(m)}`}>
                          Remove
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {error && <Alert>{error}</Alert>}
        <StatusLine text={said} />
      </section>

      {owner && (
        <section aria-labelledby="invite-title">
          <h2 id="invite-title">Invite someone</h2>
          <form class="controls invite" onSubmit={invite} aria-labelledby="invite-title">
            <Field label="Email to invite" name="email" type="email" required autocomplete="off" />
            <SelectField label="Role" name="role" options={ROLE_OPTIONS} value={inviteRole} onChange={(event) => setInviteRole((event.currentTarget as HTMLSelectElement).value as Role)} />
            <div>
              <button type="submit" disabled={busy}>
                Send invitation
              </button>
            </div>
          </form>
          <p class="hint muted">They get a mail with a link that works once. Inviting the same email again replaces the earlier invitation.</p>
          {inviteError && <Alert>{inviteError}</Alert>}
          <StatusLine text={invited} />
        </section>
      )}

      {owner && (
        <section aria-labelledby="invitations-title">
          <h2 id="invitations-title">Open invitations</h2>
          {invitations.error && <Alert>{invitations.error}</Alert>}
          {invitations.data && invitations.data.data.length === 0 ? (
            <p class="muted">No open invitation.</p>
          ) : (
            <div class="table-wrap">
              <table aria-busy={invitations.loading}>
                <caption class="visually-hidden">Open invitations, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Email</th>
                    <th scope="col">Role</th>
                    <th scope="col">Status</th>
                    <th scope="col">Sent</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Action</th>
                  </tr>
                </thead>
                <tbody>
                  {invitations.data?.data.map((i) => (
                    <tr key={i.id} data-invitation={i.id}>
                      <td class="terms">{i.email}</td>
                      <td>{roleName(i.role)}</td>
                      <td>{i.status === "expired" ? <span class="warn">Expired: invite again</span> : "Pending"}</td>
                      <td>{dateTime(i.createdAt)}</td>
                      <td>{dateTime(i.expiresAt)}</td>
                      <td>
                        <button type="button" class="secondary" onClick={() => revoke(i)} aria-label={`Revoke the invitation to ${i.email}`}>
                          Revoke
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      )}
    </>
  );
}
