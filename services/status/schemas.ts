import { z } from "zod";
import { Id } from "../../shared/values";

export const ForProgramInput = z.strictObject({ programId: Id.meta({ description: "The program's id.", example: 1 }) });
