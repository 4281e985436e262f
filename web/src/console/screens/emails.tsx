/**
 * Emails (docs/partners.md, "Emails"): the program's partner email settings (reply-to, how often partners hear of new
 * commissions, the monthly summary) and the log of every email to its partners with its state, where a failed one is
 * sent again.
 */
import { EmailLog } from "../emails/log";
import { EmailSettingsForm } from "../emails/settings-form";
import { Screen } from "../screen";

export function Emails() {
  return (
    <Screen title="Partner emails">
      <EmailSettingsForm />
      <EmailLog />
    </Screen>
  );
}
