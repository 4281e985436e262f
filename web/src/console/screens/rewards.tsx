/**
 * Rewards (docs/rewards.md): the program's partner groups with their rewards and partners. Who may change the program
 * (programs:write) also creates a group, creates or edits a reward with a live preview in words, archives one and
 * moves a partner to another group; everyone sees what a partner would earn.
 */
import { useEffect, useLayoutEffect, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { Alert, StatusLine } from "../../lib/ui";
import { draftOf, newDraft, RewardEditor, type Draft } from "../rewards/editor";
import { CustomerDiscountForm, EarningsCheck, MovePartnerForm, NewGroupForm } from "../rewards/forms";
import { editButtonId, GroupCards, groupTitleId } from "../rewards/groups";
import { groupOf, loadRewards, partnerName, type Group, type Reward, type RewardsData } from "../rewards/model";
import { Screen } from "../screen";
import { useConsole } from "../session";

/** A new program starts the screen afresh (its data, the editor and what was said). */
export function Rewards() {
  const { program } = useConsole();
  return <RewardsOfProgram key={program.id} />;
}

/** Where the keyboard goes after the next render: an element's id, and the id of what to scroll to the top first. */
interface FocusTarget {
  id: string;
  scrollTo?: string;
}

function RewardsOfProgram() {
  const { settings, can, programPath } = useConsole();
  const currency = settings.currency;
  const canWrite = can("programs:write");
  const [data, setData] = useState<RewardsData>();
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState("");
  const [draft, setDraft] = useState<Draft>(() => newDraft());
  const [editing, setEditing] = useState<Reward | null>(null);
  /** Each new draft or edit mounts the editor anew. */
  const [editorRound, setEditorRound] = useState(0);
  const [focus, setFocus] = useState<FocusTarget | null>(null);

  /** Reads the groups and partners again; undefined (and the error shown) when that failed. */
  const refresh = async (): Promise<RewardsData | undefined> => {
    try {
      const loaded = await loadRewards(programPath);
      setData(loaded);
      setError(null);
      return loaded;
    } catch (e) {
      setError(errorMessage(e));
      return undefined;
    }
  };
  useEffect(() => void refresh(), []);

  // Applied in the same commit as what the action changed, so the focus never waits for a frame.
  useLayoutEffect(() => {
    if (!focus) return;
    if (focus.scrollTo) document.getElementById(focus.scrollTo)?.scrollIntoView({ block: "start" });
    document.getElementById(focus.id)?.focus({ preventScroll: Boolean(focus.scrollTo) });
    setFocus(null);
  }, [focus]);

  const startDraft = (next: Draft, reward: Reward | null) => {
    setDraft(next);
    setEditing(reward);
    setEditorRound((n) => n + 1);
  };
  const addTo = (group: Group) => {
    startDraft(newDraft(group.id), null);
    setFocus({ id: "r-value", scrollTo: "editor-title" });
  };
  const edit = (reward: Reward) => {
    startDraft(draftOf(reward, currency), reward);
    setFocus({ id: "r-event", scrollTo: "editor-title" });
  };
  const cancelEdit = () => {
    if (!editing) return;
    startDraft(newDraft(editing.groupId), null);
    setFocus({ id: editButtonId(editing.id) });
  };
  const saved = async (reward: Reward, edited: boolean) => {
    const loaded = await refresh();
    const group = loaded?.groups.find((g) => g.id === reward.groupId);
    startDraft(newDraft(reward.groupId), null);
    // The keyboard goes to the reward just saved.
    setFocus({ id: editButtonId(reward.id) });
    setSaid(edited ? `Reward #${reward.id} saved as version ${reward.version}.` : `Reward #${reward.id} created in ${group?.name ?? "the group"}.`);
  };
  const archive = async (reward: Reward, group: Group) => {
    if (!window.confirm(`Archive reward #${reward.id} of ${group.name}? It pays nothing from now on; commissions it made are unchanged.`)) return;
    try {
      await api("POST", programPath(`/rewards/${reward.id}/archive`));
    } catch (e) {
      setError(errorMessage(e));
      return;
    }
    if (editing?.id === reward.id) startDraft(newDraft(group.id), null);
    await refresh();
    setFocus({ id: groupTitleId(group.id) });
    setSaid(`Reward #${reward.id} of ${group.name} archived.`);
  };
  const groupCreated = async (group: Group) => {
    await refresh();
    // A new reward goes to the new group by default (an edit keeps its reward's group).
    if (!editing) setDraft((d) => ({ ...d, groupId: String(group.id) }));
    setFocus({ id: groupTitleId(group.id) });
    setSaid(`Group ${group.name} created.`);
  };
  const discountSaved = async (group: Group, removed: boolean) => {
    await refresh();
    setSaid(removed ? `${group.name}: referred customers get no discount now.` : `${group.name}: referred customers get ${group.customerDiscount?.description}.`);
  };
  const moved = async (partnerId: number) => {
    const loaded = await refresh();
    if (loaded) setSaid(`${partnerName(loaded.partners, partnerId)} moved to ${groupOf(loaded.groups, partnerId)?.name ?? "the group"}.`);
  };

  return (
    <Screen title="Rewards">
      <StatusLine text={said} />
      {error && <Alert>{error}</Alert>}
      {!data ? (
        !error && <p class="muted">Loading…</p>
      ) : (
        <>
          <section aria-labelledby="groups-title">
            <h2 id="groups-title">Partner groups and their rewards</h2>
            <p class="muted">
              Every partner is in one group per program: the default group unless moved to another. Editing a reward makes a new version; commissions already made keep the version they were
              computed with.{canWrite ? "" : " Your role can read the rewards; an owner or admin changes them."}
            </p>
            <GroupCards data={data} currency={currency} canWrite={canWrite} onAdd={addTo} onEdit={edit} onArchive={archive} />
          </section>
          {canWrite && (
            <>
              <section aria-labelledby="editor-title">
                <RewardEditor
                  key={editorRound}
                  groups={data.groups}
                  currency={currency}
                  draft={draft}
                  update={(patch) => setDraft((d) => ({ ...d, ...patch }))}
                  editing={editing}
                  onSaved={saved}
                  onCancel={cancelEdit}
                />
              </section>
              <NewGroupForm data={data} currency={currency} onCreated={groupCreated} />
              <MovePartnerForm data={data} onMoved={moved} />
              <CustomerDiscountForm data={data} onSaved={discountSaved} />
            </>
          )}
          <EarningsCheck data={data} currency={currency} />
        </>
      )}
    </Screen>
  );
}
