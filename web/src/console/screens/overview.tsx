/** Overview (to be written). */
import { Screen } from "../screen";

export function Overview() {
  return (
    <Screen title="Overview">
      <p>Coming next.</p>
    </Screen>
  );
}
