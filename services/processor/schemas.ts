import { z } from "zod";
import { Id, ProductRef } from "../../shared/values";

/** The gateway hands over the raw body (as text) and the signature header. */
export const WebhookInput = z.object({ payload: z.string().max(1_048_576), signature: z.string().max(4096).optional() });

export const GetEventInput = z.strictObject({ eventId: z.string().min(1).max(255).meta({ description: "The processor's event id.", example: "evt_1" }) });

export const ListEventsInput = z.strictObject({
  status: z.enum(["processing", "processed", "failed", "ignored", "rejected"]).optional().meta({ description: "Only events in this state.", example: "rejected" }),
  limit: z.coerce.number().int().min(1).max(500).default(50).meta({ description: "At most this many events.", example: 20 }),
});

const ProgramId = Id.meta({ description: "The program's id.", example: 1 });

export const ProgramIdInput = z.strictObject({ programId: ProgramId });

export const SetApiKeyInput = z.strictObject({
  programId: ProgramId,
  restrictedKey: z
    .string()
    .trim()
    .regex(/^rk_(live|test)_[A-Za-z0-9]{10,240}$/, "must be a Stripe restricted key (rk_live_... or rk_test_...); a secret key (sk_...) is refused: it can do far more than read")
    .meta({ description: "A restricted key of the program's Stripe account with read access to Checkout Sessions, Products and Prices.", example: "rk_test_51Hx0aExampleKey" }),
});

export const CheckProductsInput = z.strictObject({
  programId: ProgramId,
  productIds: z.array(ProductRef).max(100),
  priceIds: z.array(ProductRef).max(100),
});
