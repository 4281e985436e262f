/** Rewards (to be written). */
import { Screen } from "../screen";

export function Rewards() {
  return (
    <Screen title="Rewards">
      <p>Coming next.</p>
    </Screen>
  );
}
