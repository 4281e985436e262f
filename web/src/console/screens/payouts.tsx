/** Payouts (to be written). */
import { Screen } from "../screen";

export function Payouts() {
  return (
    <Screen title="Payouts">
      <p>Coming next.</p>
    </Screen>
  );
}
