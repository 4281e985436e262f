// jest's globalSetup: bundles the console and the portal into web/dist before any test starts the gateway.
import { buildWeb } from "../../bin/build-web.mjs";

export default async function globalSetup() {
  await buildWeb();
}
