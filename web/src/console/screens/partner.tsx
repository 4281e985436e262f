/** Partner (to be written). */
import { Screen } from "../screen";

export function PartnerDetail() {
  return (
    <Screen title="Partner">
      <p>Coming next.</p>
    </Screen>
  );
}
