/** The partner portal (to be ported). */
import { render } from "preact";

render(
  <main>
    <h1>Partner portal</h1>
  </main>,
  document.getElementById("app") as HTMLElement,
);
