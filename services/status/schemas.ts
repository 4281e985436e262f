import { z } from "zod";
import { Id } from "../../shared/values";

export const ForProgramInput = z.strictObject({ programId: Id });
