/**
 * "Which partner?" for the Sales, Commissions and Payouts lists: a person types a name, email or referral code; the
 * partners list's search (q) finds the partner, and the list is filtered by that partner's id. Several matches are
 * offered as choices.
 */
import { useState } from "preact/hooks";
import { api, errorMessage, query, type Page } from "../lib/api";
import { Alert } from "../lib/ui";
import { useConsole } from "./session";

export interface PartnerMatch {
  partnerId: number;
  name: string;
  email: string | null;
  referralCode: string;
}

/** A partner's name as lists show it: name, else email, else their id. */
export const partnerLabel = (p: { partnerId: number; name?: string | null; email?: string | null }): string => p.name || p.email || `Partner #${p.partnerId}`;

export function usePartnerFilter(): {
  partnerId: number | undefined;
  resolve: (text: string) => Promise<void>;
  view: preact.JSX.Element | null;
} {
  const { programPath } = useConsole();
  const [chosen, setChosen] = useState<PartnerMatch | undefined>();
  const [choices, setChoices] = useState<PartnerMatch[]>([]);
  const [error, setError] = useState<string | null>(null);

  const resolve = async (text: string) => {
    setError(null);
    setChoices([]);
    const q = text.trim();
    if (!q) return setChosen(undefined);
    try {
      const page = await api<Page<PartnerMatch>>("GET", programPath(`/partners${query({ q, limit: 10 })}`));
      if (page.data.length === 0) setError(`No partner's name, email or referral code contains “${q}”.`);
      else if (page.data.length === 1) setChosen(page.data[0]);
      else setChoices(page.data);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const view =
    error || choices.length > 0 || chosen ? (
      <div class="partner-filter">
        {error && <Alert>{error}</Alert>}
        {choices.length > 0 && (
          <fieldset>
            <legend>Several partners match: pick one</legend>
            {choices.map((p) => (
              <button key={p.partnerId} type="button" class="secondary" onClick={() => (setChosen(p), setChoices([]))}>
                {partnerLabel(p)} · {p.referralCode}
              </button>
            ))}
          </fieldset>
        )}
        {chosen && (
          <p>
            Showing <strong>{partnerLabel(chosen)}</strong> ({chosen.referralCode}){" "}
            <button type="button" class="secondary" onClick={() => setChosen(undefined)}>
              Show every partner
            </button>
          </p>
        )}
      </div>
    ) : null;
  return { partnerId: chosen?.partnerId, resolve, view };
}
