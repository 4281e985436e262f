/**
 * Settings (docs/dashboard-api.md, "Settings", "Team (API)", "Webhook endpoints (API)"; docs/payouts.md, "PayPal";
 * docs/processor-webhooks.md, "Paddle Billing"):
 * one screen with a tab per section. Each tab is a link (/dashboard/settings/<section>?program=ID), so a section can
 * be bookmarked, shared and reached with Back; without a section the program's own settings show.
 */
import type { ComponentType } from "preact";
import { useRoute } from "preact-iso";
import { Activity } from "../settings/activity";
import { ApiKeys } from "../settings/api-keys";
import { PaddleSettings } from "../settings/paddle";
import { PaypalSettings } from "../settings/paypal";
import { ProgramSettingsSection } from "../settings/program";
import { StripeSettings } from "../settings/stripe";
import { Team } from "../settings/team";
import { Webhooks } from "../settings/webhooks";
import { Screen } from "../screen";
import { screenHref, useConsole } from "../session";

/** The sections, in tab order: [URL segment, tab label, component]. */
const SECTIONS: Array<[string, string, ComponentType]> = [
  ["program", "Program", ProgramSettingsSection],
  ["api-keys", "API keys", ApiKeys],
  ["webhooks", "Webhooks", Webhooks],
  ["stripe", "Stripe", StripeSettings],
  ["paddle", "Paddle", PaddleSettings],
  ["paypal", "PayPal payouts", PaypalSettings],
  ["team", "Team", Team],
  ["activity", "Activity", Activity],
];

export function Settings() {
  const { params } = useRoute();
  const { program } = useConsole();
  const wanted = params.section || "program";
  const current = SECTIONS.find(([slug]) => slug === wanted);
  const Section = current?.[2];
  return (
    <Screen title="Settings">
      <nav class="tabs" aria-label="Settings sections">
        {SECTIONS.map(([slug, label]) => (
          <a key={slug} href={screenHref(slug === "program" ? "/settings" : `/settings/${slug}`, program.id)} aria-current={slug === current?.[0] ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {Section ? <Section key={`${wanted}-${program.id}`} /> : <p>There is no settings section “{wanted}”. Pick one of the sections above.</p>}
    </Screen>
  );
}
