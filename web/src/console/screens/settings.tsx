/** Settings (to be written). */
import { Screen } from "../screen";

export function Settings() {
  return (
    <Screen title="Settings">
      <p>Coming next.</p>
    </Screen>
  );
}
