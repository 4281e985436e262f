/** Partners (to be written). */
import { Screen } from "../screen";

export function Partners() {
  return (
    <Screen title="Partners">
      <p>Coming next.</p>
    </Screen>
  );
}
