/** Commissions (to be written). */
import { Screen } from "../screen";

export function Commissions() {
  return (
    <Screen title="Commissions">
      <p>Coming next.</p>
    </Screen>
  );
}
