import type { z } from "zod";
import type { buildTrackingStatus } from "./tracking-status";
import type * as S from "./schemas";

/** The status service's actions as a caller sees them (callers use `call` from services/bus.ts). */
export interface StatusContract {
  "status.forProgram": { params: z.input<typeof S.ForProgramInput>; result: ReturnType<typeof buildTrackingStatus> };
}
