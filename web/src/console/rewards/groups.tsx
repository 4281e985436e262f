/** The program's partner groups, each with its settings, its rewards (edit, archive, add one) and its partners. */
import { count } from "../../lib/format";
import { customerDiscountWords, describeReward, groupSummary, partnerName, showsDefaultBadge, type Group, type Reward, type RewardsData } from "./model";

/** The ids the screen moves the keyboard to. */
export const groupTitleId = (groupId: number): string => `group-${groupId}-title`;
export const editButtonId = (rewardId: number): string => `edit-reward-${rewardId}`;

interface Actions {
  /** Empty the editor for a new reward of this group. */
  onAdd: (group: Group) => void;
  onEdit: (reward: Reward) => void;
  onArchive: (reward: Reward, group: Group) => void;
}

export function GroupCards({ data, currency, canWrite, ...actions }: { data: RewardsData; currency: string; canWrite: boolean } & Actions) {
  return (
    <div class="groups">
      {data.groups.map((g) => (
        <GroupCard key={g.id} group={g} data={data} currency={currency} canWrite={canWrite} {...actions} />
      ))}
    </div>
  );
}

function GroupCard({ group: g, data, currency, canWrite, onAdd, onEdit, onArchive }: { group: Group; data: RewardsData; currency: string; canWrite: boolean } & Actions) {
  const titleId = groupTitleId(g.id);
  return (
    <article class="group" data-group={g.id} aria-labelledby={titleId}>
      <h3 id={titleId} tabIndex={-1}>
        {g.name}
        {showsDefaultBadge(g) && (
          <>
            {" "}
            <span class="badge muted">Default group</span>
          </>
        )}
      </h3>
      <p class="muted">{groupSummary(g, currency)}</p>
      <p class="muted" data-discount={g.id}>
        {customerDiscountWords(g.customerDiscount)}
      </p>
      <h4>Rewards</h4>
      {g.rewards.length > 0 ? (
        <ul class="rows" aria-label={`Rewards of ${g.name}`}>
          {g.rewards.map((r) => (
            <li key={r.id} data-reward={r.id}>
              <span>
                <span class="terms">{describeReward(r, currency)}</span> <span class="muted version">{`#${r.id} · version ${r.version}`}</span>
              </span>
              {canWrite && (
                <span class="actions">
                  <button type="button" id={editButtonId(r.id)} aria-label={`Edit reward #${r.id} of ${g.name}`} onClick={() => onEdit(r)}>
                    Edit
                  </button>
                  <button type="button" class="secondary" aria-label={`Archive reward #${r.id} of ${g.name}`} onClick={() => onArchive(r, g)}>
                    Archive
                  </button>
                </span>
              )}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No reward: this group's partners earn nothing.</p>
      )}
      {canWrite && (
        <p>
          <button type="button" class="secondary" aria-label={`Add a reward to ${g.name}`} onClick={() => onAdd(g)}>
            Add a reward
          </button>
        </p>
      )}
      <h4>Partners</h4>
      <Members group={g} data={data} />
    </article>
  );
}

function Members({ group: g, data }: { group: Group; data: RewardsData }) {
  if (g.isDefault) {
    const moved = new Set(data.groups.filter((x) => !x.isDefault).flatMap((x) => x.memberIds));
    const rest = data.partners.filter((p) => !moved.has(p.partnerId)).length;
    return <p class="members muted">{`Every partner not moved to another group (${count(rest)} now).`}</p>;
  }
  if (g.memberIds.length === 0) return <p class="members muted">No partner yet.</p>;
  const names = g.memberIds.map((id) => partnerName(data.partners, id)).sort((a, b) => a.localeCompare(b));
  const more = g.members > g.memberIds.length ? `, and ${count(g.members - g.memberIds.length)} more` : "";
  return <p class="members">{`${names.join(", ")}${more}`}</p>;
}
