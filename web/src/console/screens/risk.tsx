/**
 * Risk (issue 49): the conversions the program's fraud rules held, per partner, to clear, reject or ban the partner
 * (Reviews), and the rules themselves, each on or off with its settings (Rules). Each part is a tab and a link
 * (/dashboard/risk, /dashboard/risk/rules, with ?program=ID), so it can be bookmarked and reached with Back.
 */
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { useRoute } from "preact-iso";
import { StatusLine } from "../../lib/ui";
import { Reviews } from "../risk/reviews";
import { RulesForm } from "../risk/rules-form";
import { Screen } from "../screen";
import { screenHref, useConsole } from "../session";

/** The parts, in tab order: [URL segment ("" for the first), tab label, component]. */
const SECTIONS: Array<[string, string, ComponentType<{ say: (text: string) => void }>]> = [
  ["", "Reviews", Reviews],
  ["rules", "Rules", RulesForm],
];

export function Risk() {
  const { params } = useRoute();
  const { program } = useConsole();
  const [said, setSaid] = useState("");
  const wanted = params.section ?? "";
  // What an action said belongs to its tab.
  useEffect(() => setSaid(""), [wanted, program.id]);
  const current = SECTIONS.find(([slug]) => slug === wanted);
  const Section = current?.[2];
  return (
    <Screen title="Risk">
      <nav class="tabs" aria-label="Risk sections">
        {SECTIONS.map(([slug, label]) => (
          <a key={slug} href={screenHref(slug ? `/risk/${slug}` : "/risk", program.id)} aria-current={slug === current?.[0] ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <StatusLine text={said} />
      {Section ? <Section key={`${wanted}-${program.id}`} say={setSaid} /> : <p>There is no part “{wanted}” of Risk. Pick one of the tabs above.</p>}
    </Screen>
  );
}
